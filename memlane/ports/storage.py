"""Storage: the metadata store (the source of truth, conversations included) and the blob store."""

from __future__ import annotations

import base64
import bisect
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import (
    ApiKey,
    Chunk,
    Document,
    DocumentStatus,
    Organization,
    Project,
    conversation_order,
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
    def add_document(self, doc: Document) -> Document | None:
        """Store a new document unless its project already holds a live document (any status but
        failed) with the same non-empty content hash: then store nothing and return that document.
        Atomic: of two saves of one content racing each other, one is stored and the other gets it
        (a conversation re-sent twice at once stores its messages once)."""
        ...
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
    def conversation_messages(self, org_id: str, document_ids: Sequence[str]) -> set[str]:
        """The ids among `document_ids` of messages of a conversation (saved with a conversation_id),
        read without their content (recall asks it of its text-leg candidates)."""
        ...
    def touch_documents(self, org_id: str, document_ids: Sequence[str], when: datetime) -> None: ...
    def list_documents(self, org_id: str, project_id: str) -> list[Document]: ...
    def page_documents(
        self, org_id: str, project_id: str, now: datetime, *, limit: int, cursor: str | None = None,
        include_superseded: bool = False,
    ) -> DocumentPage: ...
    def document_stats(self, org_id: str, since: datetime, apart: Collection[str] = ()) -> DocumentStats:
        """The organization's document figures; the documents of the projects in `apart` (the
        documentation sets' projects) are counted in `apart_total` only, not in `total` or
        `created_since`. `content_bytes` counts every document (the storage used)."""
        ...
    def find_latest_by_source_url(self, org_id: str, project_id: str, source_url: str) -> Document | None: ...
    def expired_documents(self, now: datetime, limit: int) -> list[Document]: ...
    def mark_source_changed(self, org_id: str, source_url: str, when: datetime,
                            exclude_project_id: str | None = None) -> int:
        """Set source_changed_at on the organization's documents saved from `source_url` (except
        in `exclude_project_id`, the docset's own pages); returns how many."""
        ...
    # Conversations: the memories saved with one conversation_id into one project, in
    # conversation order (memlane.domain.models.conversation_order). Contextual indexing and the
    # recall neighbour stage read only these; a memory without conversation_id has no neighbours.
    def next_message_index(self, org_id: str, project_id: str, conversation_id: str) -> int:
        """One more than the highest message_index of the conversation's documents (any status
        or version); 0 for a conversation not seen yet."""
        ...
    def conversation_documents(
        self, org_id: str, project_id: str, conversation_id: str, now: datetime, *, pending: bool = False
    ) -> list[Document]:
        """The conversation's visible documents (ready, current version, unexpired), in
        conversation order; with `pending`, also those still being written (queued, processing),
        never failed ones: what a save compares a re-sent conversation with."""
        ...
    def conversation_around(
        self, org_id: str, document_ids: Sequence[str], window: int, now: datetime
    ) -> dict[str, tuple[list[str], list[str]]]:
        """For each of these documents that is a visible message of a conversation, the ids of up
        to `window` visible messages before it and after it in that conversation, nearest first.
        Documents without a conversation (or not visible) are left out."""
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
    total: int  # every stored document outside the projects set apart, versions included
    created_since: int  # of those, created at or after the time asked about
    content_bytes: int  # UTF-8 bytes of the cleaned text of every document, set apart or not
    apart_total: int = 0  # documents of the projects set apart (documentation pages), versions included


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


def around_in_conversations(
    store: DocumentStore, org_id: str, document_ids: Sequence[str], window: int, now: datetime
) -> dict[str, tuple[list[str], list[str]]]:
    """`conversation_around` from `get_documents` and `conversation_documents`: one read of the
    documents, then one read per conversation they belong to (a conversation is read whole: its
    messages are the unit recall lifts together, tens to hundreds of short memories). A document
    that is not visible itself (being written, being removed) still has its place in the order,
    so the writer can ask who will carry it before it is ready."""
    if not document_ids or window <= 0:
        return {}
    wanted = [d for d in store.get_documents(org_id, list(dict.fromkeys(document_ids))) if d.conversation_id]
    by_conversation: dict[tuple[str, str], list[Document]] = {}
    for d in wanted:
        by_conversation.setdefault((d.project_id, d.conversation_id or ""), []).append(d)
    out: dict[str, tuple[list[str], list[str]]] = {}
    for (project_id, conversation_id), docs in by_conversation.items():
        messages = store.conversation_documents(org_id, project_id, conversation_id, now)
        for d in docs:
            others = [m for m in messages if m.id != d.id]
            i = bisect.bisect_left([conversation_order(m) for m in others], conversation_order(d))
            out[d.id] = ([m.id for m in others[max(0, i - window):i]][::-1], [m.id for m in others[i:i + window]])
    return out
