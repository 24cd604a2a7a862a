"""Request and response bodies of the Mem-Oracle API, field for field as its reference documents
them (camelCase names, epoch-millisecond timestamps, the documented defaults and clamps).

Requests reject unknown fields with a 400 naming them, like the rest of memlane. Two additions,
both optional: `maxPages` on /index (the per-docset page cap, default 5,000) and `mode` on
/retrieve (`bm25` or `vector` rank by one search leg alone, for evaluation; default `hybrid`).
Python names follow memlane's convention (bodies `XxxIn`, answers `XxxOut`: memlane.domain.requests);
the fields keep the seed's names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memlane.domain.fields import NonBlankStr
from memlane.recall.recipes import DOCS_CHUNKS_PER_PAGE, DOCS_TOP_K

MAX_TOP_K = 100
MAX_TOTAL_CHARS = 1_000_000
MAX_PAGES_LIMIT = 500


class _Schema(BaseModel):
    """Built on first use, not at import: only the routes a deployment serves pay for their
    schemas in a Lambda cold start."""

    model_config = ConfigDict(defer_build=True)


class _Request(_Schema):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- /index


class IndexIn(_Request):
    baseUrl: NonBlankStr = Field(max_length=2048, description="Base URL of the documentation site")
    seedSlug: str = Field(max_length=2048, description="Starting path to begin crawling")
    name: str | None = Field(default=None, max_length=200, description="Custom name for the docset")
    allowedPaths: list[str] | None = Field(
        default=None, max_length=50, description="Allowed path prefixes to crawl"
    )
    waitForSeed: bool = Field(default=False, description="Wait for seed page to be indexed before returning")
    maxPages: int | None = Field(
        default=None, ge=1, le=50_000, description="memlane: page cap for this docset (default 5,000)"
    )

    @field_validator("allowedPaths")
    @classmethod
    def _paths(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(len(p) > 1000 for p in value):
            raise ValueError("each path is at most 1000 characters")
        return value


class IndexOut(_Schema):
    docsetId: str
    status: str
    seedIndexed: bool


# --------------------------------------------------------------------------- /retrieve


class RetrieveIn(_Request):
    query: NonBlankStr = Field(min_length=1, max_length=10_000, description="Search query")
    topK: int = Field(default=DOCS_TOP_K, description="Number of results (clamped 1-100)")
    docsetIds: list[str] | None = Field(
        default=None, max_length=100, description="Filter by specific docsets"
    )
    maxChunksPerPage: int = Field(default=DOCS_CHUNKS_PER_PAGE, ge=1, description="Max chunks from same page (diversity)")
    maxTotalChars: int = Field(default=32_000, ge=1, description="Total character budget for results")
    formatSnippets: bool = Field(default=True, description="Include formatted snippets")
    mode: Literal["hybrid", "bm25", "vector"] = Field(
        default="hybrid", description="memlane: rank with both search legs (default) or one alone"
    )
    minRelevance: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="memlane: leave out snippets whose relevance (0-1) is below this; default the "
                    "embedder's calibrated documentation floor; 0 for everything")
    refreshStale: bool = Field(
        default=False, description="memlane: re-fetch stale result pages (conditionally: ETag, "
                                   "Last-Modified) before answering, within refreshBudgetMs")
    refreshBudgetMs: int = Field(default=3_000, ge=0, le=20_000,
                                 description="memlane: time for refreshing stale pages; pages not reached "
                                             "in time are answered as they are, marked stale")

    @field_validator("topK")
    @classmethod
    def _clamp_top_k(cls, value: int) -> int:
        return max(1, min(MAX_TOP_K, value))

    @field_validator("maxChunksPerPage")
    @classmethod
    def _clamp_per_page(cls, value: int) -> int:
        return min(value, MAX_TOP_K)

    @field_validator("maxTotalChars")
    @classmethod
    def _clamp_budget(cls, value: int) -> int:
        return min(value, MAX_TOTAL_CHARS)


class Snippet(_Schema):
    formatted: str
    title: str
    url: str
    breadcrumb: str
    content: str
    charCount: int


class RetrieveResult(_Schema):
    chunkId: str
    pageId: str
    docsetId: str
    content: str
    url: str
    title: str
    heading: str | None
    score: float
    snippet: Snippet | None = None
    relevance: float | None = Field(default=None, description="memlane: 0-1 from raw evidence (cosine, "
                                    "unnormalised BM25, exact rare terms): what the floor compares")
    fetchedAt: int | None = Field(default=None, description="memlane: when the page was last fetched (epoch ms)")
    lastModified: str | None = Field(default=None, description="memlane: the page's Last-Modified header")
    etag: str | None = Field(default=None, description="memlane: the page's ETag")
    stale: bool = Field(default=False, description="memlane: fetched longer ago than the docset's refresh "
                                                    "interval")
    refreshed: bool = Field(default=False, description="memlane: re-fetched by this request (refreshStale)")


class RetrieveOut(_Schema):
    query: str
    results: list[RetrieveResult]
    totalChars: int
    truncated: bool
    refreshedPages: int = Field(default=0, description="memlane: stale pages re-fetched by this request")
    changedPages: int = Field(default=0, description="memlane: of those, pages whose content had changed")
    floor: float | None = Field(default=None, description="memlane: the relevance floor that applied")


# --------------------------------------------------------------------------- docsets and status


class IndexStatusOut(_Schema):
    docsetId: str
    totalPages: int
    indexedPages: int
    pendingPages: int
    errorPages: int
    skippedPages: int
    totalChunks: int
    status: str
    stuckPages: int | None = None  # left out of /status unless asked for or non-zero
    retriedPages: int


class StuckPageOut(_Schema):
    id: str
    url: str
    status: str
    attempts: int
    claimedAt: int | None
    errorMessage: str | None


class DocsetOut(_Schema):
    id: str
    name: str
    projectId: str = Field(description="memlane: the project that holds its pages (kept apart from memories)")
    baseUrl: str
    seedSlug: str
    allowedPaths: list[str]
    createdAt: int
    updatedAt: int
    status: str
    indexStatus: IndexStatusOut
    stuckPageDetails: list[StuckPageOut] | None = None  # /status?includeStuck=true


class StatusOut(_Schema):
    docsets: list[DocsetOut]


class PageOut(_Schema):
    id: str
    url: str
    path: str
    title: str | None
    status: str
    errorMessage: str | None
    fetchedAt: int | None
    indexedAt: int | None


class PagesOut(_Schema):
    pages: list[PageOut]
    total: int
    limit: int
    offset: int


class DeleteOut(_Schema):
    success: bool
    docsetId: str
    receiptId: str | None = Field(default=None, description="memlane: the deletion receipt of the docset's "
                                                             "pages (GET /v3/deletions/{receiptId}).")
    verified: bool | None = Field(default=None, description="memlane: every store read back holds nothing "
                                                             "of the pages.")


# --------------------------------------------------------------------------- refresh


class RefreshAllIn(_Request):
    force: bool = Field(default=False, description="Refresh even if the docset is fresh")
    maxAge: float | None = Field(
        default=None, gt=0, le=24 * 365, description="Max age in hours before refresh is needed (default 24)"
    )
    fullReindex: bool = Field(default=False, description="Clear hashes and re-embed all pages")


class RefreshIn(RefreshAllIn):
    docsetId: str | None = Field(default=None, max_length=100, description="Docset ID to refresh")
    baseUrl: str | None = Field(default=None, max_length=2048, description="Docset base URL to refresh")


class IncrementalOut(_Schema):
    preservedHashes: int
    clearedHashes: int


class RefreshOut(_Schema):
    docsetId: str
    status: str
    refreshed: bool
    message: str
    incremental: IncrementalOut | None = None


class RefreshAllOut(_Schema):
    total: int
    refreshed: int
    results: list[RefreshOut]


# --------------------------------------------------------------------------- sessions


class SessionRegisterIn(_Request):
    sessionId: NonBlankStr = Field(min_length=1, max_length=200)
    clientType: str | None = Field(default=None, max_length=100)


class SessionUnregisterIn(_Request):
    sessionId: str = Field(min_length=1, max_length=200)


class SessionOut(_Schema):
    id: str
    clientType: str | None
    connectedAt: int
    lastHeartbeat: int


class RegisterOut(_Schema):
    success: bool
    session: SessionOut
    totalSessions: int


class UnregisterOut(_Schema):
    success: bool
    existed: bool
    remainingSessions: int
    shouldStop: bool


class SessionsOut(_Schema):
    sessions: list[SessionOut]
    count: int
