"""What a service call needs: the caller (from the authenticated key) and the ports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memlane.config import Settings
from memlane.ports import BlobStore, Cache, Embedder, JobQueue, MetadataStore, SearchIndex, Summarizer


@dataclass(frozen=True)
class Principal:
    """Who is calling. Built only from a verified API key; the tenant scope of every query."""

    organization_id: str
    key_id: str
    user_id: str = "api"
    rate_limit_per_minute: int = 100


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass
class Services:
    """The ports a service needs, composed at the edge (memlane.local.compose, functions/*)."""

    settings: Settings
    metadata: MetadataStore
    blobs: BlobStore
    index: SearchIndex
    embedder: Embedder
    summarizer: Summarizer
    queue: JobQueue
    clock: Any = field(default_factory=SystemClock)
    # Called after a document is queued, e.g. to wake the local worker or start a workflow.
    on_enqueued: Any = None
    # Runs work off the response path (last_accessed_at updates); synchronous when None.
    background: Any = None
    cache: Cache | None = None  # recall results (spec §4.7); no caching when None
    rate_limiter: Any = None  # memlane.services.ratelimit.RateLimiter; unlimited when None
    idempotency: Any = None  # a Powertools idempotency persistence layer; Idempotency-Key ignored when None
