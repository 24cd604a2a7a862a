"""The extraction job: facts drawn from a conversation's messages, each reconciled with the facts
already known, then stored through the one write path.

1. extract: the messages (as data) go to the LLM with memlane.conversations.prompts.EXTRACT_FACTS;
   each fact must cite the messages it comes from (numbers the answer may only take from those
   sent). The checked answer is kept on the job's record, so a retry continues where it stopped.
2. reconcile: each fact against the most similar facts of the same project and subject, found by
   the one retrieval pipeline with the relevance floor off; the LLM classifies it (RECONCILE_FACT):
   - new: stored as a memory of kind `fact`;
   - duplicate: nothing new is stored; the existing fact gains the new sources;
   - update, contradiction: stored as the next version of the existing fact (the version chain:
     the older one stays in history, out of default recall, visible to recall's `as_of`).
   Every decision is kept on the fact with the model's reason (memlane.domain.facts.Decision).
3. link: each source message names the facts drawn from it, so deleting the message finds them
   (memlane.documents.derived).

A transient failure (the LLM down, the index down) is raised to the worker, which retries the job
with backoff; a spent budget is LLMBudgetSpent (the worker waits for the next month); an answer that
does not fit its schema twice fails the extraction (the extract step) or refuses that one fact
(the reconcile step), and the record says which.
"""

from __future__ import annotations

import logging
from datetime import datetime

from memlane import observability
from memlane.conversations.budget import ask
from memlane.conversations.prompts import EXTRACT_FACTS, RECONCILE_FACT, ExtractedFact
from memlane.conversations.schemas import ExtractionOut, FactResult
from memlane.conversations.service import load_record, store_record
from memlane.domain.errors import LLMOutputError
from memlane.domain.facts import (
    Decision,
    Outcome,
    decisions_of,
    facts_of,
    is_fact,
    own_metadata,
    sources_of,
    subject_of,
    with_own,
)
from memlane.domain.models import Document
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallFiltersIn, RecallIn
from memlane.ports import SearchScope, Services
from memlane.recall.service import rank, recall_filters
from memlane.services.memory import save_memory

log = logging.getLogger(__name__)

SIMILAR_FACTS = 5  # existing facts the LLM compares a new fact with


def run_extraction(svc: Services, org_id: str, extraction_id: str, attempt: int = 1) -> ExtractionOut | None:
    """Run (or continue) one extraction. Raises TransientError / LLMBudgetSpent for the worker to
    retry later; returns the finished record (None when it no longer exists)."""
    record = load_record(svc, org_id, extraction_id)
    if record is None or record.status in ("done", "failed"):
        return record
    record = record.model_copy(update={"status": "running", "attempts": attempt, "error": None})
    store_record(svc, org_id, record)
    messages = _messages(svc, org_id, record)
    try:
        if record.extracted is None:
            if not messages:
                return _finish(svc, org_id, record, "done")
            data = {"conversation_id": record.conversation_id, "messages": [
                {"n": n, "speaker": own_metadata(m).get("speaker"), "role": own_metadata(m).get("role"),
                 "time": own_metadata(m).get("said_at"), "text": m.content}
                for n, m in enumerate(messages, start=1)]}
            answer, completion = ask(svc, org_id, EXTRACT_FACTS, data)
            kept = [f for f in answer.facts if any(1 <= n <= len(messages) for n in f.sources)]
            record = record.model_copy(update={
                "extracted": [{**f.model_dump(), "source_ids": [messages[n - 1].id for n in f.sources
                                                                 if 1 <= n <= len(messages)]} for f in kept],
                "tokens": record.tokens + completion.tokens})
            store_record(svc, org_id, record)
            svc.metrics.count(observability.FACTS_EXTRACTED, len(kept))
    except LLMOutputError as exc:
        svc.metrics.count(observability.EXTRACTIONS_FAILED)
        return _finish(svc, org_id, record, "failed", exc.message)
    who = Principal(organization_id=org_id, key_id="extraction", user_id=record.user_id)
    for raw in (record.extracted or [])[len(record.facts):]:
        fact = ExtractedFact.model_validate(raw)
        sources = [s for s in raw.get("source_ids", []) if isinstance(s, str)]
        result, tokens = reconcile_and_store(svc, who, record, fact, sources)
        record = record.model_copy(update={"facts": [*record.facts, result], "tokens": record.tokens + tokens})
        store_record(svc, org_id, record)  # progress: a retry starts after this fact
    return _finish(svc, org_id, record, "done")


def note_waiting(svc: Services, org_id: str, extraction_id: str, attempt: int, reason: str,
                 until: datetime | None) -> None:
    """The job will run again (the LLM was down, the budget is spent): the record says why and when."""
    record = load_record(svc, org_id, extraction_id)
    if record is not None:
        when = f"; next try after {until:%Y-%m-%d %H:%M:%S} UTC" if until is not None else "; retried by the queue"
        store_record(svc, org_id, record.model_copy(update={"status": "queued",
                                                            "error": f"attempt {attempt}: {reason}{when}"}))


def note_given_up(svc: Services, org_id: str, extraction_id: str, reason: str) -> None:
    record = load_record(svc, org_id, extraction_id)
    if record is not None:
        store_record(svc, org_id, record.model_copy(update={"status": "failed", "error": reason,
                                                            "finished_at": svc.clock.now()}))


def _messages(svc: Services, org_id: str, record: ExtractionOut) -> list[Document]:
    found = {d.id: d for d in svc.metadata.get_documents(org_id, record.messages)}
    return [found[i] for i in record.messages if i in found and not found[i].is_expired(svc.clock.now())]


def _finish(svc: Services, org_id: str, record: ExtractionOut, status: str, error: str | None = None) -> ExtractionOut:
    """The record as kept from now on: ids, outcomes and counts, no text (the facts hold theirs)."""
    done = record.model_copy(update={
        "status": status, "error": error, "finished_at": svc.clock.now(), "extracted": None,
        "facts": [f.model_copy(update={"text": None, "decision": None}) for f in record.facts]})
    store_record(svc, org_id, done)
    return done


def similar_facts(svc: Services, who: Principal, project_id: str, subject: str | None, text: str) -> list[Document]:
    """The current facts of this project and subject most like `text`: the one retrieval pipeline,
    relevance floor off (a fact worded differently from the one it updates scores low)."""
    body = RecallIn(query=text, project_id=project_id, limit=SIMILAR_FACTS * 4, min_relevance=0.0,
                    filters=RecallFiltersIn(kind=["fact"]))
    now = svc.clock.now()
    scope = SearchScope(organization_id=who.organization_id, project_ids=(project_id,), filters=recall_filters(body), now=now)
    ranking = rank(svc, scope, body)
    docs = {d.id: d for d in svc.metadata.get_documents(who.organization_id, [r.document_id for r in ranking.documents])}
    out = []
    for r in ranking.documents:
        d = docs.get(r.document_id)
        if d is None or d.is_expired(now) or d.superseded_by or not is_fact(d) or subject_of(d) != subject:
            continue
        out.append(d)
        if len(out) == SIMILAR_FACTS:
            break
    return out


def reconcile_and_store(svc: Services, who: Principal, record: ExtractionOut, fact: ExtractedFact,
                        sources: list[str]) -> tuple[FactResult, int]:
    """Classify one new fact against the known ones and store what that decides. Returns the result
    and the tokens it took."""
    subject = record.subject or fact.subject
    known = similar_facts(svc, who, record.project_id, subject, fact.text)
    now = svc.clock.now()
    model = svc.llm.model.id if svc.llm is not None else ""
    tokens = 0
    target: Document | None = None
    outcome: Outcome
    refused = FactResult(text=fact.text, outcome="refused", sources=sources, decided_at=now)
    if (copied := _copied_message(svc, who.organization_id, fact.text, sources)) is not None:
        # A message repeated word for word is not a fact drawn from it (messages are kept at their
        # place even when their text was said before, so no dedupe would catch this).
        return refused.model_copy(update={
            "error": "the same text is already stored as a memory that is not a fact (a message or a note), "
                     f"{copied}: that memory stands for it"}), 0
    if not known:
        outcome, reason = "new", "no similar fact of this subject was known"
    else:
        try:
            answer, completion = ask(svc, who.organization_id, RECONCILE_FACT, {
                "new_fact": {"text": fact.text, "subject": subject},
                "existing_facts": [{"n": n, "text": d.content, "subject": subject_of(d),
                                    "saved_at": d.created_at.isoformat()} for n, d in enumerate(known, start=1)]})
        except LLMOutputError as exc:
            return refused.model_copy(update={"error": exc.message}), exc.tokens
        tokens = completion.tokens
        outcome, reason = answer.outcome, answer.reason
        if outcome != "new":
            if answer.target is None or not 1 <= answer.target <= len(known):
                return refused.model_copy(update={
                    "error": f"the model classified it {outcome} without naming one of the {len(known)} "
                             "existing facts"}), tokens
            target = known[answer.target - 1]
    decision = Decision(outcome=outcome, reason=reason, fact=fact.text, against=[d.id for d in known],
                        supersedes=target.id if target is not None and outcome in ("update", "contradiction") else None,
                        sources=sources, decided_at=now, model=model)
    if outcome == "duplicate":
        assert target is not None
        confirm(svc, who.organization_id, target, decision, sources)
        _link_messages(svc, who.organization_id, sources, target.id)
        return FactResult(text=fact.text, outcome="duplicate", fact_id=target.id, sources=sources, decided_at=now,
                          decision=decision), tokens
    saved, merged = _save_fact(svc, who, record, fact.text, subject, sources, decision, target)
    if merged and not is_fact(saved):
        return refused.model_copy(update={
            "error": "the same text is already stored as a memory that is not a fact (a message or a note), "
                     f"{saved.id}: that memory stands for it"}), tokens
    if merged:
        outcome, decision = "duplicate", decisions_of(saved)[-1] if decisions_of(saved) else decision
    return FactResult(text=fact.text, outcome=outcome, fact_id=saved.id, sources=sources, decided_at=now,
                      decision=decision), tokens


def _copied_message(svc: Services, org_id: str, text: str, sources: list[str]) -> str | None:
    """The id of a source message whose text the fact repeats word for word, if any."""
    wanted = " ".join(text.split())
    for source_id in sources:
        message = svc.metadata.get_document(org_id, source_id)
        if message is not None and " ".join((message.content or "").split()) == wanted:
            return message.id
    return None


def _save_fact(svc: Services, who: Principal, record: ExtractionOut, text: str, subject: str | None,
               sources: list[str], decision: Decision, target: Document | None) -> tuple[Document, bool]:
    """The fact stored (or, when the very same text is already stored, that memory confirmed);
    whether it merged."""
    body = MemoryIn(content=text, title=f"Fact about {subject}" if subject else "Fact",
                    project_id=record.project_id, updates_memory_id=target.id if target is not None else None)
    own = {"kind": "fact", "subject": subject, "sources": sources, "conversation_id": record.conversation_id,
           "decisions": [decision.model_dump(mode="json")]}
    out = save_memory(svc, who, body, inline=True, own={k: v for k, v in own.items() if v is not None})
    doc = svc.metadata.get_document(who.organization_id, out.id)
    assert doc is not None
    if out.duplicate and not is_fact(doc):
        return doc, True  # identical to a message or a note: nothing to link
    if out.duplicate:
        # The very same text is already stored: the save merged, so this confirms that memory.
        confirm(svc, who.organization_id, doc, decision.model_copy(update={
            "outcome": "duplicate", "supersedes": None,
            "reason": f"identical text already stored (the model said {decision.outcome}: {decision.reason})"}),
            sources)
    _link_messages(svc, who.organization_id, sources, doc.id)
    return svc.metadata.get_document(who.organization_id, doc.id) or doc, out.duplicate


def confirm(svc: Services, org_id: str, fact: Document, decision: Decision, sources: list[str]) -> None:
    """A duplicate: the known fact gains the new sources and the decision; nothing else changes
    (its text, vectors and index entries stay as they are)."""
    current = svc.metadata.get_document(org_id, fact.id) or fact
    if not is_fact(current):  # identical to a memory that is no fact: that memory stands for it
        return
    decisions = [*own_metadata(current).get("decisions", []), decision.model_dump(mode="json")]
    merged = list(dict.fromkeys([*sources_of(current), *sources]))
    svc.metadata.put_document(current.model_copy(update={"metadata": with_own(current, sources=merged,
                                                                                decisions=decisions)}))


def _link_messages(svc: Services, org_id: str, message_ids: list[str], fact_id: str) -> None:
    for message in svc.metadata.get_documents(org_id, message_ids):
        if fact_id not in facts_of(message):
            svc.metadata.put_document(message.model_copy(update={
                "metadata": with_own(message, facts=[*facts_of(message), fact_id])}))
