"""The ports the core talks to. Adapters (memlane.adapters.*) implement them; composition happens
at the edge (the CLI, the local server, functions/*), never inside a service.

Protocols, not base classes: a test hands in an in-memory fake with the same methods.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import (
    ApiKey,
    Chunk,
    ContentType,
    Document,
    DocumentStatus,
    IngestJob,
    Organization,
    Project,
)


class Clock(Protocol):
    def now(self) -> datetime: ...


class Metrics(Protocol):
    """Operational counts (memlane.observability names them): CloudWatch EMF through Powertools on
    AWS, in-process counters locally. Names only, no per-tenant dimensions: a metric per
    organization would cost money per organization and say nothing an alarm can use."""

    def count(self, name: str, value: int = 1) -> None: ...


# --------------------------------------------------------------------------- metadata


class MetadataStore(Protocol):
    """The source of truth for organizations, keys, projects, documents and chunk records.
    Every document/project read takes the organization id and filters on it inside the query."""

    # organizations and keys
    def create_organization(self, org: Organization) -> Organization: ...
    def get_organization(self, org_id: str) -> Organization | None: ...
    def find_organization_by_slug(self, slug: str) -> Organization | None: ...
    def put_api_key(self, key: ApiKey) -> None: ...
    def find_api_key_by_hash(self, key_hash: str) -> ApiKey | None: ...
    def list_api_keys(self, org_id: str | None = None) -> list[ApiKey]: ...
    def revoke_api_key(self, key_id: str, when: datetime) -> bool: ...

    # projects
    def create_project(self, project: Project) -> Project: ...
    def get_project(self, org_id: str, project_id: str) -> Project | None: ...
    def find_project_by_slug(self, org_id: str, slug: str) -> Project | None: ...
    def list_projects(self, org_id: str) -> list[Project]: ...
    def count_documents(self, org_id: str) -> dict[str, int]: ...
    def update_project(self, project: Project) -> None: ...
    def delete_project(self, org_id: str, project_id: str) -> bool: ...

    # documents
    def put_document(self, doc: Document) -> None: ...
    def get_document(self, org_id: str, document_id: str) -> Document | None: ...
    def find_document_by_hash(self, org_id: str, project_id: str, content_hash: str) -> Document | None: ...
    def set_status(
        self, org_id: str, document_id: str, status: DocumentStatus, reason: str | None = None
    ) -> None: ...
    def delete_document(self, org_id: str, document_id: str) -> bool: ...
    def recent_documents(
        self, org_id: str, project_ids: Sequence[str], filters: RecallFilters, now: datetime, limit: int
    ) -> list[Document]: ...
    def get_documents(self, org_id: str, document_ids: Sequence[str]) -> list[Document]: ...
    def touch_documents(self, org_id: str, document_ids: Sequence[str], when: datetime) -> None: ...
    def list_documents(self, org_id: str, project_id: str) -> list[Document]: ...
    def page_documents(
        self, org_id: str, project_id: str, now: datetime, *, limit: int, cursor: str | None = None,
        include_superseded: bool = False,
    ) -> DocumentPage: ...
    def document_stats(self, org_id: str, since: datetime) -> DocumentStats: ...
    def find_latest_by_source_url(self, org_id: str, project_id: str, source_url: str) -> Document | None: ...
    def expired_documents(self, now: datetime, limit: int) -> list[Document]: ...
    def record_forgotten(self, doc: Document, when: datetime, reason: str) -> None: ...
    def list_forgotten(self, org_id: str, limit: int | None = None) -> list[dict[str, Any]]: ...
    def mark_source_changed(self, org_id: str, source_url: str, when: datetime,
                            exclude_project_id: str | None = None) -> int:
        """Set source_changed_at on the organization's documents saved from `source_url` (except
        in `exclude_project_id`, the docset's own pages); returns how many."""
        ...

    # deletion receipts (memlane.services.receipts): what a delete removed and how that was checked
    def put_receipt(self, org_id: str, receipt_id: str, body: str, when: datetime) -> None: ...
    def get_receipt(self, org_id: str, receipt_id: str) -> str | None: ...

    # chunks (the record of what was indexed; the search index is a rebuildable projection)
    def put_chunks(self, org_id: str, document_id: str, chunks: Sequence[Chunk]) -> None: ...
    def get_chunks(self, org_id: str, document_id: str) -> list[Chunk]: ...
    def get_chunks_by_id(self, org_id: str, chunk_ids: Sequence[str]) -> list[Chunk]: ...


@dataclass(frozen=True)
class DocumentPage:
    """One page of a listing, newest first; `next_cursor` continues it (None at the end)."""

    documents: list[Document]
    next_cursor: str | None


@dataclass(frozen=True)
class DocumentStats:
    total: int  # every stored document, versions included
    created_since: int  # of those, created at or after the time asked about
    content_bytes: int  # UTF-8 bytes of their cleaned text


def encode_cursor(created_at: str, document_id: str) -> str:
    """Where a listing stopped (the last item's sort key), opaque to clients."""
    return base64.urlsafe_b64encode(f"{created_at}|{document_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """(created_at, document_id) of the item a listing stopped at."""
    try:
        position = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError("cursor", "is not a cursor this API returned") from exc
    created_at, sep, document_id = position.partition("|")
    if not sep or not created_at or not document_id:
        raise InvalidInputError("cursor", "is not a cursor this API returned")
    return created_at, document_id


class BlobStore(Protocol):
    """Raw and cleaned content by key (S3 on AWS). A delete leaves nothing behind: on a versioned
    bucket it removes every version of the key, not just the current one."""

    def put(self, key: str, data: bytes) -> None: ...
    def get(self, key: str) -> bytes | None: ...
    def delete(self, key: str) -> None: ...
    def keys(self, prefix: str = "") -> list[str]: ...
    def delete_prefix(self, prefix: str) -> int: ...
    def versions(self, prefix: str) -> int:
        """How many stored versions of keys under `prefix` exist, noncurrent versions and delete
        markers included (a deletion receipt reads this: zero means nothing is left)."""
        ...


@runtime_checkable
class SaveOrder(Protocol):
    """Optional for a MetadataStore: the order in which a project's documents were saved, for
    recall's neighbouring-memories stage (memlane.recall.neighbours). A store without it recalls
    without that stage."""

    def saved_around(
        self, org_id: str, document_ids: Sequence[str], window: int, max_gap_seconds: float, now: datetime
    ) -> dict[str, tuple[list[str], list[str]]]:
        """For each document, the ids of up to `window` documents saved just before it and up to
        `window` just after it in its project (ready, unexpired, current versions; ordered by
        created_at, ties unordered), each list nearest first and each step within `max_gap_seconds`."""
        ...


# --------------------------------------------------------------------------- search


@dataclass(frozen=True)
class RecallFilters:
    content_types: tuple[ContentType, ...] = ()
    created_after: datetime | None = None
    tags: tuple[str, ...] = ()  # a document matches when it carries any of these tags
    include_superseded: bool = False  # older versions of a document are hidden unless asked for


@dataclass(frozen=True)
class SearchScope:
    """Who may see what. Built by services from the authenticated key, never from a body; every
    index adapter applies it inside both legs."""

    organization_id: str
    project_ids: tuple[str, ...]  # never empty: "all projects" is expanded by the service
    filters: RecallFilters = field(default_factory=RecallFilters)
    now: datetime | None = None  # documents whose forget_after is before this are invisible


@dataclass(frozen=True)
class Candidate:
    """One chunk returned by one search leg, with that leg's raw score."""

    chunk_id: str
    document_id: str
    chunk_index: int
    score: float
    created_at: datetime


@dataclass(frozen=True)
class LegResults:
    vector: list[Candidate]
    text: list[Candidate]


@dataclass(frozen=True)
class IndexHoldings:
    """What the search index still holds of one document (a deletion receipt reads this)."""

    text: int  # entries the text (BM25) leg can match
    vector: int  # vectors the k-NN leg can return


@dataclass(frozen=True)
class IndexedChunk:
    chunk: Chunk
    vector: Sequence[float]
    # The text of the memories saved around this one (memlane.ingest.context): matched by the text
    # leg at a lower weight than the chunk's own words; never returned by recall.
    context: str = ""


class SearchIndex(Protocol):
    """k-NN + BM25 over chunks. Engines return candidates with raw scores; memlane ranks them."""

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None: ...
    def delete_document(self, org_id: str, document_id: str) -> None: ...
    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None: ...
    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int
    ) -> LegResults: ...
    def document_ids(self, org_id: str | None = None) -> set[str]: ...
    def holdings(self, document_id: str) -> IndexHoldings:
        """Read from the index itself (any organization: a document id is unique), not from what
        memlane believes it wrote."""
        ...


# --------------------------------------------------------------------------- models


@runtime_checkable
class Embedder(Protocol):
    @property
    def id(self) -> str:
        """Names the model and dimension, e.g. 'minilm-l6-v2/384'. Stores refuse to mix ids."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...
    def embed_query(self, text: str) -> list[float]: ...


@dataclass
class Summary:
    summary: str
    metadata: dict[str, Any]  # tags, category, language, ... (spec §3.7)


class Summarizer(Protocol):
    def summarize(self, title: str, text: str, content_type: ContentType, language: str | None) -> Summary: ...


# --------------------------------------------------------------------------- reading media


class ImageReader(Protocol):
    """OCR: the text of one page image (PNG bytes; memlane.ingest.media normalises every format
    first). Tesseract locally, an OpenAI vision model, Amazon Textract on AWS."""

    @property
    def id(self) -> str: ...

    def read_text(self, png: bytes) -> str: ...


@dataclass(frozen=True)
class TranscriptSegment:
    start: float  # seconds from the start of the recording
    end: float
    text: str


@dataclass(frozen=True)
class Transcript:
    segments: list[TranscriptSegment]
    language: str | None = None
    duration: float | None = None


class Transcriber(Protocol):
    """Speech to text with timestamps. OpenAI's transcription API in-process; Amazon Transcribe
    runs as an asynchronous job the ingestion workflow waits for (memlane.adapters.aws.transcribe)."""

    @property
    def id(self) -> str: ...

    def transcribe(self, data: bytes, mime: str) -> Transcript: ...


# --------------------------------------------------------------------------- queue and cache


class JobQueue(Protocol):
    def enqueue(self, job: IngestJob) -> None: ...
    def claim(self, now: datetime, lease_seconds: int) -> IngestJob | None: ...
    def complete(self, job_id: str) -> None: ...
    def retry_later(self, job_id: str, error: str, not_before: datetime) -> None: ...
    def pending_count(self) -> int: ...


class Cache(Protocol):
    """Recall results by key. Keys embed per-project generation numbers: a write to a project
    bumps its generation (one write), which makes every older key unreachable without a scan."""

    def get(self, key: str, now: datetime) -> bytes | None: ...
    def set(self, key: str, value: bytes, ttl_seconds: int, now: datetime,
            document_ids: Sequence[str] = ()) -> None: ...
    def generations(self, scope_keys: Sequence[str]) -> dict[str, int]: ...
    def bump_generation(self, scope_key: str) -> int: ...
    def purge_document(self, document_id: str) -> int: ...
    def entries_naming(self, document_id: str) -> int: ...


# --------------------------------------------------------------------------- documentation sets

if TYPE_CHECKING:  # the docset records live with the docset service; only annotations need them here
    from memlane.docsets.models import ClientSession, Docset, DocsetPage, PageCounts, PageStatus


class DocsetStore(Protocol):
    """Docsets, the crawl state of their pages and client sessions (memlane.docsets). Docset reads
    take the organization id; page operations take a docset id already resolved within it."""

    def create_docset(self, docset: Docset) -> Docset: ...
    def update_docset(self, docset: Docset) -> None: ...
    def get_docset(self, org_id: str, docset_id: str) -> Docset | None: ...
    def list_docsets(self, org_id: str | None = None) -> list[Docset]: ...
    def delete_docset(self, org_id: str, docset_id: str) -> bool: ...

    def add_pages(self, docset: Docset, urls: Sequence[str], now: int) -> list[str]: ...
    def insert_page(self, page: DocsetPage) -> bool: ...
    def save_page(self, page: DocsetPage) -> None: ...
    def get_page(self, docset_id: str, page_id: str) -> DocsetPage | None: ...
    def delete_page(self, docset_id: str, page_id: str) -> None: ...
    def claim_pages(self, now: int, limit: int, exclude_docsets: Sequence[str] = ()) -> list[DocsetPage]: ...
    def claim_page(self, docset_id: str, page_id: str, now: int,
                   stuck_before: int | None = None) -> DocsetPage | None: ...
    def next_due(self) -> int | None: ...
    def list_pages(self, docset_id: str, status: PageStatus | None = None, limit: int = 100,
                   offset: int = 0) -> tuple[list[DocsetPage], int]: ...
    def page_counts(self, docset_id: str, stuck_before: int) -> PageCounts: ...
    def stuck_pages(self, docset_id: str, stuck_before: int, limit: int = 100) -> list[DocsetPage]: ...
    def release_stuck(self, stuck_before: int, now: int) -> int: ...
    def requeue_docset(self, docset_id: str, now: int, clear_hashes: bool) -> tuple[int, int, int]: ...
    def page_ids(self, docset_id: str) -> list[tuple[str, str | None]]: ...

    def put_session(self, session: ClientSession) -> None: ...
    def get_session(self, org_id: str, session_id: str) -> ClientSession | None: ...
    def delete_session(self, org_id: str, session_id: str) -> bool: ...
    def list_sessions(self, org_id: str) -> list[ClientSession]: ...
