"""memlane's domain entities (spec §2), as pydantic v2 models.

Models do no I/O. Server-owned fields (ids, hashes, status, timestamps) are set by services,
never copied from a request body.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


# Chunk ids are derived from the document id so that every index write is an upsert:
# processing the same document twice (a redelivered message, a restarted worker) rewrites the
# same chunk ids instead of adding new ones.
# Tags are what a person or a client gave; keyphrases are what memlane generated (memlane.ingest).
# Both can filter recall: the indexes hold one list of filter labels per document, a keyphrase
# under this prefix so that a tag "home" never matches a generated keyphrase "home".
KEYPHRASE_LABEL = "keyphrase:"


def filter_labels(tags: list[str] | tuple[str, ...], keyphrases: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The labels a document is filtered by (lower case): its tags, then its prefixed keyphrases."""
    labels = [t.lower() for t in tags] + [KEYPHRASE_LABEL + k.lower() for k in keyphrases]
    return list(dict.fromkeys(labels))


_CHUNK_NAMESPACE = uuid.UUID("6f1c7c2e-4f52-4c55-9a53-6d656d6c616e")


def chunk_id_for(document_id: str, chunk_index: int) -> str:
    return str(uuid.uuid5(_CHUNK_NAMESPACE, f"{document_id}:{chunk_index}"))


class ContentType(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    HTML = "html"
    PDF = "pdf"
    IMAGE = "image"
    VIDEO = "video"
    AUDIO = "audio"
    CODE = "code"
    JSON = "json"
    TWEET = "tweet"
    EMAIL = "email"
    NOTE = "note"


class DocumentStatus(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    READY = "ready"
    FAILED = "failed"


class _Entity(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Organization(_Entity):
    id: str = Field(default_factory=new_id)
    name: str
    slug: str
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ApiKey(_Entity):
    """An API key as stored: only the SHA-256 of the secret is kept; the secret is shown once."""

    id: str = Field(default_factory=new_id)
    organization_id: str
    name: str = "default"
    key_hash: str
    prefix: str  # the first characters of the secret, to recognise a key in listings
    created_at: datetime = Field(default_factory=utcnow)
    revoked_at: datetime | None = None
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE
    # May list, create and revoke its organization's keys (the web app's settings page). The local
    # first-start key and operator-issued keys may; a key created through the API says so itself.
    can_manage_keys: bool = False

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class Project(_Entity):
    id: str = Field(default_factory=new_id)
    organization_id: str
    name: str
    slug: str
    description: str | None = None
    is_default: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class MediaInfo(_Entity):
    """The original of a document saved as media (an image, a scanned PDF, audio or video). The
    bytes stay in the content store under `blob_key`; the text read from them (OCR, transcript) is
    the document's content. `extracted_by` is empty until that text exists (a queued media save)."""

    kind: str  # image | pdf | audio | video
    mime: str
    bytes: int
    blob_key: str
    extracted_by: str | None = None  # the engine that read it: tesseract, openai:…, textract, transcribe
    pages: int | None = None  # images in a TIFF, pages of a scanned PDF
    duration_s: float | None = None
    language: str | None = None
    # Transcripts: where each segment starts in `content` and the time range it covers, so every
    # chunk can say which part of the recording it comes from.
    segments: list[tuple[int, float, float]] = Field(default_factory=list)

    @property
    def pending(self) -> bool:
        return self.extracted_by is None


class Document(_Entity):
    """A saved piece of content (spec §2 Document) plus its processing state."""

    id: str = Field(default_factory=new_id)
    organization_id: str
    project_id: str
    user_id: str
    title: str
    content: str = ""  # cleaned, extracted text (what is chunked and indexed)
    summary: str | None = None
    content_type: ContentType = ContentType.TEXT
    source_url: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str = ""
    updates_memory_id: str | None = None
    forget_after: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    last_accessed_at: datetime | None = None
    status: DocumentStatus = DocumentStatus.QUEUED
    status_reason: str | None = None
    chunk_count: int = 0
    embedder: str | None = None  # which embedder produced this document's vectors
    superseded_by: str | None = None  # the newer version of this document, when one exists
    media: MediaInfo | None = None  # saved as an image, a scan, audio or video
    # A refresh of the documentation page this memory was saved from changed the page since.
    source_changed_at: datetime | None = None
    # The conversation this memory is a message of (memlane.documents.contextual and the recall
    # neighbour stage read only this signal) and its position in it: the client's message index,
    # or the next free one when the save did not give it (memlane.services.memory).
    conversation_id: str | None = None
    message_index: int | None = None

    @property
    def tags(self) -> list[str]:
        """The tags a person or a client gave (never generated ones: those are `keyphrases`)."""
        tags = self.metadata.get("tags") or []
        return [str(t) for t in tags] if isinstance(tags, list) else []

    @property
    def language(self) -> str | None:
        """metadata.language when it is a name ("python", "en"); anything else stored there (an
        import, a synced item, a document saved before saves checked it) is no language."""
        language = self.metadata.get("language")
        return language if isinstance(language, str) and language.strip() else None

    @property
    def keyphrases(self) -> list[str]:
        """The keyphrases memlane generated for it (memlane.ingest.keyphrases, or an LLM's)."""
        phrases = self.metadata.get("keyphrases") or []
        return [str(p) for p in phrases] if isinstance(phrases, list) else []

    @property
    def labels(self) -> list[str]:
        """What recall's tag and keyphrase filters match (filter_labels)."""
        return filter_labels(self.tags, self.keyphrases)

    def is_expired(self, now: datetime) -> bool:
        return self.forget_after is not None and self.forget_after <= now


def conversation_order(doc: Document) -> tuple[int, datetime, str]:
    """A document's place in its conversation: message_index, then save time, then id (two saves
    that claimed one index stay in a fixed order on every host)."""
    return (doc.message_index or 0, doc.created_at, doc.id)


class Chunk(_Entity):
    """A searchable piece of a document (spec §2 Memory / ChunkPayload)."""

    id: str
    document_id: str
    organization_id: str
    project_id: str
    content: str
    chunk_index: int
    chunk_count: int
    start_offset: int
    end_offset: int
    heading_path: list[str] = Field(default_factory=list)
    # Denormalised from the document so that both search legs can filter without a join.
    title: str = ""
    content_type: ContentType = ContentType.TEXT
    source_url: str | None = None
    tags: list[str] = Field(default_factory=list)  # the document's filter labels (Document.labels)
    created_at: datetime = Field(default_factory=utcnow)
    forget_after: datetime | None = None
    superseded: bool = False  # a newer version of the document exists
    # Transcripts: the part of the recording this chunk covers, in seconds from its start.
    start_seconds: float | None = None
    end_seconds: float | None = None


class IngestJob(_Entity):
    id: str = Field(default_factory=new_id)
    document_id: str
    organization_id: str
    attempts: int = 0
    not_before: datetime = Field(default_factory=utcnow)
    last_error: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
