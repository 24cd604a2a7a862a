"""The AWS parts of the configuration: what the CDK stack tells each Lambda function through its
environment. `FunctionSettings` is read when a handler module is imported (functions._handler: the
tracer and the metrics), `AwsSettings` once per cold start by the AWS composition
(memlane.adapters.aws.compose). The stack sets them from CDK context (infra/); infra imports these
names, memlane never imports infra.

AWS_REGION is the Lambda runtime's own variable (the SDK reads it too); memlane reads it here for
the clients it signs itself (OpenSearch, Bedrock Rerank).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator
from pydantic_settings import SettingsConfigDict

from memlane.config.settings import ENV_EMBEDDER as ENV_EMBEDDER  # Settings.embedder: every host reads it
from memlane.config.variables import Section, SettingsPart, any_case, variable, variables_of
from memlane.domain.errors import MemlaneError
from memlane.domain.tuning import DEFAULT_RERANK_TOP_N, DEFAULT_RERANK_WEIGHT, MAX_RERANK_TOP_N
from memlane.observability import ENV_METRICS, NAMESPACE

# The names infra sets (memlane.adapters.aws.dynamo_schema and .compose repeat them for infra's imports).
ENV_TABLE = "MEMLANE_TABLE"
ENV_BUCKET = "MEMLANE_BUCKET"
ENV_INGEST_QUEUE_URL = "MEMLANE_INGEST_QUEUE_URL"
ENV_STATE_MACHINE_ARN = "MEMLANE_STATE_MACHINE_ARN"
ENV_SEARCH_ENDPOINT = "MEMLANE_SEARCH_ENDPOINT"
ENV_SEARCH_KIND = "MEMLANE_SEARCH_KIND"
ENV_SEARCH_INDEX_ALIAS = "MEMLANE_SEARCH_INDEX"
ENV_VECTOR_BUCKET = "MEMLANE_VECTOR_BUCKET"
ENV_OPENAI_SECRET_NAME = "MEMLANE_OPENAI_SECRET_NAME"
ENV_PAGE_QUEUE_URL = "MEMLANE_PAGE_QUEUE_URL"
ENV_SYNC_QUEUE_URL = "MEMLANE_SYNC_QUEUE_URL"
ENV_EXTRACTION_QUEUE_URL = "MEMLANE_EXTRACTION_QUEUE_URL"
ENV_LLM_MODEL_ID = "MEMLANE_LLM_MODEL_ID"
ENV_CONNECTIONS_KEY = "MEMLANE_CONNECTIONS_KEY"
ENV_CONNECTIONS_SECRET = "MEMLANE_CONNECTIONS_SECRET"
ENV_WEBAPP_URL = "MEMLANE_WEBAPP_URL"
ENV_BEDROCK_MODEL_ID = "MEMLANE_BEDROCK_MODEL_ID"
ENV_USAGE_PLAN_ID = "MEMLANE_USAGE_PLAN_ID"
ENV_USAGE_PLAN_NAME = "MEMLANE_USAGE_PLAN_NAME"
ENV_STAGE = "MEMLANE_STAGE"
ENV_RERANK_MODEL_ID = "MEMLANE_RERANK_MODEL_ID"
ENV_RERANK_TOP_N = "MEMLANE_RERANK_TOP_N"
ENV_RERANK_WEIGHT = "MEMLANE_RERANK_WEIGHT"
ENV_XRAY_SDK = "MEMLANE_XRAY_SDK"
ENV_METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
DEFAULT_SEARCH_INDEX_ALIAS = "memlane-chunks"
DEFAULT_BEDROCK_MODEL_ID = "amazon.titan-embed-text-v2:0"

_STACK = Section.STACK


class FunctionSettings(SettingsPart):
    """What every Lambda function reads when its handler module is imported (functions._handler)."""

    # The X-Ray SDK costs about 250 ms of cold start (functions/_tracing.py): the request path runs without.
    xray_sdk: bool = variable(
        ENV_XRAY_SDK, True, section=_STACK,
        doc="whether a function loads the X-Ray SDK (Powertools' Tracer); the API and the authorizer run "
            "without it unless the `xray_sdk_on_request_path` context asks for it")
    metrics_namespace: str = variable(
        ENV_METRICS_NAMESPACE, NAMESPACE, section=_STACK,
        doc="the CloudWatch namespace of memlane's metrics (also Powertools' own variable; the alarms watch "
            "this namespace)")


class AwsSettings(FunctionSettings):
    """What the composition of a function reads once per cold start. Every function gets the table,
    bucket, queues, search and embedder settings; some one more (the consumer the state machine, the
    keys function the usage plan, the API the rerank model): `require` refuses one that is missing
    where it is needed."""

    model_config = SettingsConfigDict(frozen=True)

    table: str = variable(ENV_TABLE, section=_STACK, doc="the DynamoDB table: memlane's stack sets it on every function")
    bucket: str = variable(ENV_BUCKET, "", section=_STACK, doc="the S3 bucket of content too large for the table")
    region: str = variable(("AWS_REGION", "AWS_DEFAULT_REGION"), "", section=_STACK,
                           doc="the Region (the Lambda runtime sets it)")
    ingest_queue_url: str = variable(ENV_INGEST_QUEUE_URL, "", section=_STACK, doc="the queue of saves too large "
                                     "for the request")
    page_queue_url: str = variable(ENV_PAGE_QUEUE_URL, "", section=_STACK, doc="the queue of crawled pages")
    sync_queue_url: str = variable(ENV_SYNC_QUEUE_URL, "", section=_STACK, doc="the queue of connection syncs")
    extraction_queue_url: str = variable(
        ENV_EXTRACTION_QUEUE_URL, "", section=_STACK, doc="the queue of fact extraction; unset: extraction is off")
    state_machine_arn: str = variable(ENV_STATE_MACHINE_ARN, "", section=_STACK, doc="the ingestion workflow")
    search_endpoint: str = variable(ENV_SEARCH_ENDPOINT, "", section=_STACK, doc="OpenSearch's endpoint")
    search_kind: Annotated[Literal["managed", "serverless", "s3vectors"], BeforeValidator(any_case)] = variable(
        ENV_SEARCH_KIND, "managed", section=_STACK,
        doc="the search backend: an OpenSearch managed domain, OpenSearch Serverless, or Amazon S3 Vectors "
            "(the `search_backend` context)")
    vector_bucket: str = variable(ENV_VECTOR_BUCKET, "", section=_STACK,
                                  doc="the S3 Vectors bucket (with `MEMLANE_SEARCH_KIND=s3vectors`)")
    search_index_alias: str = variable(ENV_SEARCH_INDEX_ALIAS, DEFAULT_SEARCH_INDEX_ALIAS, section=_STACK,
                                       doc="the search index's alias (on S3 Vectors, the prefix of the index names)")
    bedrock_model_id: str = variable(ENV_BEDROCK_MODEL_ID, DEFAULT_BEDROCK_MODEL_ID, section=_STACK,
                                     doc="the Bedrock embedding model (with `MEMLANE_EMBEDDER=bedrock`)")
    openai_secret_name: str = variable(ENV_OPENAI_SECRET_NAME, "", section=_STACK,
                                       doc="the secret holding the OpenAI key (with `MEMLANE_EMBEDDER=openai`)")
    usage_plan_id: str = variable(ENV_USAGE_PLAN_ID, "", section=_STACK,
                                  doc="API Gateway's per-key usage plan, where the keys function registers keys")
    usage_plan_name: str = variable(ENV_USAGE_PLAN_NAME, "", section=_STACK,
                                    doc="the same plan by name, for the API function (its id is looked up)")
    stage: str = variable(ENV_STAGE, "", section=_STACK,
                          doc="the stage (`dev`, `prod`, …): the tag on the API keys the stack's functions create")
    connections_key: str = variable(ENV_CONNECTIONS_KEY, "", section=_STACK,
                                    doc="the KMS key sealing connection tokens")
    connections_secret: str = variable(ENV_CONNECTIONS_SECRET, "", section=_STACK,
                                       doc="the secret holding the connection providers' OAuth clients")
    webapp_url: str = variable(
        ENV_WEBAPP_URL, "", section=_STACK, shown="the API's URL",
        doc="where the web app's connection confirmation page is, when the app is not served with the API "
            "(CloudFront)")
    rerank_model_id: str = variable(ENV_RERANK_MODEL_ID, "", section=_STACK,
                                    doc="the optional rerank stage's Bedrock model; unset: no rerank stage")
    rerank_top_n: int = variable(ENV_RERANK_TOP_N, DEFAULT_RERANK_TOP_N, ge=1, le=MAX_RERANK_TOP_N,
                                 unit="candidates", section=_STACK, doc="how many fused candidates the reranker reads")
    rerank_weight: float = variable(ENV_RERANK_WEIGHT, DEFAULT_RERANK_WEIGHT, gt=0, le=1, section=_STACK,
                                    doc="the reranker's weight against the fused score (1 replaces it); no CDK "
                                        "context key sets it")
    llm_model_id: str = variable(ENV_LLM_MODEL_ID, "", section=_STACK,
                                 doc="the Bedrock model that extracts facts; unset: extraction is off")
    metrics: Annotated[Literal["all", "alarmed"], BeforeValidator(any_case)] = variable(
        ENV_METRICS, "all", section=_STACK,
        doc="which of memlane's metrics a function publishes: `all`, or `alarmed` (only what an alarm reads; "
            "the `observability=lean` context), since CloudWatch bills each custom metric it receives")

    def require(self, field: str) -> str:
        """The value of `field`, which this function needs; unset, an error naming its variable."""
        value = getattr(self, field)
        if not value:
            name = variables_of(type(self), field)[0]
            raise MemlaneError(f"{name} is not set on this function (infra/constants.py says which functions get it)")
        return str(value)
