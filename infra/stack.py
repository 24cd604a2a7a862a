"""memlane's one stack: composes one construct per capability and exports what a user needs."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, CfnOutput, CfnRule, CfnRuleAssertion, Fn, Stack
from constructs import Construct

from infra.config import DeploymentConfig
from infra.constructs.api import Api
from infra.constructs.connections import Connections
from infra.constructs.crawl import Crawl
from infra.constructs.embeddings import ModelAccess
from infra.constructs.extraction import Extraction
from infra.constructs.functions import FunctionFactory
from infra.constructs.ingestion import Ingestion
from infra.constructs.observability import Observability
from infra.constructs.schedules import Schedules
from infra.constructs.search import create_search
from infra.constructs.storage import Storage
from infra.constructs.vector_search import VectorSearch
from infra.constructs.webapp import WebApp
from memlane import observability
from memlane.adapters.aws import dynamo_schema as schema
from memlane.config.aws import ENV_WEBAPP_URL

FIRST_KEY_PAYLOAD = '{"action":"create","org":"default"}'


class MemlaneStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        code_dir: Path,
        layer_dir: Path,
        webapp_dir: Path,
        **kwargs,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description=(
                f"memlane ({config.stage}): long-term memory and documentation recall for AI assistants"
            ),
            **kwargs,
        )
        self.config = config
        self.storage = Storage(self, "Storage", config=config)
        self.search = create_search(self, "Search", config=config)
        self.models = ModelAccess(self, "Models", config=config)
        self.functions = FunctionFactory(
            self,
            "Functions",
            config=config,
            code_dir=code_dir,
            layer_dir=layer_dir,
            environment={
                schema.ENV_TABLE: self.storage.table.table_name,
                schema.ENV_BUCKET: self.storage.content_bucket.bucket_name,
                **self.search.environment,
                **self.models.environment,
                # lean observability: the functions publish only the metric an alarm reads
                **({observability.ENV_METRICS: "alarmed"} if config.observability == "lean" else {}),
            },
        )
        if isinstance(self.search, VectorSearch):
            self.search.prepare(self.functions)
        self.ingestion = Ingestion(
            self,
            "Ingestion",
            config=config,
            factory=self.functions,
            storage=self.storage,
            search=self.search,
            models=self.models,
        )
        self.functions.add_environment(schema.ENV_INGEST_QUEUE_URL, self.ingestion.ingest.queue.queue_url)
        self.crawl = Crawl(
            self,
            "Crawl",
            factory=self.functions,
            storage=self.storage,
            search=self.search,
            models=self.models,
        )
        self.functions.add_environment(schema.ENV_PAGE_QUEUE_URL, self.crawl.pages.queue.queue_url)
        self.api = Api(
            self,
            "Api",
            config=config,
            factory=self.functions,
            storage=self.storage,
            search=self.search,
            models=self.models,
            ingest_queue=self.ingestion.ingest.queue,
            page_queue=self.crawl.pages.queue,
        )
        self.webapp = WebApp(
            self,
            "WebApp",
            config=config,
            rest_api=self.api.rest_api,
            app_dir=webapp_dir,
            access_log_bucket=self.storage.access_log_bucket,
        )
        # A connection provider sends the browser back to the API's callback, which sends it on to
        # the web app's confirmation page (where the member's key is): the distribution's URL.
        self.api.api_function.add_environment(ENV_WEBAPP_URL, self.webapp.url)
        self.schedules = Schedules(
            self,
            "Schedules",
            config=config,
            factory=self.functions,
            storage=self.storage,
            search=self.search,
            models=self.models,
            page_queue=self.crawl.pages.queue,
        )
        self.connections = Connections(
            self,
            "Connections",
            config=config,
            factory=self.functions,
            storage=self.storage,
            search=self.search,
            models=self.models,
            schedules=self.schedules,
            ingest_queue=self.ingestion.ingest.queue,
        )
        self.connections.grant_api(self.api.api_function)
        self.extraction: Extraction | None = None
        if config.llm_model:
            self.extraction = Extraction(self, "Extraction", config=config, factory=self.functions,
                                         storage=self.storage, search=self.search, models=self.models,
                                         ingest_queue=self.ingestion.ingest.queue)
            self.extraction.grant_api(self.api.api_function)
            if config.llm_model_for_region:
                # `llm_model: auto` chose the model for the Region synth was told about: refuse to
                # deploy the template anywhere else, where that id may not be invocable.
                CfnRule(self, "LlmModelRegion", assertions=[CfnRuleAssertion(
                    assert_=Fn.condition_equals(Aws.REGION, config.region),
                    assert_description=(f"This template chose the LLM {config.llm_model} for {config.region}: "
                                        f"synthesize it again for the Region you deploy to"))])
        self.observability = Observability(
            self,
            "Observability",
            config=config,
            functions=self.functions.functions,
            dead_letter_queues={
                "IngestDlq": self.ingestion.ingest.dead_letter_queue,
                "PageDlq": self.crawl.pages.dead_letter_queue,
                "ForgetDlq": self.schedules.forget_dlq,
                "RefreshDlq": self.schedules.refresh_dlq,
                "ConnectionsScheduleDlq": self.connections.schedule_dlq,
                "SyncDlq": self.connections.sync.dead_letter_queue,
                **({"ExtractionDlq": self.extraction.extractions.dead_letter_queue} if self.extraction else {}),
            },
            state_machine=self.ingestion.state_machine,
            rest_api=self.api.rest_api,
            work_queues={"IngestQueue": self.ingestion.ingest.queue, "PageQueue": self.crawl.pages.queue,
                         "SyncQueue": self.connections.sync.queue,
                         **({"ExtractionQueue": self.extraction.extractions.queue} if self.extraction else {})},
        )
        self._outputs()

    def _outputs(self) -> None:
        keys_function = self.api.keys_function.function_name
        CfnOutput(self, "ApiUrl", value=self.api.url, description="Base URL: curl $URL/v3/recall ...")
        CfnOutput(
            self,
            "CreateFirstKeyCommand",
            description="Creates the first memlane API key (printed once; store it)",
            value=Fn.join(
                "",
                [
                    "aws lambda invoke --region ",
                    Aws.REGION,
                    " --function-name ",
                    keys_function,
                    f" --cli-binary-format raw-in-base64-out --payload '{FIRST_KEY_PAYLOAD}' /dev/stdout",
                ],
            ),
        )
        CfnOutput(self, "McpUrl", value=Fn.join("", [self.api.public_url, "/mcp"]),
                  description="MCP over Streamable HTTP: claude mcp add --transport http memlane $URL ...")
        if self.api.oauth is not None:
            oauth = self.api.oauth
            CfnOutput(self, "OAuthClientId", value=oauth.client.user_pool_client_id,
                      description="The OAuth client id MCP clients use (claude.ai: Advanced settings)")
            CfnOutput(self, "OAuthUserPoolId", value=oauth.user_pool.user_pool_id,
                      description="Add users here, each to one group org:<organization slug>")
            CfnOutput(self, "OAuthLoginDomain", value=oauth.domain.base_url())
        CfnOutput(self, "KeysFunctionName", value=keys_function)
        CfnOutput(self, "MetadataTableName", value=self.storage.table.table_name)
        CfnOutput(self, "ContentBucketName", value=self.storage.content_bucket.bucket_name)
        if isinstance(self.search, VectorSearch):
            CfnOutput(self, "VectorBucketName", value=self.search.bucket_name,
                      description="S3 Vectors: one index per organization, created on its first save")
        else:
            CfnOutput(self, "SearchEndpoint", value=self.search.endpoint)
        CfnOutput(self, "IngestQueueUrl", value=self.ingestion.ingest.queue.queue_url)
        CfnOutput(self, "StateMachineArn", value=self.ingestion.state_machine.state_machine_arn)
        CfnOutput(self, "AlarmTopicArn", value=self.observability.topic.topic_arn)
