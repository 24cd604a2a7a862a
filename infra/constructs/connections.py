"""Connections (spec §11): GitHub, Notion, Google Drive, Slack and X synced into memory.

    EventBridge Scheduler (every 15 min) → schedule function → sync queue (SQS + DLQ)
    API ("sync now", OAuth callback, a delete that goes on) ───────────↗     │
                                                                            ▼
                    sync function (one connection per message) → provider APIs, the write path

* Tokens are sealed with a customer managed KMS key (rotated yearly) under an encryption context
  naming the organization and connection; only the API (OAuth callback, webhooks) and the sync
  function may use it, and only to encrypt and decrypt.
* The OAuth clients registered with the providers live in one Secrets Manager secret the operator
  creates (docs/deploy.md), read by name; the stack never holds a client secret.
* The schedule function only reads connections (GSI1) and sends messages; the sync function reads
  and writes the table, content and search index, embeds, and sends its own continuation.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.embeddings import ModelAccess
from infra.constructs.functions import FunctionFactory, function_role
from infra.constructs.grants import grant_secret_value, grant_send
from infra.constructs.queues import WorkQueue, work_queue
from infra.constructs.schedules import Schedules
from infra.constructs.search import Search
from infra.constructs.storage import Storage
from memlane.adapters.aws import dynamo_schema as schema
from memlane.aws.compose import ENV_CONNECTIONS_SECRET


class Connections(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        factory: FunctionFactory,
        storage: Storage,
        search: Search,
        models: ModelAccess,
        schedules: Schedules,
        ingest_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "TokenKey",
            description=f"memlane {config.stage}: seals connection tokens (OAuth) and webhook secrets",
            enable_key_rotation=True,
            pending_window=Duration.days(7 if not config.retain_data else 30),
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        self.clients = secretsmanager.Secret.from_secret_name_v2(self, "OAuthClients", config.connections_secret_name)
        self.sync: WorkQueue = work_queue(self, "SyncQueue", consumer_timeout_s=c.CONNECTION_SYNC_FUNCTION.timeout_s)
        self.environment = {
            schema.ENV_CONNECTIONS_KEY: self.key.key_arn,
            schema.ENV_SYNC_QUEUE_URL: self.sync.queue.queue_url,
            ENV_CONNECTIONS_SECRET: config.connections_secret_name,
        }

        # The worker: one connection per message, the whole function timeout if it needs it.
        self.sync_function = factory.create(self, c.CONNECTION_SYNC_FUNCTION, environment=self.environment)
        storage.grant_table_read_write(self.sync_function)
        storage.grant_content_read(self.sync_function)
        storage.grant_content_write(self.sync_function)
        storage.grant_content_delete(self.sync_function)  # an item deleted at the provider
        search.grant_write(function_role(self.sync_function))
        models.grant_embed(self.sync_function)
        models.grant_summarize(self.sync_function)
        self.grant_seal(self.sync_function)  # a refreshed token is sealed again
        grant_secret_value(self.clients, self.sync_function)  # refreshing needs the OAuth client
        grant_send(self.sync.queue, self.sync_function)  # its continuation
        grant_send(ingest_queue, self.sync_function)  # the write path's safety net
        self.sync_function.add_event_source(
            event_sources.SqsEventSource(
                self.sync.queue,
                batch_size=c.CONNECTION_SYNC_BATCH_SIZE,
                report_batch_item_failures=True,
                max_concurrency=c.CONNECTION_SYNC_MAX_CONCURRENCY,
            )
        )

        # The schedule: reads connections across organizations (GSI1), sends messages, nothing else.
        self.schedule_function = factory.create(
            self, c.CONNECTION_SCHEDULE_FUNCTION, environment=self.environment
        )
        storage.grant_table_read(self.schedule_function, indexes=(schema.GSI1,))
        grant_send(self.sync.queue, self.schedule_function)
        self.schedule_dlq = schedules.add_schedule(
            "Connections",
            self.schedule_function,
            scheduler.ScheduleExpression.rate(Duration.minutes(c.CONNECTION_SYNC_SCHEDULE_MINUTES)),
            config,
        )

    def grant_seal(self, grantee: iam.IGrantable) -> None:
        """Encrypt and Decrypt with the token key, nothing else (no re-encrypt, no data keys)."""
        self.key.grant(grantee, "kms:Encrypt", "kms:Decrypt")

    def grant_api(self, api_function: lambda_.Function) -> None:
        """The API starts connections (seals the PKCE verifier and webhook secret), completes them at
        the OAuth callback, verifies webhooks, asks for syncs and deletes connections. Its public URL
        (MEMLANE_PUBLIC_URL, where providers send users back) is set by the Api construct."""
        for name, value in self.environment.items():
            api_function.add_environment(name, value)
        self.grant_seal(api_function)
        grant_secret_value(self.clients, api_function)
        grant_send(self.sync.queue, api_function)
