"""Save, read and delete memories (spec §5 POST /v3/memory, GET/DELETE /v3/documents/:id)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlane import observability
from memlane.documents.lifecycle import latest_version, version_chain
from memlane.documents.media import MediaSave, prepare_media
from memlane.documents.receipts import DeletionReceipt, delete_with_receipt
from memlane.documents.writer import WriteOutcome, WriteRequest, apply_summary
from memlane.documents.writing import enqueue, protect, write_in_request, write_protected
from memlane.domain.errors import InvalidInputError, NotFoundError, TransientError
from memlane.domain.facts import RESERVED_KEY, decisions_of, facts_of, kind_of, sources_of, subject_of
from memlane.domain.fields import MAX_SAFE_INT
from memlane.domain.models import Document, DocumentStatus, IngestJob, new_id
from memlane.domain.principal import Principal
from memlane.domain.requests import (
    ChunkOut,
    DocumentOut,
    DocumentPatchIn,
    FactOut,
    MediaOut,
    MemoryIn,
    MemoryOut,
    VersionOut,
)
from memlane.domain.salience import apply_salience
from memlane.ingest.pipeline import MessagePlace, Original, Prepared, prepare_save
from memlane.ports import Services
from memlane.services.projects import resolve_project

log = logging.getLogger(__name__)


def _out(doc: Document, duplicate: bool = False) -> MemoryOut:
    return MemoryOut(
        id=doc.id,
        title=doc.title,
        status=doc.status,
        summary=doc.summary,
        chunk_count=doc.chunk_count,
        metadata=doc.metadata,
        project_id=doc.project_id,
        content_type=doc.content_type,
        created_at=doc.created_at,
        duplicate=duplicate,
        conversation_id=doc.conversation_id,
        message_index=doc.message_index,
        kind=kind_of(doc),
    )


def save_memory(svc: Services, who: Principal, body: MemoryIn, *, inline: bool | None = None,
                own: dict[str, Any] | None = None) -> MemoryOut:
    """Validate, extract and dedupe now; chunk/embed/index now (small content) or via the queue.

    Returns the document; its `status` says which: `ready` (processed, 201) or `queued` (202).
    `own`: memlane's part of the metadata (stage_memory).
    """
    staged = stage_memory(svc, who, body, inline=inline, own=own)
    if staged.document is None:
        assert staged.answer is not None
        return staged.answer
    (outcome,) = write_in_request(svc, [staged.document])
    return settle(svc, staged.document, outcome)


@dataclass
class Staged:
    """A save checked and stored as `queued`: either answered already (`answer`: a duplicate, or
    queued for the job worker) or to be written in this request (`document`)."""

    answer: MemoryOut | None = None
    document: Document | None = None
    job: IngestJob | None = None  # its safety net, when staged with protect=True


def duplicate_answer(doc: Document) -> Staged:
    """A save answered by a document already stored (its duplicate): nothing is stored."""
    return Staged(_out(doc, duplicate=True))


def settle(svc: Services, doc: Document, outcome: WriteOutcome) -> MemoryOut:
    """The answer for a document written in the request (raises what failed it for good)."""
    if outcome.document is not None:
        return _out(outcome.document)
    if not outcome.transient:
        assert outcome.error is not None
        raise outcome.error
    # The embedder or index is down: the document is kept, queued with the reason, and the job
    # worker writes it once they are back.
    log.warning("inline write of %s failed (%s); queued for retry", doc.id, outcome.error)
    return _out(svc.metadata.get_document(doc.organization_id, doc.id) or doc)


class SaveBatch:
    """Saves staged one at a time (`stage_memory(..., protect_write=True)`) and written together
    through the one write path, so their chunks share embedding batches: a bulk save's items, a
    conversation's messages. `add` keeps each staged save under its position; `write` writes those
    still to be written and answers every position, a save that failed for good with its error."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.answers: dict[int, MemoryOut | Exception] = {}
        self._to_write: list[tuple[int, Document, IngestJob]] = []

    def add(self, position: int, staged: Staged) -> None:
        if staged.document is None:
            assert staged.answer is not None
            self.answers[position] = staged.answer
        else:
            assert staged.job is not None
            self._to_write.append((position, staged.document, staged.job))

    def write(self) -> dict[int, MemoryOut | Exception]:
        if self._to_write:
            written = write_protected(self.svc, [WriteRequest(doc) for _, doc, _ in self._to_write],
                                      [job for *_, job in self._to_write])
            for (position, doc, _), outcome in zip(self._to_write, written, strict=True):
                try:
                    self.answers[position] = settle(self.svc, doc, outcome)
                except Exception as exc:  # noqa: BLE001 - that save's error; the caller says which kind
                    self.answers[position] = exc
            self._to_write = []
        return self.answers


def _place_in_conversation(svc: Services, who: Principal, project_id: str, body: MemoryIn,
                           previous: Document | None) -> tuple[str | None, int | None]:
    """(conversation_id, message_index) of a save: as given; a new version of a message keeps the
    message's place; with no index, after the conversation's last message (a bulk save stages
    its items in order), which must stay a position a client can read exactly."""
    conversation_id, message_index = body.conversation_id, body.message_index
    if conversation_id is None and previous is not None and body.updates_memory_id:
        conversation_id, message_index = previous.conversation_id, previous.message_index
    if conversation_id is not None and message_index is None:
        message_index = svc.metadata.next_message_index(who.organization_id, project_id, conversation_id)
        if message_index > MAX_SAFE_INT:
            raise InvalidInputError("message_index", f"the conversation's last message is at {MAX_SAFE_INT}, the "
                                                     "largest position; give this message a smaller one")
    return conversation_id, message_index


@dataclass(frozen=True)
class _Save:
    """One save as its steps see it: who saves what, into which project, as which new document."""

    who: Principal
    body: MemoryIn
    project_id: str
    document_id: str
    now: datetime

    @property
    def source_url(self) -> str | None:
        return str(self.body.source_url) if self.body.source_url else None

    @property
    def message_place(self) -> MessagePlace | None:
        if self.body.conversation_id is None:
            return None
        return MessagePlace(self.body.conversation_id, self.body.message_index, self.document_id)


def stage_memory(svc: Services, who: Principal, body: MemoryIn, *, inline: bool | None = None,
                 protect_write: bool = False, own: dict[str, Any] | None = None) -> Staged:
    """Everything of a save up to the write: validation, extraction (or reading media), dedupe,
    versions, and the document stored as `queued`. `protect_write`: a document to be written in
    the request gets its safety-net job before it is stored (callers that store several before
    writing them together). `own`: memlane's part of the metadata (a message's role, a fact's
    sources: memlane.domain.facts), which a client's body cannot carry."""
    now = svc.clock.now()
    if body.forget_after is not None and body.forget_after <= now:
        raise InvalidInputError("forget_after", "must be in the future")
    save = _Save(who, body, resolve_project(svc, who, body.project_id).id, new_id(), now)
    updated = _updated_version(svc, save)
    found = prepare_save(body.content, body.content_type, body.title, save.source_url, save.message_place)
    svc.metrics.count(observability.MEMORY_SAVED)
    content = _content(svc, save, found)
    if isinstance(content, Document):
        svc.metrics.count(observability.MEMORY_DUPLICATE)
        return duplicate_answer(content)
    previous = updated if updated is not None else _earlier_version_of_page(svc, save)
    doc = _document(svc, save, content, previous, own)
    return _store_new(svc, doc, content if isinstance(content, MediaSave) else None, inline=inline,
                      protect_write=protect_write)


def _updated_version(svc: Services, save: _Save) -> Document | None:
    """The version a save says it updates (`updates_memory_id`): the end of that document's chain,
    so an update of an old version extends the chain. A 404 before any of the content is read."""
    if not save.body.updates_memory_id:
        return None
    target = svc.metadata.get_document(save.who.organization_id, save.body.updates_memory_id)
    if target is None:
        raise NotFoundError(f"updates_memory_id: document {save.body.updates_memory_id} not found")
    return latest_version(svc, target)


def _content(svc: Services, save: _Save, found: Prepared | Original) -> Prepared | MediaSave | Document:
    """The content as the new document holds it (media read now, or left to the job), or the
    document that holds it already: a duplicate, by its text or, before any of it is read, by the
    original's bytes."""
    existing = svc.metadata.find_document_by_hash(save.who.organization_id, save.project_id, found.content_hash)
    if existing is not None:
        return existing
    if isinstance(found, Prepared):
        return found
    media = prepare_media(svc, save.who.organization_id, save.document_id, found)
    if media is not None:
        return media
    assert found.text_pages is not None  # scanned pages nobody here reads: the PDF's other pages, as text
    return _content(svc, save, found.text_pages)


def _earlier_version_of_page(svc: Services, save: _Save) -> Document | None:
    """Same URL, changed content: a new version of that page (spec §9.1)."""
    if not save.source_url:
        return None
    return svc.metadata.find_latest_by_source_url(save.who.organization_id, save.project_id, save.source_url)


def _document(svc: Services, save: _Save, content: Prepared | MediaSave, previous: Document | None,
              own: dict[str, Any] | None) -> Document:
    """The new document, `queued`: its content, the metadata of the body and of its content, and
    its place among versions and in its conversation."""
    # A salience (Vidurai's CRITICAL…NOISE) sets forget_after from its retention unless one is given.
    metadata, forget_after = apply_salience(dict(save.body.metadata), save.now, save.body.forget_after)
    if own:
        metadata[RESERVED_KEY] = own
    fields, found = _fields(content)
    for k, v in found.items():
        metadata.setdefault(k, v)
    conversation_id, message_index = _place_in_conversation(svc, save.who, save.project_id, save.body, previous)
    return Document(
        id=save.document_id,
        organization_id=save.who.organization_id,
        project_id=save.project_id,
        user_id=save.who.user_id,
        source_url=save.source_url,
        metadata=metadata,
        updates_memory_id=previous.id if previous else None,
        forget_after=forget_after,
        created_at=save.now,
        updated_at=save.now,
        status=DocumentStatus.QUEUED,
        conversation_id=conversation_id,
        message_index=message_index,
        **fields,
    )


def _fields(content: Prepared | MediaSave) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document's fields from its content, and the metadata its content brings (a code file's
    language, a PDF's pages and author), which the body's own metadata overrides."""
    if isinstance(content, MediaSave):
        return dict(title=content.title, content=content.text, content_type=content.content_type,
                    content_hash=content.content_hash, media=content.media), content.metadata
    extracted = content.extracted
    found = {"language": extracted.language} if extracted.language else {}
    found.update((k, v) for k, v in extracted.metadata.items() if k not in found)
    return dict(title=content.title, content=extracted.text, content_type=extracted.content_type,
                content_hash=content.content_hash), found


def _store_new(svc: Services, doc: Document, media_save: MediaSave | None, *, inline: bool | None,
               protect_write: bool) -> Staged:
    """The new document stored as `queued`, to be written in the request (small) or by the job
    worker, unless a save of the same content racing this one stored it first: then that one is
    the answer, as any duplicate's, and nothing of this one is left behind."""
    if media_save is not None:
        svc.blobs.put(media_save.media.blob_key, media_save.original)  # before the document names it
    deferred = media_save is not None and media_save.deferred  # the job reads the original first
    if inline is None:
        inline = len(doc.content) <= svc.settings.inline_max_chars
    writes_now = inline and not deferred
    if writes_now:
        doc = _summarized(svc, doc)
    job = protect(svc, doc) if protect_write and writes_now else None
    if (winner := svc.metadata.add_document(doc)) is not None:
        if job is not None:
            svc.queue.complete(job.id)
        if media_save is not None:
            svc.blobs.delete(media_save.media.blob_key)
        svc.metrics.count(observability.MEMORY_DUPLICATE)
        return Staged(_out(winner, duplicate=True))
    if not writes_now:
        enqueue(svc, doc)
        return Staged(_out(doc))
    return Staged(document=doc, job=job)


def _summarized(svc: Services, doc: Document) -> Document:
    """Summarized before it is first stored, so the write that follows stores it once more (ready),
    not twice. A summarizer that is down leaves it to the writer's retry."""
    try:
        return apply_summary(doc, svc.summarizer.summarize(doc.title, doc.content, doc.content_type,
                                                           doc.language))
    except TransientError as exc:
        log.warning("summary of %s deferred: %s", doc.id, exc.message)
        return doc


def get_document(
    svc: Services, who: Principal, document_id: str, include_versions: bool = False
) -> DocumentOut:
    doc = svc.metadata.get_document(who.organization_id, document_id)
    if doc is None or doc.is_expired(svc.clock.now()):
        raise NotFoundError(f"document {document_id} not found")
    chunks = svc.metadata.get_chunks(who.organization_id, document_id)
    versions = None
    if include_versions:
        versions = [
            VersionOut(id=v.id, title=v.title, created_at=v.created_at, summary=v.summary)
            for v in version_chain(svc, doc)
        ]
    kind = kind_of(doc)
    return DocumentOut(
        **doc.model_dump(exclude={"organization_id", "user_id", "embedder", "media"}),
        media=MediaOut.model_validate(doc.media.model_dump()) if doc.media else None,
        kind=kind,
        fact=FactOut(subject=subject_of(doc), sources=sources_of(doc), decisions=decisions_of(doc))
        if kind == "fact" else None,
        derived_facts=facts_of(doc),
        versions=versions,
        chunks=[
            ChunkOut(
                memory_id=c.id,
                content=c.content,
                chunk_index=c.chunk_index,
                chunk_count=c.chunk_count,
                start_offset=c.start_offset,
                end_offset=c.end_offset,
                heading_path=c.heading_path,
                start_seconds=c.start_seconds,
                end_seconds=c.end_seconds,
            )
            for c in chunks
        ],
    )


def delete_document(svc: Services, who: Principal, document_id: str) -> DeletionReceipt:
    """Removes the document everywhere and returns the receipt that says so, store by store."""
    doc = svc.metadata.get_document(who.organization_id, document_id)
    if doc is None:
        raise NotFoundError(f"document {document_id} not found")
    return delete_with_receipt(svc, who.organization_id, [doc], "api")


def update_document(svc: Services, who: Principal, document_id: str, patch: DocumentPatchIn) -> DocumentOut:
    """Edit a document's title, tags or forget_after (the web app's memory page).

    Each of these is written into the chunk records and both index legs (the title is embedded and
    matched, tags and expiry are filtered on), so the edited document goes through the one write
    path again, exactly like a save: in the request when it is small, by the job queue otherwise.
    Its content, summary, version links and id stay as they were.
    """
    md = svc.metadata
    now = svc.clock.now()
    doc = md.get_document(who.organization_id, document_id)
    if doc is None or doc.is_expired(now):
        raise NotFoundError(f"document {document_id} not found")
    if patch.forget_after is not None and patch.forget_after <= now:
        raise InvalidInputError("forget_after", "must be in the future")
    changes: dict[str, object] = {}
    if patch.title is not None and patch.title != doc.title:
        changes["title"] = patch.title
    if patch.tags is not None and patch.tags != doc.tags:
        changes["metadata"] = {**doc.metadata, "tags": patch.tags}
    if "forget_after" in patch.model_fields_set and patch.forget_after != doc.forget_after:
        changes["forget_after"] = patch.forget_after
    if not changes:
        return get_document(svc, who, document_id)
    edited = doc.model_copy(update={**changes, "updated_at": now, "status": DocumentStatus.QUEUED,
                                    "status_reason": "edited: being written again"})
    if len(edited.content) > svc.settings.inline_max_chars:
        md.put_document(edited)
        enqueue(svc, edited)
        return get_document(svc, who, document_id)
    (outcome,) = write_in_request(svc, [edited])
    if outcome.error is not None and not outcome.transient:
        raise outcome.error
    if outcome.error is not None:  # the embedder or index is down: queued with the reason, retried
        log.warning("write of edited %s failed (%s); queued for retry", edited.id, outcome.error)
    return get_document(svc, who, document_id)
