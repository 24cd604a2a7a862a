"""`memlane doctor`'s conversation check: messages stored twice because a chat client re-sent the
conversation's history before saves recognised a re-send (memlane.domain.resends says which are
copies). The repair keeps each original, moves the facts drawn from a copy onto it, and removes
the copies through the one delete path (a deletion receipt records them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from memlane.documents.receipts import delete_with_receipt
from memlane.domain.facts import facts_of, kind_of, sources_of, with_own
from memlane.domain.models import Document, DocumentStatus, conversation_order
from memlane.domain.resends import resent_copies, said_in
from memlane.ports import Services

REPAIR_REASON = "doctor: a message stored again when its conversation was re-sent"


@dataclass(frozen=True)
class ResentCopy:
    copy: Document
    original: Document


def find_resent_copies(svc: Services, org_ids: Iterable[str]) -> list[ResentCopy]:
    """Every organization's conversations, read whole (an operator's tool: full reads expected)."""
    found: list[ResentCopy] = []
    for org_id in org_ids:
        for project in svc.metadata.list_projects(org_id):
            for messages in _conversations(svc.metadata.list_documents(org_id, project.id)):
                copies = resent_copies([said_in(m) for m in messages])
                found += [ResentCopy(messages[c], messages[o]) for c, o in sorted(copies.items())]
    return found


def _conversations(docs: Iterable[Document]) -> list[list[Document]]:
    """The current messages saved by conversation saves, per conversation, in conversation order."""
    by_id: dict[str, list[Document]] = defaultdict(list)
    for doc in docs:
        if (doc.conversation_id and doc.superseded_by is None and doc.status != DocumentStatus.FAILED
                and kind_of(doc) == "message"):
            by_id[doc.conversation_id].append(doc)
    return [sorted(messages, key=conversation_order) for messages in by_id.values()]


def remove_resent_copies(svc: Services, found: list[ResentCopy]) -> None:
    by_org: dict[str, list[ResentCopy]] = defaultdict(list)
    for item in found:
        by_org[item.copy.organization_id].append(item)
    for org_id, items in by_org.items():
        copies = [_facts_moved_to_original(svc, item) for item in items]
        delete_with_receipt(svc, org_id, copies, REPAIR_REASON)


def _facts_moved_to_original(svc: Services, item: ResentCopy) -> Document:
    """The facts drawn from the copy name the original as their source instead, and the original
    lists them, so removing the copy removes no fact. Returns the copy as it is now stored."""
    copy, moved = item.copy, facts_of(item.copy)
    if not moved:
        return copy
    md = svc.metadata
    for fact in md.get_documents(copy.organization_id, moved):
        sources = [item.original.id if s == copy.id else s for s in sources_of(fact)]
        md.put_document(fact.model_copy(update={"metadata": with_own(fact, sources=list(dict.fromkeys(sources)))}))
    original = md.get_document(item.original.organization_id, item.original.id) or item.original
    facts = list(dict.fromkeys([*facts_of(original), *moved]))
    md.put_document(original.model_copy(update={"metadata": with_own(original, facts=facts)}))
    copy = copy.model_copy(update={"metadata": with_own(copy, facts=None)})
    md.put_document(copy)
    return copy
