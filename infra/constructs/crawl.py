"""Crawl: documentation sites are fetched one page per message.

page queue (SQS + DLQ) → page worker Lambda (partial batch failures). The worker fetches a page
(memlane's SSRF-checked fetcher), stores the raw page in S3, enqueues links it discovers on the page
queue and hands the page to ingestion through the ingest queue. The event source's maximum
concurrency bounds how hard memlane hits any documentation site.
"""

from __future__ import annotations

from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.constructs.functions import FunctionFactory
from infra.constructs.queues import WorkQueue, work_queue
from infra.constructs.storage import Storage
from memlane.adapters.aws import dynamo_schema as schema


class Crawl(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        factory: FunctionFactory,
        storage: Storage,
        ingest_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.pages: WorkQueue = work_queue(
            self, "PageQueue", consumer_timeout_s=c.PAGE_WORKER_FUNCTION.timeout_s
        )
        self.worker = factory.create(self, c.PAGE_WORKER_FUNCTION)
        storage.grant_table_read_write(self.worker, indexes=(schema.GSI1,))
        storage.grant_content_read(self.worker)
        storage.grant_content_write(self.worker)
        self.pages.queue.grant_send_messages(self.worker)
        ingest_queue.grant_send_messages(self.worker)
        self.worker.add_event_source(
            event_sources.SqsEventSource(
                self.pages.queue,
                batch_size=c.PAGE_WORKER_BATCH_SIZE,
                report_batch_item_failures=True,
                max_concurrency=c.PAGE_WORKER_MAX_CONCURRENCY,
            )
        )
