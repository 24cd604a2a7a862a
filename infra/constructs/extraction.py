"""Facts from conversations (memlane.conversations) on AWS:

    API (POST /v3/conversations) → extraction queue (SQS + DLQ) → extraction function
                                                                    → Bedrock Converse (one model)
                                                                    → the write path (facts)

* The API function only sends to the queue; the extraction record lives in the content bucket.
* The extraction function reads the messages and writes facts through the one write path: the
  table, the content bucket, the search index and the embedding model, like a save.
* Its LLM is one Bedrock foundation model (context `llm_model`, Amazon Nova Micro by default):
  `bedrock:InvokeModel` on that model's ARN only (Converse is authorised by InvokeModel).
* A message that fails (the model throttled or down) comes back after the visibility timeout, and
  after DLQ_MAX_RECEIVE_COUNT receives it lands in the DLQ, which the observability alarms watch.
* `llm_model: ""` deploys none of this: conversations are saved, and answers say extraction is off.
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.embeddings import ModelAccess, bedrock_model_arns
from infra.constructs.functions import FunctionFactory, function_role
from infra.constructs.grants import grant_send
from infra.constructs.queues import WorkQueue, work_queue
from infra.constructs.search import Search
from infra.constructs.storage import Storage
from memlane.adapters.aws import dynamo_schema as schema


class Extraction(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig, factory: FunctionFactory,
                 storage: Storage, search: Search, models: ModelAccess, ingest_queue: sqs.IQueue) -> None:
        super().__init__(scope, construct_id)
        self.model_id = config.llm_model
        self.model_arns = bedrock_model_arns(self, config.llm_model)
        self.extractions: WorkQueue = work_queue(self, "ExtractionQueue",
                                                 consumer_timeout_s=c.EXTRACTION_CONSUMER_FUNCTION.timeout_s)
        self.environment = {
            schema.ENV_EXTRACTION_QUEUE_URL: self.extractions.queue.queue_url,
            schema.ENV_LLM_MODEL_ID: config.llm_model,
        }
        self.function = factory.create(self, c.EXTRACTION_CONSUMER_FUNCTION, environment=self.environment)
        storage.grant_table_read_write(self.function)
        storage.grant_content_read(self.function)
        storage.grant_content_write(self.function)  # the extraction record, a fact's content
        storage.grant_content_delete(self.function)  # a fact rewritten under 100 KB drops its S3 copy
        # the similar facts a new one is compared with, and the facts it writes (write includes read)
        search.grant_write(function_role(self.function))
        models.grant_embed(self.function)
        models.grant_summarize(self.function)
        self.grant_llm(self.function)
        grant_send(ingest_queue, self.function)  # the write path's safety net
        self.function.add_event_source(event_sources.SqsEventSource(
            self.extractions.queue, batch_size=c.EXTRACTION_BATCH_SIZE, report_batch_item_failures=True,
            max_concurrency=c.EXTRACTION_MAX_CONCURRENCY))

    def grant_llm(self, grantee: iam.IGrantable) -> None:
        """Converse with the one model (bedrock:InvokeModel on its ARNs: the model, or an inference
        profile and the model where it routes; nothing else in Bedrock)."""
        iam.Grant.add_to_principal(grantee=grantee, actions=["bedrock:InvokeModel"], resource_arns=self.model_arns)

    def grant_api(self, api_function: lambda_.Function) -> None:
        """The API queues extractions and says extraction is on (it never calls the model)."""
        for name, value in self.environment.items():
            api_function.add_environment(name, value)
        grant_send(self.extractions.queue, api_function)
