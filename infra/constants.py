"""Names and numbers of memlane's AWS deployment, in one place.

Only the standard library (and memlane's ground floor, which imports nothing else) is imported
here: layers/build.py reads the Python version and the layer name from this module without
needing aws-cdk-lib.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE as DEFAULT_RATE_LIMIT_PER_MINUTE

SERVICE_NAME = "memlane"
METRICS_NAMESPACE = "memlane"

# --------------------------------------------------------------------------- Lambda runtime

# The layer's wheels are built for this CPython ABI (layers/build.py), so the runtime and the
# layer must change together.
LAMBDA_PYTHON_VERSION = "3.12"
ARCHITECTURES = ("arm64", "x86_64")
# pip --platform tags per architecture. Lambda's python3.12 runtime is Amazon Linux 2023 (glibc
# 2.34), so manylinux2014 and manylinux_2_28 wheels both load.
PIP_PLATFORMS = {
    "arm64": ("manylinux2014_aarch64", "manylinux_2_28_aarch64"),
    "x86_64": ("manylinux2014_x86_64", "manylinux_2_28_x86_64"),
}

# The dependency layer: layers/<LAYER_NAME>/requirements.txt is built into
# layers/build/<LAYER_NAME>/python (+ layers/build/<LAYER_NAME>.json describing the build).
LAYER_NAME = "deps"
LAYERS_DIR = "layers"
LAYER_BUILD_DIR = "layers/build"
# Top-level folders of the repository copied into the function code asset, so that the import
# paths on Lambda (`functions.api.handler`, `memlane.…`) are the ones the tests use.
FUNCTION_SOURCE_DIRS = ("memlane", "functions")
FUNCTION_ASSET_STAGING_DIR = "build/lambda-src"
# Benchmarks, evaluations and load tests live in bench/, outside FUNCTION_SOURCE_DIRS, so the code
# asset never holds them (tests/infra/test_infra_packaging.py checks it).
FUNCTION_ASSET_IGNORE = ("__pycache__", "*.pyc", "*.pyo", ".mypy_cache", ".pytest_cache", "*.egg-info")

# Context key that points synth at a prebuilt layer directory (tests pass a tiny one).
CONTEXT_LAYER_ASSET = "layer_asset"

LOG_LEVEL = "INFO"


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda entry point. `construct_id` is also the readable part of its physical name."""

    construct_id: str
    handler: str
    description: str
    memory_mb: int
    timeout_s: int
    # On the request path a client waits for the cold start: no X-Ray SDK there by default
    # (functions/_tracing.py, cdk.json `xray_sdk_on_request_path`).
    request_path: bool = False


API_FUNCTION = FunctionSpec(
    "ApiFunction",
    "functions.api.handler.handler",
    "memlane HTTP API: every route, one resolver",
    1024,
    28,
    request_path=True,
)
AUTHORIZER_FUNCTION = FunctionSpec(
    "AuthorizerFunction",
    "functions.authorizer.handler.handler",
    "REQUEST authorizer: hashed API keys",
    512,
    10,
    request_path=True,
)
KEYS_FUNCTION = FunctionSpec(
    "KeysFunction", "functions.admin_keys.handler.handler", "Admin: create, list and revoke API keys", 512, 30
)
INGEST_CONSUMER_FUNCTION = FunctionSpec(
    "IngestConsumerFunction",
    "functions.ingest_consumer.handler.handler",
    "Ingest queue consumer: starts one ingestion execution per document",
    256,
    30,
)
PREPARE_FUNCTION = FunctionSpec(
    "PrepareFunction",
    "functions.steps.prepare.handler",
    "Ingestion step: summary, tags and chunks of a large document",
    1536,
    120,
)
EMBED_FUNCTION = FunctionSpec(
    "EmbedFunction", "functions.steps.embed.handler", "Ingestion step: embed chunks", 1024, 300
)
WRITE_FUNCTION = FunctionSpec(
    "WriteFunction",
    "functions.steps.write.handler",
    "Ingestion step: chunks into search, the document ready",
    1024,
    120,
)
MARK_FAILED_FUNCTION = FunctionSpec(
    "MarkFailedFunction",
    "functions.steps.mark_failed.handler",
    "Ingestion: record why a document failed",
    512,
    30,
)
FORGET_FUNCTION = FunctionSpec(
    "ForgetFunction",
    "functions.forget_job.handler.handler",
    "Hourly: remove expired documents everywhere",
    1024,
    300,
)
REFRESH_FUNCTION = FunctionSpec(
    "RefreshFunction", "functions.refresh_job.handler.handler", "Daily: refresh documentation sets", 512, 300
)
PAGE_WORKER_FUNCTION = FunctionSpec(
    "PageWorkerFunction",
    "functions.page_worker.handler.handler",
    "Crawl: fetch one documentation page",
    1024,
    120,
)

EXTRACT_FUNCTION = FunctionSpec(
    "ExtractFunction",
    "functions.steps.extract.handler",
    "Ingestion step: read media (Textract OCR here, or hand a recording to Amazon Transcribe)",
    1536,
    900,
)
TRANSCRIBED_FUNCTION = FunctionSpec(
    "TranscribedFunction",
    "functions.steps.transcribed.handler",
    "Ingestion: store the transcript an Amazon Transcribe job wrote",
    512,
    120,
)
# How often the workflow asks Amazon Transcribe whether a job is done (no Lambda waits on it).
TRANSCRIBE_POLL_SECONDS = 20
# Transcribe job names memlane starts (memlane.documents.workflow.transcription_job_name): the IAM scope.
TRANSCRIBE_JOB_PATTERN = "memlane-*"
MEDIA_PREFIX = "media/"

CONNECTION_SCHEDULE_FUNCTION = FunctionSpec(
    "ConnectionScheduleFunction",
    "functions.connection_schedule.handler.handler",
    "Every 15 minutes: send due connections to the sync queue",
    256,
    60,
)
CONNECTION_SYNC_FUNCTION = FunctionSpec(
    "ConnectionSyncFunction",
    "functions.connection_sync.handler.handler",
    "Connections: sync one connection (GitHub, Notion, Google Drive, Slack, X) into memory",
    1024,
    900,
)

EXTRACTION_CONSUMER_FUNCTION = FunctionSpec(
    "ExtractionConsumerFunction",
    "functions.extract_consumer.handler.handler",
    "Conversations: draw facts from one conversation with the LLM and reconcile them",
    1024,
    300,
)

# The ingestion workflow, in order: (state name, function). Extract is followed by the Transcribe
# job's states when a recording needs one (infra/constructs/ingestion.py).
INGESTION_STEPS = (
    ("Extract", EXTRACT_FUNCTION),
    ("Prepare", PREPARE_FUNCTION),
    ("Embed", EMBED_FUNCTION),
    ("Write", WRITE_FUNCTION),
)

ALL_FUNCTIONS = (
    API_FUNCTION,
    AUTHORIZER_FUNCTION,
    KEYS_FUNCTION,
    INGEST_CONSUMER_FUNCTION,
    *(spec for _, spec in INGESTION_STEPS),
    TRANSCRIBED_FUNCTION,
    MARK_FAILED_FUNCTION,
    FORGET_FUNCTION,
    REFRESH_FUNCTION,
    PAGE_WORKER_FUNCTION,
    CONNECTION_SCHEDULE_FUNCTION,
    CONNECTION_SYNC_FUNCTION,
    EXTRACTION_CONSUMER_FUNCTION,
)

# Only in a stack with searchBackend=s3vectors: the vector bucket's custom resource
# (infra/constructs/vector_search.py). Every handler module, whatever the variant: EVERY_FUNCTION.
VECTOR_BUCKET_FUNCTION = FunctionSpec(
    "VectorBucketFunction",
    "functions.vector_bucket.handler.handler",
    "Deploy time: the S3 Vectors bucket's default index mode (ENHANCED); its indexes deleted with a dev stack",
    256,
    300,
)
EVERY_FUNCTION = (*ALL_FUNCTIONS, VECTOR_BUCKET_FUNCTION)

# --------------------------------------------------------------------------- environment

# Names the functions read in addition to those in memlane.adapters.aws.dynamo_schema.
ENV_STAGE = "MEMLANE_STAGE"
ENV_BEDROCK_MODEL_ID = "MEMLANE_BEDROCK_MODEL_ID"
# Recall's optional rerank stage (the API function only, when the `rerank_model` context is set).
ENV_RERANK_MODEL_ID = "MEMLANE_RERANK_MODEL_ID"
ENV_RERANK_TOP_N = "MEMLANE_RERANK_TOP_N"
ENV_USAGE_PLAN_ID = "MEMLANE_USAGE_PLAN_ID"
ENV_USAGE_PLAN_NAME = "MEMLANE_USAGE_PLAN_NAME"
ENV_POWERTOOLS_SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"
ENV_POWERTOOLS_METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
ENV_LOG_LEVEL = "LOG_LEVEL"
ENV_XRAY_SDK = "MEMLANE_XRAY_SDK"  # read by functions/_tracing.py

# --------------------------------------------------------------------------- queues

SQS_BATCH_SIZE = 10  # ingest consumer
PAGE_WORKER_BATCH_SIZE = 5
PAGE_WORKER_MAX_CONCURRENCY = 5  # politeness towards the crawled sites; also bounds Lambda spend
DLQ_MAX_RECEIVE_COUNT = 5
# AWS guidance for SQS event sources: visibility timeout at least six times the function timeout,
# so a message is not redelivered while a (retried) batch is still being worked on.
VISIBILITY_TIMEOUT_FACTOR = 6
QUEUE_RETENTION_DAYS = 7
DLQ_RETENTION_DAYS = 14  # the SQS maximum: time for a human to look

# --------------------------------------------------------------------------- Step Functions

STEP_RETRY_INTERVAL_S = 2
STEP_RETRY_BACKOFF_RATE = 2.0
STEP_RETRY_MAX_ATTEMPTS = 3
# An organization over its daily media budget (Textract pages, Transcribe minutes): Extract is tried
# again every hour for two days, then the document fails with the reason (memlane.documents.media_budget).
MEDIA_BUDGET_RETRY_INTERVAL_S = 3600
MEDIA_BUDGET_RETRY_MAX_ATTEMPTS = 48
# Lambda service-side failures worth retrying (the invoke itself failed, not the handler).
LAMBDA_SERVICE_ERRORS = (
    "Lambda.ClientExecutionTimeoutException",
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
TASK_TIMEOUT_MARGIN_S = 30
# An AWS SDK task (Transcribe's start and poll) that has not answered in this long has failed.
SDK_TASK_TIMEOUT_S = 60
# How long the workflow polls one Amazon Transcribe job (the Wait ⇄ GetTranscriptionJob loop): Transcribe
# takes recordings of up to 4 hours and usually transcribes faster than real time; the rest is for jobs
# queued behind the account's concurrent-job quota.
TRANSCRIPTION_MAX_WAIT_S = 6 * 3600
# The state machine's timeout is the longest path through its definition with every retrier used to
# the end (infra/workflow_budget.py: Extract's hourly media-budget retries dominate: about three days)
# plus this margin; it is computed at synth, never written down.
STATE_MACHINE_TIMEOUT_MARGIN_S = 3600

# --------------------------------------------------------------------------- API

# Per-key throttle applied by the usage plan (the authorizer names the key). 100 requests a minute
# is 100/60 ≈ 1.67 requests a second as a steady rate; the burst absorbs short spikes. The limit is
# DEFAULT_RATE_LIMIT_PER_MINUTE (imported above from memlane.domain.limits: the key store's default).
DEFAULT_BURST_LIMIT = 20
# Stage-wide ceiling protecting the account whatever the number of keys.
STAGE_THROTTLE_RATE_LIMIT = 50
STAGE_THROTTLE_BURST_LIMIT = 100
# Routes that answer without a key (each seed's documented health/spec route).
AUTHORIZER_REFUSALS_ALARM = 50  # refused keys per 5 minutes before the authorizer alarm fires
PAGE_ERRORS_ALARM = 20  # documentation pages that failed per 5 minutes (a site down, not one broken link)
PUBLIC_ROUTES = (("GET", "health"), ("GET", "openapi.json"), ("GET", "healthz"), ("GET", "capabilities"),
                 # OAuth discovery for /mcp (RFC 9728, RFC 8414 and OpenID Connect discovery locations)
                 ("GET", ".well-known/oauth-protected-resource"), ("GET", ".well-known/oauth-protected-resource/mcp"),
                 ("GET", ".well-known/oauth-authorization-server"), ("GET", ".well-known/openid-configuration"),
                 # connections: the provider's redirect (bound by its state), GitHub's signed webhooks
                 ("GET", "oauth/callback"), ("POST", "webhooks/github"))
MCP_RESOURCE = "mcp"
BINARY_MEDIA_TYPES = ("application/pdf", "application/octet-stream", "multipart/form-data")
MIN_COMPRESSION_BYTES = 1024
HEADER_AUTHORIZATION = "Authorization"
HEADER_API_KEY = "x-api-key"

# --------------------------------------------------------------------------- OAuth (Cognito) for /mcp

# Where claude.ai's connectors and Claude Code (`--callback-port 8765`) send the user back.
DEFAULT_OAUTH_CALLBACK_URLS = ("https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback",
                               "http://localhost:8765/callback")
OAUTH_ACCESS_TOKEN_MINUTES = 60
OAUTH_REFRESH_TOKEN_DAYS = 30
OAUTH_PASSWORD_MIN_LENGTH = 12

# --------------------------------------------------------------------------- schedules

FORGET_SCHEDULE_HOURS = 1
REFRESH_SCHEDULE_DAYS = 1
SCHEDULE_RETRY_ATTEMPTS = 3
SCHEDULE_MAX_EVENT_AGE_HOURS = 1
JOB_ASYNC_RETRY_ATTEMPTS = 2
CONNECTION_SYNC_SCHEDULE_MINUTES = 15  # spec §11.3: every 15 minutes for active connections

# --------------------------------------------------------------------------- connections

CONNECTION_SYNC_BATCH_SIZE = 1  # one connection per invocation: a sync may use the whole timeout
CONNECTION_SYNC_MAX_CONCURRENCY = 5  # bounds provider API use and Lambda spend
DEFAULT_CONNECTIONS_SECRET_NAME = "memlane/connections"

# --------------------------------------------------------------------------- storage and search

NONCURRENT_VERSION_EXPIRATION_DAYS = 30
ABORT_INCOMPLETE_UPLOAD_DAYS = 1
# The ingestion workflow's staged text, chunks and vectors (work/…): needed only while it runs.
WORK_PREFIX = "work/"
WORK_EXPIRATION_DAYS = 1
ACCESS_LOG_EXPIRATION_DAYS = 90
SEARCH_INDEX_ALIAS = "memlane-chunks"
BEDROCK_EMBEDDING_MODEL_ID = "amazon.titan-embed-text-v2:0"
# Bedrock Rerank models (docs/deploy.md "Rerank (optional)"): prices, latency and Regions there.
RERANK_MODELS = ("amazon.rerank-v1:0", "cohere.rerank-v3-5:0")
# The LLM that draws facts from conversations (context `llm_model`; "" turns extraction off): a small
# text model on Bedrock's Converse API. Amazon Nova Micro costs $0.035 per million input tokens and
# $0.14 per million output tokens (us-east-1, on-demand; docs/deploy.md works out a conversation).
DEFAULT_LLM_MODEL = "amazon.nova-micro-v1:0"
# Amazon Bedrock's system-defined (cross-Region) inference profiles: an id `<geography>.<model id>`
# is invoked in the deploying Region and routed to one of its geography's destination Regions, so
# the caller needs bedrock:InvokeModel on the profile and on the model in every destination
# ("Supported Regions and models for inference profiles" in the Bedrock user guide; the destinations
# of the Amazon Nova profiles, the widest of the text models memlane suggests). A `global.` profile
# routes to any commercial Region: its model is granted Region-less, as AWS documents.
INFERENCE_PROFILE_DESTINATIONS: dict[str, tuple[str, ...]] = {
    "us": ("us-east-1", "us-east-2", "us-west-2"),
    "eu": ("eu-central-1", "eu-north-1", "eu-west-1", "eu-west-3"),
    "apac": ("ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1", "ap-southeast-2"),
}
GLOBAL_INFERENCE_PROFILE = "global"
# Where DEFAULT_LLM_MODEL (Amazon Nova Micro) is invocable on demand, without a profile.
LLM_ON_DEMAND_REGIONS = ("us-east-1",)
EXTRACTION_BATCH_SIZE = 1  # one conversation per invocation: its LLM calls may take a while
EXTRACTION_MAX_CONCURRENCY = 5  # bounds Bedrock throughput and spend
DEFAULT_RERANK_TOP_N = 30
DEFAULT_OPENAI_SECRET_NAME = "memlane/openai-api-key"
OPENSEARCH_TLS_POLICY = "Policy-Min-TLS-1-2-PFS-2023-10"

# --------------------------------------------------------------------------- observability

ALARM_PERIOD_MINUTES = 5
LOG_RETENTION_DAYS = 30
