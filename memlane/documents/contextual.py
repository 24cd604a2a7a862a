"""Contextual indexing: a message of a conversation is indexed with the messages around it.

The turns of a conversation are one thread. A turn like "Yes, last Friday, it was so calming!"
names nothing a question would ask for; the turn before it ("Did you go to the poetry reading?")
does. So the index entry of such a memory carries its neighbours too, in two ways:

* the text leg: the neighbours' text is a separate `context` field of the entry, weighted below
  the memory's own words (memlane.adapters.local.bm25.CONTEXT_WEIGHT, OpenSearch `context^w`),
  so a question matching the memory itself still ranks it first;
* the vector leg: the entry's vector is the sum of the memory's own embedding and the embedding
  of the window "before / memory / after", normalised, so it points between what the memory says
  and what the exchange around it is about.

What is stored (the document, its chunks, what recall returns) is unchanged: only the search
projection gains context, so recall still answers with the memory as saved.

Who gets context: only a memory saved with a `conversation_id` (the explicit signal; saving
close together in time is not one: a person's unrelated notes saved a minute apart gained each
other's words and ranked for each other's questions), of one chunk (a long document stands on
its own), neither a documentation page nor a collection item. Its neighbours are the messages
just before and after it in its conversation (same project, same conversation_id, ordered by
message_index then save time: memlane.domain.models.conversation_order; ready, current,
unexpired), read through the metadata port on every host (memlane.ports.DocumentStore).

The entry is a function of the memory and its two neighbours, so it is rebuilt whenever one of
them changes: the write path rebuilds the neighbours of a memory it commits (its predecessor gains
it as the "after" side), and removing a memory rebuilds those on both sides of it, so a deleted or
forgotten memory's words leave the index with it.

CONTEXT_SCHEME names this rule. A data directory records the scheme its index was built with
(memlane.local.index_rules); one built by the earlier rule (any two saves of a project less
than 30 minutes apart were one sitting) holds context mixed from unrelated notes, and the server
says at start to rebuild it with `memlane reindex`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memlane.domain.models import Document, conversation_order
from memlane.domain.tuning import ContextWeights
from memlane.ports import MetadataStore


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

# The rule above: context only from messages of one conversation. Before it, "sitting-30min".
CONTEXT_SCHEME = "conversation-1"


def eligible(doc: Document, chunk_count: int | None = None) -> bool:
    """A short memory: one chunk (`chunk_count`, for a document being written; else as stored),
    neither a documentation page nor a collection item."""
    count = doc.chunk_count if chunk_count is None else chunk_count
    return count == 1 and not any(mark in doc.metadata for mark in UNORDERED_MARKS)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def contexts(
    metadata: MetadataStore, w: ContextWeights, docs: Iterable[tuple[Document, int]], now: datetime
) -> dict[str, Context]:
    """The context of each eligible document of a conversation, given with its chunk count; a
    document left out has none and is indexed as before. The documents given count as saved for
    each other (a batch written together is not ready yet when it is embedded)."""
    if not w.active:
        return {}
    docs = list(docs)
    wanted: dict[tuple[str, str, str], list[Document]] = {}
    given: dict[tuple[str, str, str], list[Document]] = {}
    for d, count in docs:
        if d.conversation_id is None:
            continue
        key = (d.organization_id, d.project_id, d.conversation_id)
        given.setdefault(key, []).append(d)
        if eligible(d, count):
            wanted.setdefault(key, []).append(d)
    out: dict[str, Context] = {}
    for (org, project, conversation), mine in wanted.items():
        batch = {d.id: d for d in given[(org, project, conversation)]}
        short = {d.id for d, count in docs if d.id in batch and eligible(d, count)}
        stored = [m for m in metadata.conversation_documents(org, project, conversation, now) if m.id not in batch]
        short |= {m.id for m in stored if eligible(m)}
        messages = sorted([*stored, *batch.values()], key=conversation_order)
        place = {m.id: i for i, m in enumerate(messages)}
        for d in mine:
            # the message right next to it, when that is a short message too (a long document
            # pasted into a conversation stands on its own)
            i = place[d.id]
            before = messages[i - 1] if i > 0 and messages[i - 1].id in short else None
            after = messages[i + 1] if (
                i + 1 < len(messages) and w.sides == "both" and messages[i + 1].id in short
            ) else None
            c = Context(
                _clip(before.content, w.max_chars) if before else "",
                _clip(after.content, w.max_chars) if after else "",
            )
            if not c.empty:
                out[d.id] = c
    return out


def carriers(metadata: MetadataStore, w: ContextWeights, org_id: str, document_ids: Sequence[str], now: datetime,
             *, passing: Collection[str] = ()) -> set[str]:
    """The memories whose index entries may carry these documents as context: the message just
    after each in its conversation (its "before" side) and, with both sides, the one just before.
    Asked before a document leaves (afterwards the store no longer knows where it stood).
    `passing`: messages to look past (a new version stands at its old version's place, right
    after it, while the old one's real neighbour is the next message)."""
    if not w.active or not document_ids:
        return set()
    skip = set(passing)
    out: set[str] = set()
    for before, after in metadata.conversation_around(org_id, list(document_ids), 2 if skip else 1, now).values():
        out.update([i for i in after if i not in skip][:1])
        if w.sides == "both":
            out.update([i for i in before if i not in skip][:1])
    return out - set(document_ids)
