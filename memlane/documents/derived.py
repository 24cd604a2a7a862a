"""Facts drawn from messages, when messages go (memlane.domain.facts).

A fact is only as good as the messages it was drawn from. When a delete (or the auto-forget sweep)
removes messages, every fact drawn from those messages alone goes with them, and the deletion
receipt lists it; a fact that another remaining message also supports stays, flagged: the deleted
message leaves its `sources` and is named in its `sources_deleted`.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlane.domain.facts import facts_of, is_fact, own_metadata, sources_of, with_own
from memlane.domain.models import Document
from memlane.ports import Services


def facts_drawn_only_from(svc: Services, org_id: str, docs: Sequence[Document]) -> list[Document]:
    """The facts every source of which is among `docs` (or already gone), not themselves in `docs`."""
    gone = {d.id for d in docs}
    candidates = list(dict.fromkeys(f for d in docs for f in facts_of(d) if f not in gone))
    if not candidates:
        return []
    facts = [f for f in svc.metadata.get_documents(org_id, candidates) if is_fact(f)]
    sources = {s for f in facts for s in sources_of(f) if s not in gone}
    alive = {d.id for d in svc.metadata.get_documents(org_id, sorted(sources))} if sources else set()
    return [f for f in facts if not any(s in alive for s in sources_of(f) if s not in gone)]


def flag_remaining(svc: Services, org_id: str, deleted: Sequence[Document]) -> None:
    """Facts drawn from deleted messages that other messages still support: the deleted ones leave
    their sources and are recorded as deleted sources."""
    gone = {d.id for d in deleted}
    ids = list(dict.fromkeys(f for d in deleted for f in facts_of(d) if f not in gone))
    for fact in svc.metadata.get_documents(org_id, ids) if ids else []:
        lost = [s for s in sources_of(fact) if s in gone]
        if not lost:
            continue
        before = [s for s in own_metadata(fact).get("sources_deleted") or [] if isinstance(s, str)]
        svc.metadata.put_document(fact.model_copy(update={"metadata": with_own(
            fact, sources=[s for s in sources_of(fact) if s not in gone],
            sources_deleted=list(dict.fromkeys([*before, *lost])))}))
