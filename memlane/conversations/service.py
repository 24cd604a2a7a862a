"""Saving a conversation (POST /v3/conversations): every message a memory of the conversation,
written together through the one write path; its extraction queued off the request path when an
LLM is configured, and the answer saying plainly when it is not.

The extraction job is a record in the blob store (`extractions/{org}/{id}.json`: ids, status,
counts, never message text) and a job in the durable queue (SQLite locally, SQS on AWS) named
`extract:{id}` (`EXTRACTION_JOB_PREFIX`), which the worker hands to memlane.conversations.extraction.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime

from pydantic import ValidationError

from memlane.conversations import budget
from memlane.conversations.placing import Placement, place_messages
from memlane.conversations.schemas import (
    ConversationIn,
    ConversationMessageOut,
    ConversationMessagesOut,
    ConversationOut,
    ExtractionOut,
    ExtractionState,
    MessageIn,
    SavedMessage,
)
from memlane.domain.errors import InvalidInputError, MemlaneError, NotFoundError
from memlane.domain.facts import decisions_of, kind_of, own_metadata
from memlane.domain.models import Document, IngestJob, conversation_order, new_id
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, MemoryOut
from memlane.ports import Services
from memlane.services.memory import SaveBatch, duplicate_answer, stage_memory
from memlane.services.projects import resolve_project

EXTRACTION_JOB_PREFIX = "extract:"
NO_LLM = ("no LLM is configured: messages are saved and recalled, no fact is extracted (set MEMLANE_LLM_BASE_URL "
          "for an OpenAI-compatible server such as Ollama, OPENAI_API_KEY, or MEMLANE_LLM=bedrock on AWS)")
NOTHING_NEW = "nothing new to draw facts from: every message of the request was already saved"


def record_key(org_id: str, extraction_id: str) -> str:
    return f"extractions/{org_id}/{extraction_id}.json"


def load_record(svc: Services, org_id: str, extraction_id: str) -> ExtractionOut | None:
    raw = svc.blobs.get(record_key(org_id, extraction_id))
    if raw is None:
        return None
    try:
        return ExtractionOut.model_validate_json(raw)
    except ValidationError:
        return None


def store_record(svc: Services, org_id: str, record: ExtractionOut) -> None:
    svc.blobs.put(record_key(org_id, record.id), record.model_dump_json().encode())


def extraction_state(svc: Services, org_id: str, wanted: bool = True) -> ExtractionState | None:
    """Why extraction would not run now (off or refused), or None when it would."""
    if svc.llm is None:
        return ExtractionState(status="off", reason=NO_LLM)
    if not wanted:
        return ExtractionState(status="off", reason="extract: false in the request")
    refused = budget.refusal(svc, org_id)
    return ExtractionState(status="refused", reason=refused.message) if refused is not None else None


def save_conversation(svc: Services, who: Principal, body: ConversationIn) -> ConversationOut:
    """Each message a memory of the conversation, written together; messages the conversation
    already holds (a chat client re-sending its history, memlane.conversations.placing) are
    answered as duplicates and stored once."""
    project = resolve_project(svc, who, body.project_id)
    batch = SaveBatch(svc)
    for i, (message, place) in enumerate(zip(body.messages, place_messages(svc, who.organization_id, project.id, body),
                                              strict=True)):
        if place.duplicate_of is not None:
            batch.add(i, duplicate_answer(place.duplicate_of))
            continue
        try:
            batch.add(i, stage_memory(svc, who, _message_memory(body, message, place, project.id), protect_write=True,
                                      own=_own(body, message)))
        except MemlaneError as exc:
            raise InvalidInputError(f"messages.{i}", exc.message) from exc
    answers = batch.write()
    if failed := [a for a in answers.values() if isinstance(a, Exception)]:
        raise failed[0]
    saved = [answer for _, answer in sorted(answers.items()) if isinstance(answer, MemoryOut)]
    messages = [SavedMessage(id=m.id, message_index=m.message_index, status=m.status, duplicate=m.duplicate)
                for m in saved]
    new = [m.id for m in messages if not m.duplicate]
    state = extraction_state(svc, who.organization_id, body.extract)
    if state is None and not new:
        state = ExtractionState(status="off", reason=NOTHING_NEW)
    if state is None:
        state = queue_extraction(svc, who, project.id, body, new)
    return ConversationOut(conversation_id=body.conversation_id, project_id=project.id, messages=messages,
                           saved=len(new), duplicates=len(messages) - len(new), extraction=state)


def _message_memory(body: ConversationIn, message: MessageIn, place: Placement, project_id: str) -> MemoryIn:
    label = message.speaker or message.role or "message"
    return MemoryIn(content=message.content, title=f"{label} · {body.conversation_id}"[:500], project_id=project_id,
                    conversation_id=body.conversation_id, message_index=place.message_index,
                    updates_memory_id=place.updates)


def _own(body: ConversationIn, message: MessageIn) -> dict[str, str]:
    own = {"kind": "message", "role": message.role, "speaker": message.speaker,
           "said_at": message.time.isoformat() if message.time else None, "subject": body.subject}
    return {k: v for k, v in own.items() if v}


def queue_extraction(svc: Services, who: Principal, project_id: str, body: ConversationIn,
                     message_ids: list[str]) -> ExtractionState:
    now = svc.clock.now()
    record = ExtractionOut(id=new_id(), conversation_id=body.conversation_id, project_id=project_id,
                           subject=body.subject, status="queued", messages=list(dict.fromkeys(message_ids)),
                           created_at=now, user_id=who.user_id)
    store_record(svc, who.organization_id, record)  # before the job that reads it
    ((svc.llm.queue if svc.llm else None) or svc.queue).enqueue(IngestJob(document_id=EXTRACTION_JOB_PREFIX + record.id, organization_id=who.organization_id,
                                not_before=now, created_at=now))
    if svc.on_enqueued is not None:
        svc.on_enqueued(None)
    return ExtractionState(status="queued", id=record.id)


def get_extraction(svc: Services, who: Principal, extraction_id: str) -> ExtractionOut:
    """The record, each fact's text and decision read from the fact itself (gone with it)."""
    record = load_record(svc, who.organization_id, extraction_id)
    if record is None:
        raise NotFoundError(f"extraction {extraction_id} not found")
    ids = [f.fact_id for f in record.facts if f.fact_id and f.text is None]
    docs = {d.id: d for d in svc.metadata.get_documents(who.organization_id, ids)} if ids else {}
    facts = []
    for f in record.facts:
        doc = docs.get(f.fact_id or "")
        if f.text is not None or f.fact_id is None:
            facts.append(f)
        elif doc is None:
            facts.append(f.model_copy(update={"error": "the fact has been deleted since"}))
        else:
            decision = next((d for d in reversed(decisions_of(doc))
                             if d.decided_at == f.decided_at and d.sources == f.sources), None)
            facts.append(f.model_copy(update={"text": doc.content, "decision": decision}))
    return record.model_copy(update={"facts": facts})


MAX_PAGE = 100


def list_conversation(svc: Services, who: Principal, conversation_id: str, project_id: str | None,
                      limit: int = 50, cursor: str | None = None) -> ConversationMessagesOut:
    """GET /v3/conversations/{id}: the conversation's visible memories (ready, current version,
    unexpired) in conversation order, a page at a time. The cursor is the place of the page's last
    message, so a message saved or deleted between pages neither repeats nor skips another."""
    project = resolve_project(svc, who, project_id)
    after = _place(cursor) if cursor is not None else None
    docs = svc.metadata.conversation_documents(who.organization_id, project.id, conversation_id, svc.clock.now())
    if not docs:
        raise NotFoundError(f"conversation {conversation_id!r} not found in project {project.id}")
    rest = [d for d in docs if after is None or conversation_order(d) > after]
    page = rest[:limit]
    messages = []
    for doc in page:
        own = own_metadata(doc)
        said = own.get("said_at")
        try:
            time = datetime.fromisoformat(said) if isinstance(said, str) else None
        except ValueError:
            time = None
        messages.append(ConversationMessageOut(
            id=doc.id, message_index=doc.message_index, kind=kind_of(doc),
            role=own.get("role") if isinstance(own.get("role"), str) else None,
            speaker=own.get("speaker") if isinstance(own.get("speaker"), str) else None,
            time=time, content=doc.content, created_at=doc.created_at))
    more = len(rest) > len(page) and page
    return ConversationMessagesOut(conversation_id=conversation_id, project_id=project.id, messages=messages,
                                   next_cursor=_cursor(page[-1]) if more else None)


def _cursor(doc: Document) -> str:
    index, created_at, doc_id = conversation_order(doc)
    raw = json.dumps([index, created_at.isoformat(), doc_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _place(cursor: str) -> tuple[int, datetime, str]:
    try:
        index, created_at, doc_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        when = datetime.fromisoformat(created_at)
        if not isinstance(index, int) or not isinstance(doc_id, str) or when.tzinfo is None:
            raise ValueError(cursor)
        return index, when, doc_id
    except (ValueError, TypeError) as exc:
        raise InvalidInputError("cursor", "must be the next_cursor of a previous page") from exc
