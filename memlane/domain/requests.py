"""Request and response models of the /v3 API (spec §5, §12.1). Used by the HTTP resolver (which
derives the OpenAPI document from them), the CLI and the MCP server, so all three validate alike.

Server-owned fields (organization, status, content_hash, ids, timestamps) are not accepted:
unknown fields are rejected with a 400 that names them.

Naming, here and in each feature's schemas (memlane/docsets/schemas.py,
memlane/collections/models.py, memlane/connections/schemas.py, memlane/api/routes/v3_manage.py):

- a request body is `XxxIn` (MemoryIn, RecallIn, DocumentPatchIn; a part of one too: RecallFiltersIn);
- a route's answer is `XxxOut` (MemoryOut, WhoAmIOut, ProjectListOut, DeletedOut);
- a part of an answer is named for what it is (RecalledDocument, DocumentListItem, StoreCheck), and
  so is a record that is an answer of its own as well as a part of others (DeletionReceipt: the
  answer of GET /v3/deletions/{id}, inside every DELETE's answer, and kept by the receipts store);
- the seed APIs (raged's /ingest and /query, Vidurai's tool calls, Mem-Oracle's docsets) keep the
  field names their seeds document, whatever the Python names.

The class name is the schema's name in /openapi.json and clients/typescript/src/schema.d.ts;
clients/typescript/src/index.ts gives the apps their friendly names (`WhoAmI` for WhoAmIOut), so a
rename here changes one line there (`make types`), not the apps.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    SkipValidation,
    field_validator,
    model_validator,
)

from memlane.domain.chunking_plan import CHUNKING_KEY, plan_problem
from memlane.domain.client_metadata import MAX_METADATA_BYTES, check_client_metadata
from memlane.domain.facts import KINDS, Decision, Kind
from memlane.domain.fields import (
    MAX_SAFE_INT,
    Instant,
    InstantOrDay,
    NonBlankStr,
    OptionalTrimmedNonBlankStr,
    TrimmedNonBlankStr,
)
from memlane.domain.models import ContentType, DocumentStatus

MAX_CONTENT_CHARS = 500_000
# Media (images, recordings, PDFs) arrives base64-encoded: up to what a 10 MB body can carry.
MAX_ENCODED_CONTENT_CHARS = 10 * 1024 * 1024
BINARY_CONTENT_TYPES = frozenset({ContentType.PDF, ContentType.IMAGE, ContentType.AUDIO, ContentType.VIDEO})
MAX_TAGS = 100
MAX_LIMIT = 100
MAX_CONVERSATION_ID_CHARS = 200


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError) as exc:
        raise ValueError("must be a UUID") from exc


UUIDStr = Annotated[str, AfterValidator(_uuid)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class MemoryIn(_Request):
    content: NonBlankStr = Field(
        min_length=1,
        max_length=MAX_ENCODED_CONTENT_CHARS,
        description=(
            f"The content to remember: text up to {MAX_CONTENT_CHARS} characters. PDFs, images (PNG, JPEG, "
            "WebP, GIF, TIFF), audio and video are sent base64-encoded (or as a data: URL) with content_type "
            "pdf, image, audio or video; images and scans are read by OCR, recordings transcribed. For "
            "image, audio and video, text is taken as the OCR result or transcript."
        ),
    )
    title: str | None = Field(default=None, max_length=500)
    source_url: HttpUrl | None = None
    content_type: ContentType | None = Field(
        default=None, description="Detected from the content when omitted."
    )
    project_id: UUIDStr | None = Field(
        default=None, description="Defaults to the organization's default project."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description=f"Yours to use, at most {MAX_METADATA_BYTES // 1024} KB as JSON; `memlane` is reserved. "
                    "salience (Vidurai's CRITICAL…NOISE), tags and chunking are read by memlane.")
    tags: list[str] | None = Field(
        default=None,
        description=f"Tags to file the memory under (at most {MAX_TAGS}, each at most 100 characters); merged "
                    "with metadata.tags, duplicates dropped. Recall filters by them.")
    updates_memory_id: UUIDStr | None = None
    forget_after: Instant | None = Field(default=None, description="ISO 8601, in the future.")
    conversation_id: OptionalTrimmedNonBlankStr = Field(
        default=None, min_length=1, max_length=MAX_CONVERSATION_ID_CHARS,
        description=(
            "The conversation this memory is a message of. Only memories of one conversation (in one "
            "project) are indexed with each other's words as context and lift each other in recall; "
            "a memory without it stands alone."
        ),
    )
    message_index: int | None = Field(
        default=None, ge=0, le=MAX_SAFE_INT,
        description=(
            "The message's position in its conversation (0 first). Omitted: after the conversation's "
            "last saved message (in a bulk save, in item order). Needs conversation_id."
        ),
    )

    @model_validator(mode="after")
    def _message_index_needs_conversation(self) -> MemoryIn:
        if self.message_index is not None and self.conversation_id is None:
            raise ValueError("message_index: needs conversation_id")
        return self

    @field_validator("tags")
    @classmethod
    def _top_level_tags(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _clean_tags(v)

    @model_validator(mode="after")
    def _merge_tags(self) -> MemoryIn:
        """Top-level `tags` and `metadata.tags` are one list: metadata.tags first, then the others."""
        if self.tags is None:
            return self
        merged = list(dict.fromkeys([*self.metadata.get("tags", []), *self.tags]))
        if len(merged) > MAX_TAGS:
            raise ValueError(f"tags: at most {MAX_TAGS} tags (with metadata.tags)")
        self.metadata = {**self.metadata, "tags": merged}
        self.tags = merged
        return self

    @model_validator(mode="after")
    def _text_size(self) -> MemoryIn:
        # Only base64 media may be longer than text: its size is checked again once decoded.
        binary = self.content_type in BINARY_CONTENT_TYPES or self.content.lstrip()[:5].lower() == "data:"
        if len(self.content) > MAX_CONTENT_CHARS and not binary:
            raise ValueError(
                f"content: at most {MAX_CONTENT_CHARS} characters of text (media goes base64 with "
                "content_type pdf, image, audio or video)"
            )
        return self

    @field_validator("forget_after")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        # "In the future" is checked by the service, against the injected clock.
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @model_validator(mode="after")
    def _metadata_rules(self) -> MemoryIn:
        check_client_metadata(self.metadata)  # the `memlane` key refused, 64 KB at most
        chunking = plan_problem(self.metadata.get(CHUNKING_KEY))
        if chunking is not None:
            where = f"metadata.{CHUNKING_KEY}" + (f".{chunking[0]}" if chunking[0] else "")
            raise ValueError(f"{where}: {chunking[1]}")
        language = self.metadata.get("language")
        if language is not None and not (isinstance(language, str) and len(language) <= 100):
            raise ValueError("metadata.language: must be a string of at most 100 characters (\"python\", \"en\")")
        return self

    @field_validator("metadata")
    @classmethod
    def _tags(cls, v: dict[str, Any]) -> dict[str, Any]:
        tags = v.get("tags")
        if tags is None:
            return v
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError("tags must be a list of strings")
        if len(tags) > MAX_TAGS:
            raise ValueError(f"at most {MAX_TAGS} tags")
        if any(len(t) > 100 for t in tags):
            raise ValueError("a tag is at most 100 characters")
        return {**v, "tags": [t.strip() for t in tags if t.strip()]}


class MemoryOut(BaseModel):
    id: str
    title: str
    status: DocumentStatus
    summary: str | None = None
    chunk_count: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)
    project_id: str
    content_type: ContentType
    created_at: datetime
    duplicate: bool = Field(default=False, description="True when identical content already existed.")
    conversation_id: str | None = None
    message_index: int | None = Field(default=None, description="Its position in the conversation.")
    kind: Kind = Field(default="memory", description="memory, message (of a conversation) or fact (drawn "
                                                      "from messages by an LLM).")


class RecallFiltersIn(_Request):
    content_type: list[ContentType] | None = None
    created_after: InstantOrDay | None = None
    tags: list[Annotated[str, Field(max_length=100)]] | None = Field(
        default=None, max_length=MAX_TAGS,
        description="Only memories that carry any of these tags (the tags a person or client gave).")
    keyphrases: list[Annotated[str, Field(max_length=100)]] | None = Field(
        default=None, max_length=MAX_TAGS,
        description="Only memories with any of these generated keyphrases (metadata.keyphrases). With `tags`, a "
                    "memory matches either.")
    kind: list[Kind] | None = Field(default=None, max_length=len(KINDS),
                                    description="Only memories of these kinds: memory, message, fact.")


class RecallIn(_Request):
    query: str = Field(default="", max_length=10_000, description="Empty returns the most recent documents.")
    project_id: UUIDStr | None = None
    project_ids: list[UUIDStr] | None = Field(default=None, max_length=100)
    limit: int = Field(default=10, ge=1, description=f"Clamped to {MAX_LIMIT}.")
    filters: RecallFiltersIn | None = None
    include_versions: bool = Field(default=False, description="Also return superseded versions.")
    min_relevance: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="Strict abstention at your own floor: drop results whose relevance is below this (0-1) and "
                    "nothing else; 0 returns everything the search legs found. Default: the calibrated floors, "
                    "strong and weak results both returned, each marked (`match`), and with an unsure answer "
                    "(above the floor, none strong) the first three ranked listed too (weak).")
    strict: bool = Field(
        default=False,
        description="Strict abstention: only strong matches; no result at all when none is strong (default: "
                    "weak matches are returned too, marked `match: \"weak\"`, so a stored answer is never hidden).")
    as_of: Instant | None = Field(
        default=None, description="Recall as memlane knew things then: memories saved by that time, each in "
                                  "the version that was current then (a fact since updated comes back as it was).")

    @field_validator("as_of")
    @classmethod
    def _as_of_aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @field_validator("limit")
    @classmethod
    def _clamp(cls, v: int) -> int:
        return min(v, MAX_LIMIT)


RELEVANCE_DOC = ("0-1, from raw evidence (cosine, unnormalised BM25, exact rare terms) and from how far the result "
                 "stands above the store's other candidates for this query: what the floors compare; null when the "
                 "query is empty")
Match = Literal["strong", "weak"]
MATCH_DOC = ("How sure memlane is of this result: \"strong\" (relevance at or above the strong threshold) or "
             "\"weak\" (between the floor and the strong threshold: possibly related, low confidence); null when "
             "the query is empty.")


class RecalledChunk(BaseModel):
    memory_id: str
    content: str
    chunk_index: int
    score: float
    relevance: float | None = Field(default=None, description=RELEVANCE_DOC)
    heading_path: list[str] = Field(default_factory=list)
    start_seconds: float | None = Field(default=None, description="Transcripts: where this part begins.")
    end_seconds: float | None = None


class RecalledDocument(BaseModel):
    document_id: str
    title: str
    summary: str | None
    score: float = Field(description="The spec's fused score (it can exceed 1); orders the results.")
    relevance: float | None = Field(default=None, description=RELEVANCE_DOC)
    match: Match | None = Field(default=None, description=MATCH_DOC)
    source_url: str | None
    content_type: ContentType
    created_at: datetime
    project_id: str
    chunks: list[RecalledChunk]
    source_changed_at: datetime | None = Field(
        default=None, description="The page at source_url changed after this memory was saved from it.")
    kind: Kind = Field(default="memory", description="memory, message or fact.")
    subject: str | None = Field(default=None, description="A fact: the person it is about, when known.")
    superseded_by: str | None = Field(default=None, description="A newer version exists (include_versions, as_of).")


class RecallOut(BaseModel):
    results: list[RecalledDocument]
    total: int
    query_time_ms: float
    floor: float | None = Field(default=None, description="The relevance floor that applied: nothing below it is "
                                                          "returned (null: empty query).")
    strong: float | None = Field(default=None, description="The strong threshold: a result at or above it is "
                                                           "`match: \"strong\"`, below it `\"weak\"` (null: empty query).")
    stages: list[str] = Field(default_factory=list, description="What ranked the results, in order: \"fusion\" (the spec's score), \"neighbours\" when "
                                  "messages of one conversation lifted each other, \"rerank\"; \"recent\" for an empty query.")
    # The optional rerank stage (AWS, off by default): {"model", "status": "applied" | "skipped",
    # "reranked": documents sent, "reason" when skipped}; absent when no rerank stage is configured.
    rerank: dict[str, object] | None = None


class ProjectIn(_Request):
    name: TrimmedNonBlankStr = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=2_000)


class ProjectOut(BaseModel):
    id: str
    name: str
    slug: str
    description: str | None = None
    document_count: int = Field(description="Stored documents, every version counted (what deleting the project removes).")
    memory_count: int = Field(description="Memories: the current version of each, older versions not counted.")
    is_default: bool
    created_at: datetime


class ProjectListOut(BaseModel):
    projects: list[ProjectOut]


class ChunkOut(BaseModel):
    memory_id: str
    content: str
    chunk_index: int
    chunk_count: int
    start_offset: int
    end_offset: int
    heading_path: list[str]
    start_seconds: float | None = None
    end_seconds: float | None = None


class MediaOut(BaseModel):
    """The original a document was read from (kept in the content store)."""

    kind: str
    mime: str
    bytes: int
    extracted_by: str | None = Field(default=None, description="The engine that read it; null while queued.")
    pages: int | None = None
    duration_s: float | None = None
    language: str | None = None


class VersionOut(BaseModel):
    id: str
    title: str
    created_at: datetime
    summary: str | None


class FactOut(BaseModel):
    """What memlane knows of a fact: who it is about, the messages it was drawn from and every
    reconciliation decision about it, oldest first."""

    subject: str | None = None
    sources: list[str] = Field(description="The messages it was drawn from (ids of memories).")
    decisions: list[Decision]


class DocumentOut(BaseModel):
    id: str
    project_id: str
    title: str
    content: str
    summary: str | None
    content_type: ContentType
    source_url: str | None
    metadata: dict[str, Any]
    content_hash: str
    updates_memory_id: str | None
    forget_after: datetime | None
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    status: DocumentStatus
    status_reason: str | None
    chunk_count: int
    superseded_by: str | None = None
    media: MediaOut | None = None
    source_changed_at: datetime | None = Field(
        default=None, description="A refresh found the page at source_url changed since this was saved.")
    conversation_id: str | None = None
    message_index: int | None = Field(default=None, description="Its position in the conversation.")
    kind: Kind = Field(default="memory", description="memory, message or fact.")
    fact: FactOut | None = Field(default=None, description="A fact's subject, sources and decision history.")
    derived_facts: list[str] = Field(default_factory=list,
                                     description="A message: the facts drawn from it (deleting it removes "
                                                 "those drawn from it alone).")
    chunks: list[ChunkOut]
    versions: list[VersionOut] | None = Field(
        default=None, description="With ?include_versions=true: every version, oldest first."
    )


class WhoAmIOut(BaseModel):
    user_id: str
    email: str | None = None
    organization_id: str
    organization_name: str
    key_id: str
    can_manage_keys: bool = Field(default=False, description="May this key list, create and revoke keys?")


class StoreCheck(BaseModel):
    store: str
    read: str = Field(description="What was read back after the delete.")
    remaining: int = Field(description="Items of the deleted documents the store still holds.")
    holding: list[str] = Field(default_factory=list, description="Documents the store still holds something of.")
    clean: bool


class DeletionReceipt(BaseModel):
    id: str
    reason: str = Field(description="api | auto-forget | docset | project | connection")
    subject: str | None = Field(default=None, description="What was deleted when it was more than a "
                                                            "document: the docset or connection id.")
    documents: list[str]
    facts: list[str] = Field(default_factory=list, description="Facts removed because every message they "
                                                               "were drawn from was deleted (also in documents).")
    requested_at: datetime
    verified_at: datetime
    verified: bool = Field(description="True only when every store read back holds nothing of them.")
    checks: list[StoreCheck]


class DeletedOut(BaseModel):
    id: str
    deleted: bool
    receipt: DeletionReceipt  # DELETE /v3/documents/{id} always answers with its receipt


# --------------------------------------------------------------------------- the web app's routes


def _clean_tags(tags: list[str]) -> list[str]:
    if len(tags) > MAX_TAGS:
        raise ValueError(f"at most {MAX_TAGS} tags")
    if any(len(t) > 100 for t in tags):
        raise ValueError("a tag is at most 100 characters")
    return list(dict.fromkeys(t.strip() for t in tags if t.strip()))


_P = TypeVar("_P", bound=BaseModel)


def _checked_patch(patch: _P, what_to_send: str, not_null: dict[str, str]) -> _P:
    """A PATCH body: at least one field sent, and the fields that cannot be cleared not sent as null."""
    if not patch.model_fields_set:
        raise ValueError(f"body: {what_to_send}")
    for name, problem in not_null.items():
        if name in patch.model_fields_set and getattr(patch, name) is None:
            raise ValueError(f"{name}: {problem}")
    return patch


class DocumentPatchIn(_Request):
    """What a person may change on a saved document. A field left out is kept; `forget_after: null`
    clears the expiry. Title and tags are part of what is embedded and filtered, so changing them
    reprocesses the document (it is `queued` until it is searchable again)."""

    title: OptionalTrimmedNonBlankStr = Field(default=None, min_length=1, max_length=500)
    tags: list[str] | None = Field(default=None, description=f"Replaces the tags (at most {MAX_TAGS}).")
    forget_after: Instant | None = Field(default=None, description="ISO 8601, in the future; null clears it.")

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _clean_tags(v)

    @field_validator("forget_after")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        # "In the future" is checked by the service, against the injected clock (as for saves).
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @model_validator(mode="after")
    def _something(self) -> DocumentPatchIn:
        return _checked_patch(self, "give at least one of title, tags, forget_after",
                              {"title": "must not be null",
                               "tags": "must not be null (send [] to remove every tag)"})


class DocumentListItem(BaseModel):
    """A document in a listing: everything but its content and chunks."""

    id: str
    project_id: str
    title: str
    summary: str | None
    content_type: ContentType
    source_url: str | None
    tags: list[str]
    status: DocumentStatus
    created_at: datetime
    updated_at: datetime
    forget_after: datetime | None
    updates_memory_id: str | None
    superseded_by: str | None


class DocumentListOut(BaseModel):
    documents: list[DocumentListItem]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end.")


class RelatedDocument(BaseModel):
    document_id: str
    title: str
    summary: str | None
    score: float
    relevance: float | None = Field(default=None, description="0-1, from raw evidence: what the floor compares.")
    match: Match | None = Field(default=None, description=MATCH_DOC)
    content_type: ContentType
    project_id: str
    created_at: datetime


class RelatedOut(BaseModel):
    document_id: str
    related: list[RelatedDocument]
    floor: float | None = Field(default=None, description="The relevance floor for related memories.")


class ProjectPatchIn(_Request):
    name: OptionalTrimmedNonBlankStr = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=2_000, description="null or \"\" clears it.")

    @model_validator(mode="after")
    def _something(self) -> ProjectPatchIn:
        return _checked_patch(self, "give name or description", {"name": "must not be null"})


class ProjectDeletedOut(BaseModel):
    id: str
    deleted: bool
    documents_deleted: int
    receipt: DeletionReceipt = Field(description="Every store read back after the project's documents went "
                                                  "(GET /v3/deletions/{receipt.id} reads it again).")


class StatsOut(BaseModel):
    total_memories: int = Field(
        description="Stored memories, every version included; documentation sets' pages are not memories."
    )
    memories_this_week: int = Field(description="Memories saved in the last 7 days (documentation pages not counted).")
    documentation_pages: int = Field(
        0, description="Stored pages of the organization's documentation sets, every version included."
    )
    storage_bytes: int = Field(description="UTF-8 bytes of the stored (cleaned) text, documentation pages included.")
    project_count: int = Field(description="Projects holding memories (a documentation set's project is not counted).")


class ForgottenRecord(BaseModel):
    document_id: str
    project_id: str
    forgotten_at: datetime
    reason: str


class ForgottenOut(BaseModel):
    forgotten: list[ForgottenRecord] = Field(description="Newest first. Never the content.")


class KeyCreateIn(_Request):
    name: TrimmedNonBlankStr = Field(min_length=1, max_length=100)
    can_manage_keys: bool = Field(default=False, description="May the new key list, create and revoke keys?")


MAX_BULK_ITEMS = 100


class BulkMemoriesIn(_Request):
    # SkipValidation: each item is checked on its own, so one bad item is that item's error and
    # the other 99 are still saved (the schema still documents each item as a POST /v3/memory body).
    items: list[SkipValidation[MemoryIn]] = Field(
        min_length=1, max_length=MAX_BULK_ITEMS,
        description=f"Up to {MAX_BULK_ITEMS} memories, each a POST /v3/memory body. Each item counts as one "
                    "request against the key's rate limit.")


class BulkItemOut(BaseModel):
    index: int = Field(description="The item's position in the request.")
    status_code: int = Field(description="What POST /v3/memory would have answered for this item: 201 "
                                         "processed, 202 queued, 200 duplicate, 4xx its error.")
    id: str | None = None
    status: DocumentStatus | None = None
    duplicate: bool = False
    chunk_count: int = 0
    error: str | None = None


class BulkMemoriesOut(BaseModel):
    results: list[BulkItemOut]
    saved: int = Field(description="Items stored (processed or queued), duplicates excluded.")
    duplicates: int
    failed: int


class ContextIn(_Request):
    query: NonBlankStr = Field(min_length=1, max_length=10_000)
    budget: int = Field(default=8_000, ge=200, le=400_000,
                        description="The most the pack's `text` may take, in `budget_unit`.")
    budget_unit: Literal["chars", "tokens"] = Field(
        default="chars", description="tokens: memlane's estimate (about 4 characters a token).")
    projects: list[UUIDStr] | None = Field(default=None, max_length=100,
                                          description="Memory projects to draw from; default all (docsets' "
                                                      "projects excluded); [] for none.")
    docsets: list[Annotated[str, Field(max_length=100)]] | None = Field(
        default=None, max_length=100, description="Docsets to draw from; default all; [] for none.")
    min_relevance: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="Strict abstention at your own floor: leave out pieces whose relevance is below this (0-1); "
                    "default the calibrated floors (memories and documentation have their own), weak memories "
                    "included and marked.")
    strict: bool = Field(default=False, description="Only strong memories (no weak ones, marked or not).")
    profile: bool = Field(default=False, description="Put the profile (GET /v3/profile: stable facts and recent "
                                                     "context) first, inside the budget.")
    profile_subject: OptionalTrimmedNonBlankStr = Field(
        default=None, min_length=1, max_length=200, description="With profile: the person the profile is about.")


class ContextPiece(BaseModel):
    kind: Literal["memory", "docs"]
    title: str
    source: str = Field(description="Where the piece comes from: the page URL, or the memory's id (and the "
                                    "URL it was saved from), with its section or time range.")
    url: str | None = None
    document_id: str
    chunk_id: str
    project_id: str
    docset_id: str | None = None
    score: float
    relevance: float = Field(default=0.0, description="0-1, from raw evidence: what the floor compares.")
    match: Match = Field(default="strong", description=MATCH_DOC + " A weak piece is labelled in `text`.")
    created_at: datetime
    source_changed_at: datetime | None = None
    content: str
    cut: bool = Field(default=False, description="Shortened to fit the budget.")


class ContextOut(BaseModel):
    query: str
    budget: int
    budget_unit: str
    used: int = Field(description="What `text` takes, in budget_unit (never more than budget).")
    pieces: list[ContextPiece]
    text: str = Field(description="The pieces with their sources, every stored line quoted, ready to paste.")
    truncated: bool = Field(description="Something relevant did not fit the budget.")
    dropped: int = Field(description="Relevant pieces left out for the budget.")
    floor: float | None = Field(default=None, description="The memories' relevance floor that applied.")
    strong: float | None = Field(default=None, description="The memories' strong threshold.")
    docs_floor: float | None = Field(default=None, description="The documentation's relevance floor that applied.")
    stages: list[str] = Field(default_factory=list, description="What ranked the memories, in order.")
    profile: bool = Field(default=False, description="The profile is first in `text`.")
