"""Contextual indexing: a short memory is indexed with the memories saved just before and after it.

Memories saved one after another into a project in one sitting are often one thread: the turns of
a conversation, the notes of a meeting. A turn like "Yes, last Friday, it was so calming!" names
nothing a question would ask for; the turn before it ("Did you go to the poetry reading?") does.
So the index entry of such a memory carries its neighbours too, in two ways:

* the text leg: the neighbours' text is a separate `context` field of the entry, weighted below
  the memory's own words (memlane.adapters.local.bm25.CONTEXT_WEIGHT, OpenSearch `context^w`),
  so a question matching the memory itself still ranks it first;
* the vector leg: the entry's vector is the sum of the memory's own embedding and the embedding
  of the window "before / memory / after", normalised, so it points between what the memory says
  and what the exchange around it is about.

What is stored (the document, its chunks, what recall returns) is unchanged: only the search
projection gains context, so recall still answers with the memory as saved.

Who gets context: a document of one chunk (a short memory; a long document stands on its own)
that is neither a documentation page nor a collection item (a crawl's or an ingest's order is the
ingester's, not an author's), and whose
neighbour in the save order (memlane.ports.SaveOrder: ready, current, unexpired) is such a
document too, saved within `max_gap_seconds` of it (the sitting of the recall neighbour stage).
A store without SaveOrder (DynamoDB today) indexes every memory without context.

The entry is a function of the memory and its two neighbours, so it is rebuilt whenever one of
them changes: the write path rebuilds the neighbours of a memory it commits (its predecessor gains
it as the "after" side), and removing a memory rebuilds those on both sides of it, so a deleted or
forgotten memory's words leave the index with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memlane.domain.models import Document
from memlane.domain.tuning import ContextWeights
from memlane.ports import MetadataStore, SaveOrder


@dataclass(frozen=True)
class Context:
    """The neighbours of one memory as its index entry uses them."""

    before: str = ""
    after: str = ""

    @property
    def empty(self) -> bool:
        return not self.before and not self.after

    def text(self) -> str:
        """The context field of the text leg."""
        return "\n".join(t for t in (self.before, self.after) if t)

    def window(self, own: str, *, after: bool = True) -> str:
        """What the embedder reads for the context half of the vector."""
        return "\n".join(t for t in (self.before, own, self.after if after else "") if t)


NO_CONTEXT = Context()


# Metadata that marks a document written in an order that says nothing about its content: a page
# of a documentation crawl, an item of a raged collection (files of a repository, in the
# ingester's order).
UNORDERED_MARKS = ("docset_id", "raged")


def eligible(doc: Document, chunk_count: int | None = None) -> bool:
    """A short memory: one chunk (`chunk_count`, for a document being written; else as stored),
    neither a documentation page nor a collection item."""
    count = doc.chunk_count if chunk_count is None else chunk_count
    return count == 1 and not any(mark in doc.metadata for mark in UNORDERED_MARKS)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def saved_order(metadata: MetadataStore) -> SaveOrder | None:
    return metadata if isinstance(metadata, SaveOrder) else None


def neighbours(
    metadata: MetadataStore, w: ContextWeights, org_id: str, document_ids: Sequence[str], now: datetime
) -> dict[str, tuple[str | None, str | None]]:
    """For each document, the id of the memory saved just before it and just after it in the
    same sitting (None where there is none, or the sides setting leaves it out)."""
    store = saved_order(metadata)
    if store is None or not w.active or not document_ids:
        return {}
    around = store.saved_around(org_id, list(document_ids), 1, w.max_gap_seconds, now)
    out: dict[str, tuple[str | None, str | None]] = {}
    for doc_id, (before, after) in around.items():
        out[doc_id] = (
            before[0] if before else None,
            after[0] if after and w.sides == "both" else None,
        )
    return out


def contexts(
    metadata: MetadataStore, w: ContextWeights, docs: Iterable[tuple[Document, int]], now: datetime
) -> dict[str, Context]:
    """The context of each eligible document, given with its chunk count; a document left out
    has none and is indexed as before. The documents given count as saved for each other (a
    batch written together is not ready yet when it is embedded)."""
    if not w.active:
        return {}
    by_org: dict[str, list[Document]] = {}
    for d, count in docs:
        if eligible(d, count):
            by_org.setdefault(d.organization_id, []).append(d)
    out: dict[str, Context] = {}
    for org, wanted in by_org.items():
        around = neighbours(metadata, w, org, [d.id for d in wanted], now)
        ids = {n for pair in around.values() for n in pair if n}
        known = {d.id: d for d in (metadata.get_documents(org, sorted(ids)) if ids else []) if eligible(d)}
        for d in wanted:
            before_id, after_id = around.get(d.id, (None, None))
            before, after = known.get(before_id or ""), known.get(after_id or "")
            for m in wanted:
                if m.id == d.id or m.project_id != d.project_id:
                    continue
                gap = (m.created_at - d.created_at).total_seconds()
                if -w.max_gap_seconds <= gap < 0 and (before is None or m.created_at > before.created_at):
                    before = m
                elif 0 < gap <= w.max_gap_seconds and w.sides == "both" and (
                    after is None or m.created_at < after.created_at
                ):
                    after = m
            c = Context(
                _clip(before.content, w.max_chars) if before else "",
                _clip(after.content, w.max_chars) if after else "",
            )
            if not c.empty:
                out[d.id] = c
    return out


def carriers(metadata: MetadataStore, w: ContextWeights, org_id: str, document_ids: Sequence[str], now: datetime) -> set[str]:
    """The memories whose index entries may carry these documents as context: the one saved just
    after each (its "before" side) and, with both sides, the one just before. Asked before a
    document leaves (afterwards the save order no longer knows where it stood)."""
    store = saved_order(metadata)
    if store is None or not w.active or not document_ids:
        return set()
    out: set[str] = set()
    for before, after in store.saved_around(org_id, list(document_ids), 1, w.max_gap_seconds, now).values():
        out.update(after[:1])
        if w.sides == "both":
            out.update(before[:1])
    return out - set(document_ids)
