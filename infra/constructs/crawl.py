"""Crawl: documentation sites are fetched one page per message.

page queue (SQS + DLQ) → page worker Lambda (partial batch failures). The worker claims the page in
the metadata table (a conditional write: one worker per page), fetches it with memlane's
SSRF-checked fetcher, embeds and indexes it itself (content in S3 when large, vectors and text in
the search index) and sends the links it discovers back to the page queue. A page that changed
into a redirect or disappeared loses its document through memlane's one removal path, so the
worker may delete content too. The event source's maximum concurrency bounds how hard memlane hits
any documentation site.
"""

from __future__ import annotations

from aws_cdk import aws_lambda_event_sources as event_sources
from constructs import Construct

from infra import constants as c
from infra.constructs.embeddings import ModelAccess
from infra.constructs.functions import FunctionFactory, function_role
from infra.constructs.grants import grant_send
from infra.constructs.queues import WorkQueue, work_queue
from infra.constructs.search import Search
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
        search: Search,
        models: ModelAccess,
    ) -> None:
        super().__init__(scope, construct_id)
        self.pages: WorkQueue = work_queue(
            self, "PageQueue", consumer_timeout_s=c.PAGE_WORKER_FUNCTION.timeout_s
        )
        self.worker = factory.create(self, c.PAGE_WORKER_FUNCTION)
        storage.grant_table_read_write(self.worker, indexes=(schema.GSI1,))
        storage.grant_content_read(self.worker)
        storage.grant_content_write(self.worker)
        storage.grant_content_delete(self.worker)
        search.grant_write(function_role(self.worker))
        models.grant_embed(self.worker)
        models.grant_summarize(self.worker)
        grant_send(self.pages.queue, self.worker)
        self.worker.add_event_source(
            event_sources.SqsEventSource(
                self.pages.queue,
                batch_size=c.PAGE_WORKER_BATCH_SIZE,
                report_batch_item_failures=True,
                max_concurrency=c.PAGE_WORKER_MAX_CONCURRENCY,
            )
        )
