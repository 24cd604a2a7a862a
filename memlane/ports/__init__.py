"""The ports the core talks to, one module per concern. Adapters (memlane.adapters.*) implement
them; composition happens at the edge (the CLI, the local server, functions/*), never inside a
service. Every name is importable from here (`from memlane.ports import MetadataStore`).

Protocols, not base classes: a test hands in an in-memory fake with the same methods.

    storage      MetadataStore (OrganizationStore, ProjectStore, DocumentStore, DeletionRecordStore,
                 ChunkStore; conversations in order), BlobStore (and listing cursors)
    search       SearchIndex and the scope, filters and candidates of a search
    llm          LLM (structured JSON completions) and its Completion
    models       Embedder, Summarizer, ImageReader, Transcriber
    queue        JobQueue, WorkflowStarter
    cache        Cache
    clock        Clock, Metrics
    ratelimit    RateLimiter
    rerank       Reranker and the Rerank option (recall's optional rerank stage)
    keys         KeyRegistry
    fetch        Fetcher (the crawler)
    inventory    Inventory (what `memlane doctor` reads of a deployment)
    docsets      DocsetStore, CrawlDispatcher, DocsetShelf
    connections  ConnectionStore, TokenVault, SyncDispatcher, ProviderApps (ConnectionPorts)
    bundle       Services: the ports of a service call, composed once (MediaReaders, Platform,
                 LanguageModel: its optional capabilities)
"""

from memlane.ports.budget import MediaBudget, Meter
from memlane.ports.bundle import (
    LanguageModel,
    MediaReaders,
    Platform,
    Services,
)
from memlane.ports.cache import (
    Cache,
    project_scope_key,
)
from memlane.ports.clock import (
    Clock,
    Metrics,
    SystemClock,
)
from memlane.ports.connections import (
    ConnectionPorts,
    ConnectionStore,
    OAuthApp,
    ProviderApps,
    SyncDispatcher,
    TokenVault,
)
from memlane.ports.docsets import (
    CrawlDispatcher,
    DocsetShelf,
    DocsetStore,
)
from memlane.ports.fetch import (
    SKIP_STATUSES,
    Fetcher,
    FetchResult,
)
from memlane.ports.inventory import (
    BLOB_KINDS,
    Inventory,
    StoredBlob,
    StoredDocument,
    stored_blob,
)
from memlane.ports.keys import (
    KeyRegistry,
)
from memlane.ports.llm import LLM, Completion
from memlane.ports.models import (
    Embedder,
    ImageReader,
    Summarizer,
    Summary,
    Transcriber,
    Transcript,
    TranscriptSegment,
)
from memlane.ports.queue import (
    JobQueue,
    WorkflowStarter,
)
from memlane.ports.ratelimit import (
    WINDOW_SECONDS,
    RateDecision,
    RateLimiter,
    decide,
)
from memlane.ports.rerank import (
    Rerank,
    Reranker,
)
from memlane.ports.search import (
    UNKNOWN_KIND,
    Candidate,
    IndexedChunk,
    IndexHoldings,
    LegResults,
    RecallFilters,
    SearchIndex,
    SearchScope,
)
from memlane.ports.storage import (
    BlobStore,
    ChunkStore,
    DeletionRecordStore,
    DocumentPage,
    DocumentStats,
    DocumentStore,
    MetadataStore,
    OrganizationStore,
    ProjectStore,
    around_in_conversations,
    decode_cursor,
    encode_cursor,
)

__all__ = [
    "around_in_conversations",
    "BLOB_KINDS",
    "BlobStore",
    "Cache",
    "Candidate",
    "ChunkStore",
    "Completion",
    "LLM",
    "Clock",
    "CrawlDispatcher",
    "ConnectionPorts",
    "ConnectionStore",
    "DeletionRecordStore",
    "DocsetShelf",
    "DocsetStore",
    "DocumentPage",
    "DocumentStats",
    "DocumentStore",
    "Embedder",
    "FetchResult",
    "Fetcher",
    "ImageReader",
    "IndexHoldings",
    "IndexedChunk",
    "Inventory",
    "JobQueue",
    "KeyRegistry",
    "LegResults",
    "MetadataStore",
    "Metrics",
    "OAuthApp",
    "OrganizationStore",
    "ProjectStore",
    "ProviderApps",
    "RateDecision",
    "RateLimiter",
    "RecallFilters",
    "Rerank",
    "Reranker",
    "SKIP_STATUSES",
    "SearchIndex",
    "SearchScope",
    "UNKNOWN_KIND",
    "MediaBudget",
    "Meter",
    "Services",
    "LanguageModel",
    "MediaReaders",
    "Platform",
    "StoredBlob",
    "StoredDocument",
    "Summarizer",
    "Summary",
    "SyncDispatcher",
    "SystemClock",
    "TokenVault",
    "Transcriber",
    "Transcript",
    "TranscriptSegment",
    "WINDOW_SECONDS",
    "WorkflowStarter",
    "decide",
    "decode_cursor",
    "encode_cursor",
    "project_scope_key",
    "stored_blob",
]
