"""What a service call needs: the caller (from the authenticated key) and the ports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memlane.config import Settings
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE
from memlane.domain.models import Document
from memlane.observability import NoMetrics
from memlane.ports import (
    BlobStore,
    Cache,
    Clock,
    Embedder,
    ImageReader,
    JobQueue,
    MetadataStore,
    Metrics,
    SearchIndex,
    Summarizer,
    Transcriber,
)
from memlane.services.ratelimit import RateLimiter

if TYPE_CHECKING:  # Powertools' idempotency (and boto3 behind it) loads only where a key is sent
    from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

    from memlane.connections.ports import ConnectionPorts
    from memlane.services.key_admin import KeyRegistry


@dataclass(frozen=True)
class Principal:
    """Who is calling. Built only from a verified API key; the tenant scope of every query."""

    organization_id: str
    key_id: str
    user_id: str = "api"
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE
    can_manage_keys: bool = False


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
    # The one clock: every "now" of a service, a store's expiry check or a crawl comes from here.
    clock: Clock = field(default_factory=SystemClock)
    # Called after a document is queued, e.g. to wake the local worker (None: nothing to wake).
    on_enqueued: Callable[[Document | None], object] | None = None
    # Runs work off the response path (last_accessed_at updates), like Executor.submit;
    # synchronous when None.
    background: Callable[..., Any] | None = None
    cache: Cache | None = None  # recall results (spec §4.7); no caching when None
    rate_limiter: RateLimiter | None = None  # unlimited when None
    idempotency: BasePersistenceLayer | None = None  # Idempotency-Key ignored when None
    metrics: Metrics = field(default_factory=NoMetrics)  # memlane.observability names what is counted
    # The gateway's record of keys (API Gateway's usage plan on AWS), for keys created through
    # the API; None locally, where no gateway meters keys.
    key_registry: KeyRegistry | None = None
    ocr: ImageReader | None = None  # images and scanned PDFs; a media save answers 422 when None
    transcriber: Transcriber | None = None  # audio and video; likewise
    # On AWS, Amazon Transcribe runs as a workflow job rather than in-process (`transcriber` None):
    # saves of audio and video are accepted and queued for it.
    transcribe_in_workflow: bool = False
    connections: ConnectionPorts | None = None  # synced outside services (spec §11); routes answer 503 when None
