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
class MediaReaders:
    """Reading images, scans and recordings: a media save answers 422 when its reader is None."""

    ocr: ImageReader | None = None  # images and scanned PDFs
    transcriber: Transcriber | None = None  # audio and video
    # On AWS, Amazon Transcribe runs as a workflow job rather than in-process (`transcriber` None):
    # saves of audio and video are accepted and queued for it.
    transcribe_in_workflow: bool = False


@dataclass(frozen=True)
class Platform:
    """What stands in front of the API for every request: each None is simply not enforced."""

    rate_limiter: RateLimiter | None = None  # unlimited when None
    idempotency: Idempotency | None = None  # Idempotency-Key ignored when None
    # The gateway's record of keys (API Gateway's usage plan on AWS), for keys created through
    # the API; None locally, where no gateway meters keys.
    key_registry: KeyRegistry | None = None


@dataclass(frozen=True)
class LanguageModel:
    """Facts from conversations (memlane.conversations): the model, and where its jobs go."""

    model: LLM
    # SQS with its DLQ on AWS; None: the Services' `queue` (the durable local queue, whose worker
    # runs them).
    queue: JobQueue | None = None


@dataclass(frozen=True)
class Services:
    """The ports a service needs, composed once at the edge (memlane.local.compose, memlane.aws.compose)
    and immutable after that: a variant is `dataclasses.replace(svc, field=...)`. The core every
    request uses comes first; then the optional capabilities, each a group of its own (media,
    platform, connections, llm, rerank), so a feature names the capability it needs."""

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
    metrics: Metrics = field(default_factory=NoMetrics)  # memlane.observability names what is counted

    # ---- optional capabilities
    media: MediaReaders = field(default_factory=MediaReaders)
    platform: Platform = field(default_factory=Platform)
    connections: ConnectionPorts | None = None  # synced outside services (spec §11); routes answer 503 when None
    llm: LanguageModel | None = None  # facts from conversations: off when None, and every answer says so
    rerank: Rerank | None = None  # recall's optional rerank stage (memlane.recall.rerank): off when None
