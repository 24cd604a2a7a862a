"""The records behind documentation sets (their settings: memlane.config.docsets).

A docset belongs to an organization and owns one project of that organization (created with it,
named after it). Each crawled page that has content is a memlane Document in that project
(`source_url` = the page URL, `id` = the page id), so /v3/recall finds documentation too and a
docset's scope in both search legs is simply its project. The crawl state of every page lives in
the docset store, so a crawl survives a restart.

Timestamps are epoch milliseconds, as the Mem-Oracle API reports them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

_PAGE_NAMESPACE = uuid.UUID("2b5f7a1e-6d3c-4e8a-9f10-646f63736574")


def epoch_ms(when: datetime) -> int:
    """Docset records keep times as epoch milliseconds (Mem-Oracle's wire format)."""
    return int(when.timestamp() * 1000)


def page_id_for(docset_id: str, url: str) -> str:
    """Deterministic: the same URL in the same docset is always the same page (and document), so a
    page processed twice (a retried message, a restarted crawl) overwrites instead of duplicating."""
    return str(uuid.uuid5(_PAGE_NAMESPACE, f"{docset_id}:{url}"))


class PageStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"  # claimed by a worker; stuck when claimed too long ago
    INDEXED = "indexed"
    SKIPPED = "skipped"  # 401/403/404/410, robots.txt, not HTML, a navigation-only page, a redirect
    ERROR = "error"  # with a message; retried with backoff while `retry_at` is set


class DocsetStatus(StrEnum):
    INDEXING = "indexing"
    READY = "ready"
    ERROR = "error"  # nothing could be indexed and something failed


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Docset(_Record):
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    organization_id: str
    project_id: str
    name: str
    base_url: str
    seed_url: str  # normalised base URL + seed slug
    seed_slug: str
    allowed_paths: list[str] = Field(default_factory=list)
    max_pages: int = 5000
    created_at: int
    updated_at: int
    last_refreshed_at: int | None = None  # when the last crawl or refresh was started


class DocsetPage(_Record):
    id: str
    docset_id: str
    organization_id: str
    url: str
    path: str
    title: str | None = None
    status: PageStatus = PageStatus.PENDING
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None  # SHA-256 of the cleaned content last indexed
    document_id: str | None = None
    chunk_count: int = 0
    attempts: int = 0
    error: str | None = None
    retry_at: int | None = 0  # claimable from then on; None: not claimable (done or final error)
    claimed_at: int | None = None
    fetched_at: int | None = None
    indexed_at: int | None = None
    created_at: int
    updated_at: int
    # The sampled shingle hashes of the text last indexed (memlane.crawl.similarity): how a page
    # that repeats other pages of the set (a print or single-page version) is recognised.
    sketch: list[int] | None = None


def new_page(docset: Docset, url: str, now: int) -> DocsetPage:
    """A page just found: pending and due at once."""
    return DocsetPage(id=page_id_for(docset.id, url), docset_id=docset.id,
                      organization_id=docset.organization_id, url=url, path=urlsplit(url).path or "/",
                      created_at=now, updated_at=now, retry_at=now)


@dataclass(frozen=True)
class PageCounts:
    """One docset's pages by state (what indexStatus reports)."""

    total: int = 0
    indexed: int = 0
    pending: int = 0  # pending + processing
    error: int = 0
    skipped: int = 0
    chunks: int = 0
    stuck: int = 0
    retried: int = 0
    retrying: int = 0  # errors that will be retried
    last_update: int | None = None

    @property
    def active(self) -> int:
        return self.pending + self.retrying

    def status(self) -> DocsetStatus:
        if self.active:
            return DocsetStatus.INDEXING
        if self.total and not self.indexed and self.error:
            return DocsetStatus.ERROR
        return DocsetStatus.READY


class ClientSession(_Record):
    id: str
    organization_id: str
    client_type: str | None = None
    connected_at: int
    last_heartbeat: int
