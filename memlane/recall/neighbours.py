"""Neighbouring messages as context: a recall stage after the fusion (memlane.recall.fusion).

The turns of a conversation are one thread. A turn like "Yes, last Friday, it was so calming!"
says nothing about what it answers; the turn before it ("Did you go to the poetry reading?") does.
So a message gains a share of the fused score of the best-scoring message right next to it in its
conversation:

    score = fused + weight · max over neighbours n within `window` messages of decay^(distance−1) · relevance(n)

where relevance is the neighbour's fused score without its recency bonus.

Neighbours are only messages of the same conversation: the same `conversation_id` in the same
project, in conversation order (message_index, then save time), as the metadata port reads them
on every host (memlane.ports.DocumentStore.conversation_around). A memory saved without a
conversation_id has no neighbours, whatever was saved just before or after it: time alone is no
signal (a person's unrelated notes saved minutes apart lifted each other).

Every candidate document passes its share to its neighbours among the candidates (up to the
`lookups` best: a one-sided boost of only the top few favoured their neighbours over everything
else and ranked worse); a memory the search legs did not return is never added, so the scope and
filters of the legs hold for every result. Each document's own fused score is unchanged inside
the sum, so the spec's formula still orders any two memories whose neighbours score alike; the
stage is off with `weight` 0 (MEMLANE_RECALL_NEIGHBOUR_WEIGHT=0).
"""

from __future__ import annotations

from collections.abc import Callable

from memlane.domain.tuning import NeighbourWeights
from memlane.recall.fusion import ScoredDocument

# document ids → (messages before, nearest first; messages after, nearest first)
SavedAround = Callable[[list[str]], dict[str, tuple[list[str], list[str]]]]


def relevance(g: ScoredDocument) -> float:
    """What a document passes to its neighbours: its best chunk's fused score without the recency
    bonus. Recency is about the memory itself, not its topic; passed on, it would lift every memory
    with a neighbour among the candidates by the same amount whatever the query (with all memories
    recent, 0.3 × 0.1 was worth more than most differences in relevance)."""
    if not g.chunks:
        return g.score
    return max(c.score - c.recency - c.support for c in g.chunks)


def changed(before: list[ScoredDocument], after: list[ScoredDocument]) -> bool:
    """Whether the stage changed a score (what a recall answer's `stages` reports)."""
    scores = {g.document_id: g.score for g in before}
    return any(g.score != scores.get(g.document_id) for g in after)


def add_neighbour_context(
    groups: list[ScoredDocument], saved_around: SavedAround, w: NeighbourWeights
) -> list[ScoredDocument]:
    """Re-rank documents (best first) with their conversation neighbours' fused scores; returns a
    new list, best first, of the same documents."""
    if not groups or not w.active:
        return groups
    fused = {g.document_id: relevance(g) for g in groups}
    top = [g.document_id for g in groups[: w.lookups]]
    around = saved_around(top)
    # Adjacency is symmetric: what a document passes to its neighbours is what each of them would
    # read from it, so one lookup per document covers both directions.
    gain: dict[str, float] = {}
    for doc_id in top:
        before, after = around.get(doc_id, ([], []))
        for side in (before, after):
            for distance, neighbour in enumerate(side[: w.window], 1):
                share = w.weight * (w.decay ** (distance - 1)) * fused[doc_id]
                if neighbour in fused and share > gain.get(neighbour, 0.0):
                    gain[neighbour] = share
    out = [ScoredDocument(g.document_id, g.score + gain.get(g.document_id, 0.0), g.chunks) for g in groups]
    out.sort(key=lambda g: (-g.score, g.document_id))
    return out
