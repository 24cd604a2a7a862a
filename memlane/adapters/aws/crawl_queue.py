"""Documentation crawls on AWS: one SQS message per page to fetch (the page queue), consumed by the
page worker Lambda with partial batch failures.

`SqsPageDispatcher` is the docset service's CrawlDispatcher on AWS: when pages are queued (a new
docset, a refresh) it sends one message per pending page. `crawl_page_message` is the page
worker's whole job for one message, built from memlane.docsets.pages' per-page steps (fetch →
extract → admit links → index); the links a page adds are dispatched in turn, one message each.
A page id is deterministic and a page is claimed atomically before it is fetched, so a duplicate
message finds the page claimed or done and does nothing. Two cases need a message again, and get
one: a page that failed transiently is re-sent with a delay (its backoff), and a message redelivered
after its worker died (the visibility timeout is six function timeouts) reclaims the page, which
was left in `processing` longer than any live worker holds one.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from memlane.adapters.aws._boto import LazyClient, error_code, is_transient
from memlane.docsets.models import Docset, DocsetPage, PageStatus, page_id_for
from memlane.docsets.pages import (
    PageWork,
    admissible,
    admit_links,
    fetch_and_prepare,
    finish_page,
    index_pages,
)
from memlane.docsets.service import DocsetContext
from memlane.domain.errors import TransientError

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


class PageResult(BaseModel):
    page_id: str
    status: str  # the page's status after this message, or "skipped: <why>"
    links_dispatched: int = 0


class SqsPageDispatcher:
    def __init__(self, queue_url: str, store: Any, client: Any | None = None) -> None:
        self.queue_url = queue_url
        self.store = store
        self._client = client

    client = LazyClient("sqs")

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


def crawl_page_message(dctx: DocsetContext, message: PageMessage) -> PageResult:
    """Fetch, prepare, index one page and dispatch the new pages its links added."""
    store = dctx.store
    docset = store.get_docset(message.organization_id, message.docset_id)
    if docset is None:
        return PageResult(page_id=message.page_id, status="skipped: docset deleted")
    now = dctx.crawl.clock_ms()
    # Longer than a page worker's timeout: a page claimed that long ago has no live worker.
    stuck_before = now - dctx.crawl.settings.stuck_after_s * 1000
    page = store.claim_page(docset.id, message.page_id, now, stuck_before=stuck_before)
    if page is None:
        return PageResult(page_id=message.page_id, status="skipped: not pending (done or claimed)")
    try:
        work = fetch_and_prepare(dctx.crawl, docset, page)
    except Exception as exc:  # noqa: BLE001 - recorded on the page (retried with backoff), like crawl_page
        log.exception("page %s failed", page.url)
        work = PageWork(page, "error", message=f"{type(exc).__name__}: {exc}", transient=True)
    added = admit_links(dctx.crawl, docset, work.links)
    recorded: DocsetPage | None
    if work.outcome == "index":
        index_pages(dctx.crawl, [work])
        recorded = store.get_page(docset.id, work.page.id)
    else:
        recorded = finish_page(dctx.crawl, work)
    dispatched = 0
    sqs = dctx.dispatcher if isinstance(dctx.dispatcher, SqsPageDispatcher) else None
    if added and sqs is not None:
        # Only this page's links, normalised as the store keys them: a message per page; pages
        # already known are not pending and their messages are dropped by the claim.
        urls = admissible(docset, work.links)
        dispatched = sqs.send(docset, [page_id_for(docset.id, url) for url in urls])
    if sqs is not None and recorded is not None and recorded.status == PageStatus.ERROR and recorded.retry_at:
        # A transient failure: the page is due again after its backoff, and only a message brings it back.
        sqs.send(docset, [recorded.id], delay_s=math.ceil((recorded.retry_at - dctx.crawl.clock_ms()) / 1000))
    status = recorded.status.value if recorded is not None else "skipped: page removed"
    return PageResult(page_id=page.id, status=status, links_dispatched=dispatched)
