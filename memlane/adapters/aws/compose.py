"""Composition on AWS: memlane's ports wired to DynamoDB, S3, SQS, Step Functions, OpenSearch or
S3 Vectors, and Bedrock or OpenAI, from the environment the CDK stack gives every function.

Nothing happens at import time. `build_aws_services()` reads the environment once per cold start
(the result is kept for the life of the execution environment), and every adapter creates its
client on first use. What a function never touches is never built: the search index, the
OpenAI-backed embedder and summarizer are `Lazy` (memlane.lazy), so the authorizer-like paths never
import opensearch-py or openai and never sign a request or read a secret they have no grant for.
`compose_aws` takes ports to use instead of the deployed ones: that is how tests hand in fakes.

On AWS, as locally, a save of up to Settings.inline_max_chars is written in the API function's
request (201); only larger ones go through the SQS queue and the Step Functions workflow (202).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from memlane import observability
from memlane.adapters.aws import dynamo_schema as schema
from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.blob_store import S3BlobStore
from memlane.adapters.aws.cache import DynamoCache
from memlane.adapters.aws.job_queue import SqsIngestQueue, StepFunctionsStarter
from memlane.adapters.aws.metadata.organizations import DynamoOrganizationStore
from memlane.adapters.aws.metadata_store import DynamoMetadataStore
from memlane.adapters.aws.metrics import PowertoolsMetrics
from memlane.adapters.aws.ratelimit import DynamoRateLimiter
from memlane.adapters.aws.textract import TextractReader
from memlane.adapters.idempotency import PowertoolsIdempotency
from memlane.config import Settings
from memlane.config.aws import ENV_CONNECTIONS_SECRET as ENV_CONNECTIONS_SECRET  # infra sets it
from memlane.config.aws import ENV_RERANK_MODEL_ID, AwsSettings
from memlane.config.docsets import DocsetSettings
from memlane.domain.errors import ConfigurationError
from memlane.lazy import Lazy
from memlane.ports import (
    Clock,
    ConnectionPorts,
    Embedder,
    Fetcher,
    Rerank,
    SearchIndex,
    Services,
    Summarizer,
    SystemClock,
)

if TYPE_CHECKING:
    # Types only: these modules are imported by the builders, on first use (cold start).
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    from memlane.adapters.aws.api_keys import ApiGatewayKeyRegistry
    from memlane.adapters.aws.docset_store import DynamoDocsetStore
    from memlane.adapters.openai.embedder import OpenAIEmbedder
    from memlane.adapters.openai.summarizer import OpenAISummarizer
    from memlane.config.docsets import DocsetSettings
    from memlane.crawl.fetcher import SafeFetcher
    from memlane.docsets.service import DocsetContext
    from memlane.ingest.summarize import LocalSummarizer

BEDROCK_DIMENSION = 1024
# Powertools keeps a fetched secret this long before asking Secrets Manager again (rotation).
SECRET_MAX_AGE_S = 300
IDEMPOTENCY_PK = "IDEMP#save"


def memlane_settings(env: Mapping[str, str] | None = None) -> Settings:
    """memlane's Settings for AWS, from the environment, as locally: a save up to
    `inline_max_chars` (MEMLANE_INLINE_MAX_CHARS, 20,000 by default) is written in the API
    function's request and answered 201 with its summary; a larger one is queued (202) for the
    Step Functions workflow."""
    return Settings.from_env(env)


class OpenAIClientFromSecret:
    """An OpenAI client whose key is read from Secrets Manager (by name) on first use, through
    Powertools Parameters (cached SECRET_MAX_AGE_S); a rotated key gives a new client."""

    def __init__(self, secret_name: str) -> None:
        self.secret_name = secret_name
        self._key: str | None = None
        self._client: Any = None

    def _current(self) -> Any:
        from aws_lambda_powertools.utilities.parameters import get_secret

        key = str(get_secret(self.secret_name, max_age=SECRET_MAX_AGE_S)).strip()
        if key != self._key or self._client is None:
            from memlane.adapters.openai.embedder import openai_client

            self._client, self._key = openai_client(key), key
        return self._client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current(), name)


# --------------------------------------------------------------------------- the adapters


def build_metadata_store(aws: AwsSettings) -> DynamoMetadataStore:
    blobs = S3BlobStore(aws.bucket) if aws.bucket else None
    return DynamoMetadataStore(aws.table, blob_store=blobs)


def build_organization_store(aws: AwsSettings) -> DynamoOrganizationStore:
    """The authorizer needs only this part of the metadata store (one GetItem per request)."""
    return DynamoOrganizationStore(aws.table)


def aws_embedder(settings: Settings) -> str:
    """The stack's embedder (MEMLANE_EMBEDDER): `openai`, or Amazon Bedrock's (`bedrock`, also when unset)."""
    if settings.embedder not in ("auto", "bedrock", "openai"):
        raise ConfigurationError("MEMLANE_EMBEDDER", f"MEMLANE_EMBEDDER={settings.embedder!r}: expected bedrock or "
                                                     "openai on AWS (the local models are not deployed)")
    return "openai" if settings.embedder == "openai" else "bedrock"


def build_embedder(aws: AwsSettings, settings: Settings) -> Embedder:
    """Bedrock's Titan (built at once: its client is created on first use), or OpenAI's behind a
    `Lazy`, so that a function that never embeds never reads the secret."""
    if aws_embedder(settings) == "openai":
        secret = aws.require("openai_secret_name")

        def openai_embedder() -> OpenAIEmbedder:
            from memlane.adapters.openai.embedder import OpenAIEmbedder

            return OpenAIEmbedder(client=cast(Any, OpenAIClientFromSecret(secret)))

        return Lazy(openai_embedder, "OpenAIEmbedder")
    from memlane.adapters.aws.bedrock_embedder import BedrockEmbedder

    return BedrockEmbedder(model_id=aws.bedrock_model_id, dimension=BEDROCK_DIMENSION)


def build_summarizer(aws: AwsSettings, settings: Settings) -> Summarizer:
    if aws_embedder(settings) == "openai":
        secret = aws.require("openai_secret_name")

        def openai_summarizer() -> OpenAISummarizer:
            from memlane.adapters.openai.summarizer import OpenAISummarizer

            return OpenAISummarizer(client=cast(Any, OpenAIClientFromSecret(secret)))

        return Lazy(openai_summarizer, "OpenAISummarizer")

    def local_summarizer() -> LocalSummarizer:
        from memlane.ingest.summarize import LocalSummarizer

        return LocalSummarizer()

    return Lazy(local_summarizer, "LocalSummarizer")


def build_rerank(aws: AwsSettings) -> Rerank | None:
    """Recall's rerank stage: Amazon Bedrock's Rerank API with the model the stack names
    (MEMLANE_RERANK_MODEL_ID, set only when the `rerank_model` context is given), else none."""
    if not aws.rerank_model_id:
        return None
    from memlane.adapters.aws.bedrock_reranker import BedrockReranker

    try:
        reranker = BedrockReranker(aws.rerank_model_id, aws.region)
    except ValueError as exc:  # a model the Rerank API does not serve
        raise ConfigurationError(ENV_RERANK_MODEL_ID, f"{ENV_RERANK_MODEL_ID}={aws.rerank_model_id!r}: {exc}") from None
    return Rerank(reranker, aws.rerank_top_n, aws.rerank_weight)


def build_llm(aws: AwsSettings) -> Any:
    """The Bedrock model that draws facts from conversations (the stack's `llm_model`), with its
    queue; None when the stack deploys none (answers then say extraction is off)."""
    if not aws.llm_model_id or not aws.extraction_queue_url:
        return None
    from memlane.adapters.aws.bedrock_llm import BedrockLLM

    return BedrockLLM(aws.llm_model_id)


def build_search_index(aws: AwsSettings, embedder: Embedder, context_weight: float | None = None) -> SearchIndex:
    """The search index the stack deployed: OpenSearch behind the alias, SigV4-signed ("es" or "aoss")
    with the function's role, or Amazon S3 Vectors (an index per organization in the vector bucket).
    The `context` field (memlane.documents.contextual) weighs `context_weight` against a memory's own
    words, as the local index's does (MEMLANE_CONTEXT_TEXT_WEIGHT)."""
    extra = {} if context_weight is None else {"context_boost": context_weight}

    def s3vectors() -> SearchIndex:
        from memlane.adapters.aws.s3vectors_index import S3VectorsIndex

        return S3VectorsIndex(None, aws.require("vector_bucket"), embedder.dimension, alias=aws.search_index_alias,
                              embedder_id=embedder.id, context_boost=context_weight)

    def opensearch() -> SearchIndex:
        from memlane.adapters.aws.opensearch_index import OpenSearchIndex, make_opensearch_client

        endpoint, region = aws.require("search_endpoint"), aws.require("region")
        client = make_opensearch_client(endpoint, region, aws.search_kind)
        return OpenSearchIndex(client, aws.search_index_alias, embedder.dimension, embedder_id=embedder.id,
                               serverless=aws.search_kind == "serverless", **extra)

    if aws.search_kind == "s3vectors":
        return Lazy(s3vectors, "S3VectorsIndex")
    return Lazy(opensearch, "OpenSearchIndex")


def build_starter(aws: AwsSettings | None = None) -> StepFunctionsStarter:
    aws = aws or aws_settings()
    return StepFunctionsStarter(aws.require("state_machine_arn"))


# --------------------------------------------------------------------------- composed per cold start

_settings: Lazy[AwsSettings] = Lazy(AwsSettings.from_env, "AwsSettings")


def aws_settings() -> AwsSettings:
    return _settings.get()


def compose_aws(aws: AwsSettings, settings: Settings, *, embedder: Embedder | None = None,
                index: SearchIndex | None = None, clock: Clock | None = None,
                rerank: Rerank | None = None) -> Services:
    """memlane's ports on AWS. `embedder`, `index`, `clock` and `rerank` replace the deployed ones
    (tests hand in fakes this way instead of patching this module)."""
    embedder = embedder if embedder is not None else build_embedder(aws, settings)
    return Services(
        settings=settings,
        metadata=build_metadata_store(aws),
        blobs=S3BlobStore(aws.bucket),
        # The same stages as the local composition: contextual indexing at write and the neighbour
        # stage at recall read the conversation through the metadata port (DynamoDB GSI3).
        index=index if index is not None else build_search_index(aws, embedder, settings.context.text_weight),
        embedder=embedder,
        summarizer=build_summarizer(aws, settings),
        # SQS triggers the consumer, which starts the workflow: nothing to wake in-process.
        queue=SqsIngestQueue(aws.ingest_queue_url, clock=clock),
        clock=clock or SystemClock(),
        cache=DynamoCache(aws.table),
        rate_limiter=DynamoRateLimiter(aws.table),
        idempotency=PowertoolsIdempotency(lambda: build_idempotency_layer(aws)),
        metrics=PowertoolsMetrics(namespace=aws.metrics_namespace,
                                  only=observability.LEAN_ALARMED if aws.metrics == "alarmed" else None),
        # Keys created through POST /v3/keys join the usage plan, as the admin function's do (the
        # API function knows the plan by name; built on the first key created).
        key_registry=Lazy(lambda: build_key_registry(aws), "ApiGatewayKeyRegistry"),
        # Images: Amazon Textract (in the request, or the workflow's Extract step). Recordings:
        # an Amazon Transcribe job the workflow runs, so no transcriber in-process.
        ocr=TextractReader(),
        transcribe_in_workflow=True,
        connections=build_connection_ports(aws, settings.public_url),
        rerank=rerank if rerank is not None else build_rerank(aws),
        llm=build_llm(aws),
        extraction_queue=SqsIngestQueue(aws.extraction_queue_url, clock=clock) if aws.extraction_queue_url else None,
    )


_services: Lazy[Services] = Lazy(lambda: compose_aws(aws_settings(), memlane_settings()), "Services")


def build_aws_services(settings: Settings | None = None) -> Services:
    """The Services every handler hands to memlane's services, composed once per execution
    environment: Lambda reuses it, so clients and connections survive between invocations."""
    if settings is not None:
        return compose_aws(aws_settings(), settings)
    return _services.get()


def build_connection_ports(aws: AwsSettings, public_url: str) -> ConnectionPorts | None:
    """Connections on AWS: the store in the metadata table, tokens sealed with the stack's KMS key,
    OAuth clients from one Secrets Manager secret, syncs sent to the sync queue. None where the
    stack gave the function no key (a function that has nothing to do with connections)."""
    if not aws.connections_key:
        return None
    from memlane.adapters.aws.connection_store import DynamoConnectionStore
    from memlane.adapters.aws.sync_queue import SqsSyncDispatcher
    from memlane.adapters.aws.token_vault import KmsTokenVault
    from memlane.connections.apps import SecretApps

    return ConnectionPorts(store=DynamoConnectionStore(aws.table), vault=KmsTokenVault(aws.connections_key),
                           apps=SecretApps(aws.connections_secret), public_url=public_url,
                           webapp_url=aws.webapp_url or None,  # CloudFront: the confirmation page
                           dispatcher=SqsSyncDispatcher(aws.sync_queue_url) if aws.sync_queue_url else None)


def build_idempotency_layer(aws: AwsSettings) -> DynamoDBPersistenceLayer:
    """Idempotency-Key records of saves, in the metadata table: pk=IDEMP#save, sk=<key hash>,
    expiring through the table's TTL attribute."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(table_name=aws.table, key_attr=schema.PK, sort_key_attr=schema.SK,
                                    static_pk_value=IDEMPOTENCY_PK, expiry_attr=schema.TTL_ATTRIBUTE,
                                    boto3_client=new_client("dynamodb"))


def reset_aws_services() -> None:
    """Forget what was composed (tests change the environment between cases)."""
    _settings.reset()
    _services.reset()



def build_key_registry(aws: AwsSettings | None = None) -> ApiGatewayKeyRegistry:
    from memlane.adapters.aws.api_keys import ApiGatewayKeyRegistry

    aws = aws or aws_settings()
    if not aws.usage_plan_id and aws.usage_plan_name:
        return ApiGatewayKeyRegistry(None, aws.table, usage_plan_name=aws.usage_plan_name, stage=aws.stage)
    return ApiGatewayKeyRegistry(aws.require("usage_plan_id"), aws.table, stage=aws.stage)


# --------------------------------------------------------------------------- documentation sets


def build_docset_store(aws: AwsSettings) -> DynamoDocsetStore:
    """memlane.ports.DocsetStore on AWS: docsets, page crawl state and sessions in the metadata table."""
    from memlane.adapters.aws.docset_store import DynamoDocsetStore

    return DynamoDocsetStore(aws.table)


def build_fetcher(settings: DocsetSettings) -> SafeFetcher:
    from memlane.crawl.fetcher import FetchLimits, SafeFetcher
    from memlane.crawl.ssrf import NetworkPolicy

    return SafeFetcher(policy=NetworkPolicy.public_only(), limits=FetchLimits(max_bytes=settings.max_page_bytes))


def build_docset_context(aws: AwsSettings | None = None, services: Services | None = None,
                         fetcher: Fetcher | None = None) -> DocsetContext:
    """What the docset service needs on AWS: the services, the docset store, an SSRF-guarded
    fetcher for the public internet only, and the SQS page queue as its dispatcher."""
    from memlane.adapters.aws.crawl_queue import SqsPageDispatcher
    from memlane.config.docsets import DocsetSettings
    from memlane.crawl.ssrf import NetworkPolicy
    from memlane.docsets.pages import CrawlContext, RobotsCache
    from memlane.docsets.service import DocsetContext

    aws = aws or aws_settings()
    store = build_docset_store(aws)
    settings = DocsetSettings.from_env()  # once per cold start
    fetcher = fetcher or build_fetcher(settings)
    svc = services or build_aws_services()
    crawl = CrawlContext(svc=svc, store=store, fetcher=fetcher, settings=settings, robots=RobotsCache(fetcher))
    return DocsetContext(crawl=crawl, policy=NetworkPolicy.public_only(),
                         dispatcher=SqsPageDispatcher(aws.require("page_queue_url"), store, clock=svc.clock))


def lazy_docset_context() -> Lazy[DocsetContext]:
    """The API Lambda's DocsetContext, composed on the first Mem-Oracle request: the crawler's
    imports (bs4, httpx) stay off the cold start of every other route."""
    return Lazy(build_docset_context, "DocsetContext")
