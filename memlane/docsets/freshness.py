"""How fresh a documentation result is, refreshing stale pages on read, and telling memories that
the page they were saved from has changed.

- A page is stale once it was fetched longer ago than its docset's refresh interval (the max age
  the refresh schedule uses, DocsetSettings.default_max_age_hours): its results say `stale`.
- `/retrieve` with `refreshStale` re-fetches the stale pages among its results, best first, while
  its time budget lasts. A re-fetch is conditional (ETag, Last-Modified), so an unchanged page
  costs one small request; a changed one is written again through the one crawl-page path
  (memlane.docsets.service.crawl_queued_page), and the results are ranked again over the new text.
  The budget is checked before each page: a page's own fetch is bounded by the fetcher's timeout.
- When a refresh (on read, the schedule, or /refresh) finds a page's content changed, every memory
  of the organization whose `source_url` is that page gets `source_changed_at`
  (memlane.docsets.pages.mark_memories_of_changed_page), which /v3/recall and GET /v3/documents/{id} show.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from memlane.docsets.service import DocsetContext, crawl_queued_page
from memlane.domain.docsets import Docset, DocsetPage, PageStatus

HOUR_MS = 3_600_000

log = logging.getLogger(__name__)


def refresh_interval_ms(dctx: DocsetContext, docset: Docset) -> int:
    return int(dctx.crawl.settings.default_max_age_hours * HOUR_MS)


def is_stale(dctx: DocsetContext, docset: Docset, page: DocsetPage | None, now_ms: int) -> bool:
    if page is None or page.fetched_at is None:
        return page is not None
    return now_ms - page.fetched_at > refresh_interval_ms(dctx, docset)


def refresh_pages(dctx: DocsetContext, pages: Sequence[tuple[Docset, DocsetPage]],
                  budget_ms: int) -> tuple[set[str], set[str]]:
    """Re-fetch `pages` (best first) until the budget is spent. Returns (refreshed page ids,
    changed page ids)."""
    deadline = time.monotonic() + budget_ms / 1000
    refreshed: set[str] = set()
    changed: set[str] = set()
    store = dctx.store
    for docset, page in pages:
        if time.monotonic() >= deadline:
            break
        now = dctx.crawl.clock_ms()
        # Due now, like a refresh makes every page due; the claim in crawl_queued_page makes sure
        # one worker (this request, or the crawler) fetches it.
        store.save_page(page.model_copy(update={"status": PageStatus.PENDING, "retry_at": now, "attempts": 0,
                                                "updated_at": now}))
        outcome = crawl_queued_page(dctx, docset.organization_id, docset.id, page.id)
        if outcome.status.startswith("skipped"):
            continue  # claimed by the crawler meanwhile: it refreshes the page
        refreshed.add(page.id)
        after = store.get_page(docset.id, page.id)
        if after is None or after.content_hash != page.content_hash:
            changed.add(page.id)
    return refreshed, changed
