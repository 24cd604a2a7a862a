"""Storage: the metadata store (the source of truth), the blob store, and the optional save order."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import (
    ApiKey,
    Chunk,
    Document,
    DocumentStatus,
    Organization,
    Project,
)
from memlane.ports.search import RecallFilters


class OrganizationStore(Protocol):
    """Organizations and their API keys (the authorizer and key administration use only this)."""

    def create_organization(self, org: Organization) -> Organization: ...
    def get_organization(self, org_id: str) -> Organization | None: ...
    def find_organization_by_slug(self, slug: str) -> Organization | None: ...
    def put_api_key(self, key: ApiKey) -> None: ...
    def find_api_key_by_hash(self, key_hash: str) -> ApiKey | None: ...
    def list_api_keys(self, org_id: str | None = None) -> list[ApiKey]: ...
    def revoke_api_key(self, key_id: str, when: datetime) -> bool: ...


class ProjectStore(Protocol):
    """An organization's projects. Every read takes the organization id."""

    def create_project(self, project: Project) -> Project: ...
    def get_project(self, org_id: str, project_id: str) -> Project | None: ...
    def find_project_by_slug(self, org_id: str, slug: str) -> Project | None: ...
    def list_projects(self, org_id: str) -> list[Project]: ...
    def count_documents(self, org_id: str, *, current_only: bool = False) -> dict[str, int]:
        """Documents per project id (every status and version; with current_only, only the
        current version of each memory: what a person calls their memories)."""
        ...
    def update_project(self, project: Project) -> None: ...
    def delete_project(self, org_id: str, project_id: str) -> bool: ...


class DocumentStore(Protocol):
    """Documents: their records, content and status; listings, recall's recent leg, the forget
    sweep's expired documents. Every read but `expired_documents` takes the organization id and
    filters on it inside the query."""

    def put_document(self, doc: Document) -> None: ...
    def get_document(self, org_id: str, document_id: str) -> Document | None: ...
    def find_document_by_hash(self, org_id: str, project_id: str, content_hash: str) -> Document | None: ...
    def set_status(
        self, org_id: str, document_id: str, status: DocumentStatus, reason: str | None = None
    ) -> None: ...
    def delete_document(self, org_id: str, document_id: str) -> bool:
        """The document, its chunk records and its content."""
        ...
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
    def mark_source_changed(self, org_id: str, source_url: str, when: datetime,
                            exclude_project_id: str | None = None) -> int:
        """Set source_changed_at on the organization's documents saved from `source_url` (except
        in `exclude_project_id`, the docset's own pages); returns how many."""
        ...


class DeletionRecordStore(Protocol):
    """What deletions leave behind, never the content: deletion receipts
    (memlane.documents.receipts: what a delete removed and how that was checked) and the log of
    documents forgotten by their forget_after."""

    def put_receipt(self, org_id: str, receipt_id: str, body: str, when: datetime) -> None: ...
    def get_receipt(self, org_id: str, receipt_id: str) -> str | None: ...
    def record_forgotten(self, doc: Document, when: datetime, reason: str) -> None: ...
    def list_forgotten(self, org_id: str, limit: int | None = None) -> list[dict[str, Any]]: ...


class ChunkStore(Protocol):
    """Chunk records: the record of what was indexed (the search index is a rebuildable projection)."""

    def put_chunks(self, org_id: str, document_id: str, chunks: Sequence[Chunk]) -> None: ...
    def get_chunks(self, org_id: str, document_id: str) -> list[Chunk]: ...
    def get_chunks_by_id(self, org_id: str, chunk_ids: Sequence[str]) -> list[Chunk]: ...


class MetadataStore(OrganizationStore, ProjectStore, DocumentStore, DeletionRecordStore, ChunkStore, Protocol):
    """The source of truth for organizations, keys, projects, documents and chunk records: every
    part above, in one store (DynamoDB on AWS, SQLite locally). A function that uses one part
    names that part (`OrganizationStore`, …); one that uses several takes the whole store."""


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
