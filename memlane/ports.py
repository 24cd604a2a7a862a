"""The ports the core talks to. Adapters (memlane.adapters.*) implement them; composition happens
at the edge (the CLI, the local server, functions/*), never inside a service.

Protocols, not base classes: a test hands in an in-memory fake with the same methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

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
    def find_latest_by_source_url(self, org_id: str, project_id: str, source_url: str) -> Document | None: ...
    def expired_documents(self, now: datetime, limit: int) -> list[Document]: ...
    def record_forgotten(self, doc: Document, when: datetime, reason: str) -> None: ...

    # chunks (the record of what was indexed; the search index is a rebuildable projection)
    def put_chunks(self, org_id: str, document_id: str, chunks: Sequence[Chunk]) -> None: ...
    def get_chunks(self, org_id: str, document_id: str) -> list[Chunk]: ...
    def get_chunks_by_id(self, org_id: str, chunk_ids: Sequence[str]) -> list[Chunk]: ...


class BlobStore(Protocol):
    """Raw and cleaned content by key (S3 on AWS)."""

    def put(self, key: str, data: bytes) -> None: ...
    def get(self, key: str) -> bytes | None: ...
    def delete(self, key: str) -> None: ...


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
class IndexedChunk:
    chunk: Chunk
    vector: Sequence[float]


class SearchIndex(Protocol):
    """k-NN + BM25 over chunks. Engines return candidates with raw scores; memlane ranks them."""

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None: ...
    def delete_document(self, org_id: str, document_id: str) -> None: ...
    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None: ...
    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int
    ) -> LegResults: ...
    def document_ids(self, org_id: str | None = None) -> set[str]: ...


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
