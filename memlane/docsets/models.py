"""The records behind documentation sets, and their settings.

A docset belongs to an organization and owns one project of that organization (created with it,
named after it). Each crawled page that has content is a memlane Document in that project
(`source_url` = the page URL, `id` = the page id), so /v3/recall finds documentation too and a
docset's scope in both search legs is simply its project. The crawl state of every page lives in
the docset store, so a crawl survives a restart.

Timestamps are epoch milliseconds, as the Mem-Oracle API reports them.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from memlane.recall.fusion import FusionWeights

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


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


DOCSET_FUSION = FusionWeights(vector=0.8, text=0.2, recency=0.0, support=0.2, support_chunks=2)


@dataclass(frozen=True)
class DocsetSettings:
    """Crawl and retrieval settings, read once at the edge (`from_env`) and passed inward."""

    per_host_concurrency: int = 4
    fetch_workers: int = 4
    max_pages: int = 5000
    max_page_bytes: int = 5 * 1024 * 1024
    # Docs are chunked like other content by default; see BENCHMARKS.md (docsets) for the measurements.
    chunk_max_tokens: int = 512
    chunk_overlap_tokens: int = 50
    embed_batch_chunks: int = 128
    stuck_after_s: int = 300
    max_attempts: int = 4
    retry_base_s: float = 5.0
    refresh_interval_hours: float = 24.0  # the local server's periodic refresh of stale docsets
    maintenance_interval_s: float = 30.0  # how often stuck pages and due refreshes are looked for
    default_max_age_hours: float = 24.0
    wait_for_seed_timeout_s: float = 25.0  # under API Gateway's 29 s
    # A page whose main content is mostly link text (a table of contents, a generated index) is
    # followed for its links but not indexed: its chunks would match every query and answer none.
    navigation_link_density: float = 0.6
    candidate_k: int = 100
    # memlane's fusion function with docset weights: top candidates' cosines sit in a narrow band
    # while max-normalised BM25 spans 0-1, so at the memory defaults (0.6/0.4) the keyword leg
    # decides most orderings; 0.8/0.2 measured best on the docs eval (BENCHMARKS.md, docsets).
    # No recency bonus: documentation does not age, and a refresh must not reorder pages by when
    # they happened to be fetched. Page evidence: a page's best chunk gains 0.2 × the scores of the
    # page's next two best candidates, so a page about the topic beats a page that mentions it once.
    fusion: FusionWeights = field(default_factory=lambda: DOCSET_FUSION)

    @classmethod
    def from_env(cls, **overrides: object) -> DocsetSettings:
        values: dict[str, object] = {
            "per_host_concurrency": _env_int("MEMLANE_CRAWL_CONCURRENCY", cls.per_host_concurrency),
            "fetch_workers": _env_int("MEMLANE_CRAWL_WORKERS", cls.fetch_workers),
            "max_pages": _env_int("MEMLANE_CRAWL_MAX_PAGES", cls.max_pages),
            "refresh_interval_hours": _env_float("MEMLANE_DOCSET_REFRESH_HOURS", cls.refresh_interval_hours),
            "chunk_max_tokens": _env_int("MEMLANE_DOCSET_CHUNK_TOKENS", cls.chunk_max_tokens),
            "chunk_overlap_tokens": _env_int("MEMLANE_DOCSET_CHUNK_OVERLAP", cls.chunk_overlap_tokens),
        }
        weights = FusionWeights(
            vector=_env_float("MEMLANE_DOCSET_WEIGHT_VECTOR", DOCSET_FUSION.vector),
            text=_env_float("MEMLANE_DOCSET_WEIGHT_TEXT", DOCSET_FUSION.text),
            recency=_env_float("MEMLANE_DOCSET_WEIGHT_RECENCY", DOCSET_FUSION.recency),
            support=_env_float("MEMLANE_DOCSET_WEIGHT_SUPPORT", DOCSET_FUSION.support),
            support_chunks=_env_int("MEMLANE_DOCSET_SUPPORT_CHUNKS", DOCSET_FUSION.support_chunks),
        )
        values["fusion"] = weights
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
