"""Documentation crawls on AWS: one SQS message per page to fetch (the page queue), consumed by the
page worker Lambda (functions/page_worker) with partial batch failures.

`SqsPageDispatcher` is the docset service's CrawlDispatcher on AWS, and only I/O: it sends one
message per pending page when pages are queued (a new docset, a refresh) or found (a crawled
page's links), and a delayed message for a page due again after its backoff (SQS delays by at
most 15 minutes; the page's claim accepts an early message). What a message does is
memlane.docsets.service's `crawl_queued_page`, the same crawl the local runner runs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from memlane.adapters.aws._boto import error_code, is_transient, lazy_client
from memlane.domain.docsets import Docset, PageStatus, epoch_ms
from memlane.domain.errors import TransientError
from memlane.ports import Clock, SystemClock

log = logging.getLogger(__name__)

SQS_BATCH = 10  # SendMessageBatch's maximum
LIST_PAGE_SIZE = 500
MAX_DELAY_S = 900  # SQS's maximum DelaySeconds


class PageMessage(BaseModel):
    """The body of a page-queue message."""

    model_config = ConfigDict(extra="forbid")

    organization_id: str
    docset_id: str
    page_id: str


class SqsPageDispatcher:
    def __init__(self, queue_url: str, store: Any, client: Any | None = None, clock: Clock | None = None) -> None:
        self.queue_url = queue_url
        self.store = store
        self.client = lazy_client(client, "sqs")
        self.clock = clock or SystemClock()

    def pages_queued(self, docset: Docset) -> None:
        # Up to the page cap per call: on DynamoDB each call reads the docset's partition.
        size = max(LIST_PAGE_SIZE, docset.max_pages)
        offset = 0
        while True:
            pages, total = self.store.list_pages(docset.id, PageStatus.PENDING, size, offset)
            self.send(docset, [p.id for p in pages])
            offset += len(pages)
            if not pages or offset >= total:
                return

    def pages_found(self, docset: Docset, page_ids: Sequence[str]) -> None:
        self.send(docset, list(page_ids))

    def page_due(self, docset: Docset, page_id: str, due_ms: int) -> None:
        self.send(docset, [page_id], delay_s=math.ceil((due_ms - epoch_ms(self.clock.now())) / 1000))

    def docset_deleted(self, docset_id: str) -> None:
        """Messages already queued for the docset find no docset and are dropped by the worker."""

    def send(self, docset: Docset, page_ids: list[str], delay_s: int = 0) -> int:
        """One message per page; `delay_s` (at most 15 minutes) holds them back, for a retry's backoff."""
        ids = list(dict.fromkeys(page_ids))
        delay = {"DelaySeconds": min(MAX_DELAY_S, max(0, delay_s))} if delay_s > 0 else {}
        for start in range(0, len(ids), SQS_BATCH):
            entries = [
                {"Id": str(i), "MessageBody": PageMessage(organization_id=docset.organization_id,
                                                          docset_id=docset.id, page_id=pid).model_dump_json(),
                 **delay}
                for i, pid in enumerate(ids[start:start + SQS_BATCH])
            ]
            try:
                response = self.client.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except Exception as exc:
                if is_transient(exc):
                    code = error_code(exc) if hasattr(exc, "response") else type(exc).__name__
                    raise TransientError(f"sqs send_message_batch: {code}") from exc
                raise
            if response.get("Failed"):
                raise TransientError(f"sqs send_message_batch: {len(response['Failed'])} pages not queued")
        return len(ids)
