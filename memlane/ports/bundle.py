"""The Services bundle: every port a service call needs, composed at the edge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memlane.config import Settings
from memlane.domain.models import Document
from memlane.observability import NoMetrics
from memlane.ports.cache import Cache
from memlane.ports.clock import Clock, Metrics, SystemClock
from memlane.ports.connections import ConnectionPorts
from memlane.ports.idempotency import Idempotency
from memlane.ports.keys import KeyRegistry
from memlane.ports.llm import LLM
from memlane.ports.models import Embedder, ImageReader, Summarizer, Transcriber
from memlane.ports.queue import JobQueue
from memlane.ports.ratelimit import RateLimiter
from memlane.ports.rerank import Rerank
from memlane.ports.search import SearchIndex
from memlane.ports.storage import BlobStore, MetadataStore


@dataclass(frozen=True)
class Services:
    """The ports a service needs, composed once at the edge (memlane.local.compose, functions/*) and
    immutable after that: a variant is `dataclasses.replace(svc, field=...)`."""

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
    idempotency: Idempotency | None = None  # Idempotency-Key ignored when None
    metrics: Metrics = field(default_factory=NoMetrics)  # memlane.observability names what is counted
    # The gateway's record of keys (API Gateway's usage plan on AWS), for keys created through
    # the API; None locally, where no gateway meters keys.
    key_registry: KeyRegistry | None = None
    ocr: ImageReader | None = None  # images and scanned PDFs; a media save answers 422 when None
    transcriber: Transcriber | None = None  # audio and video; likewise
    # On AWS, Amazon Transcribe runs as a workflow job rather than in-process (`transcriber` None):
    # saves of audio and video are accepted and queued for it.
    transcribe_in_workflow: bool = False
    # Recall's optional rerank stage (memlane.recall.rerank): off when None, as locally.
    rerank: Rerank | None = None
    connections: ConnectionPorts | None = None  # synced outside services (spec §11); routes answer 503 when None
    # Facts from conversations (memlane.conversations): off when None, and every answer says so.
    llm: LLM | None = None
    # Where extraction jobs go: SQS with its DLQ on AWS; None: `queue` (the durable local queue,
    # whose worker runs them).
    extraction_queue: JobQueue | None = None
