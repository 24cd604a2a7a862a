"""AWS adapters: DynamoDB metadata, S3 content, SQS jobs, Step Functions, OpenSearch, Bedrock.
Nothing here creates a client at import time; every adapter accepts an optional client."""
