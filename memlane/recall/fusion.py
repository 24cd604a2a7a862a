"""memlane's one fusion function (spec §4.4–4.6).

final = w_vector · cosine + w_text · (bm25 / max bm25 in the batch) + recency_w · exp(−age_days / τ)

For a code chunk, when the weights say so (`code_text_evidence`, on for memories), the text term is
the chunk's own BM25 evidence instead: 1 − exp(−(bm25 / query words) / scale), the relevance's text
part (memlane.recall.relevance), so a prose question's incidental word in code ("return", "file")
cannot weigh as much as a strong vector match just because it is the batch's best keyword match.

Optionally (`support` > 0; 0 for memories, so recall is the spec's formula) a document's best
chunk also gains `support` × the scores of its next `support_chunks` best candidates: a page that
several candidates point to is more likely about the query than a page that mentions it once.
Documentation retrieval uses this (a page about `defaultdict` beats a changelog naming it); the
best chunk's own score still dominates, and counting only a few more keeps long pages from winning
by length.

The engines (SQLite FTS5 + exact k-NN locally, OpenSearch on AWS) only return candidates with raw
scores; this module ranks them, so a document scores the same wherever it is stored. There is no
minimum score: a chunk found by only one leg keeps that leg's share and can still surface.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from memlane.domain.tuning import FusionWeights
from memlane.ports import Candidate, LegResults


def recency_bonus(created_at: datetime, now: datetime, weights: FusionWeights) -> float:
    age_days = max(0.0, (now - created_at).total_seconds() / 86_400.0)
    return weights.recency * math.exp(-age_days / weights.recency_days)


@dataclass
class ScoredChunk:
    chunk_id: str
    document_id: str
    chunk_index: int
    score: float
    vector_score: float
    text_score: float
    recency: float
    support: float = 0.0  # what the document's other candidates added (already in `score`)
    # the text leg's raw score (not normalised), over the searched scope's statistics: relevance reads it
    bm25: float = 0.0
    relevance: float = 0.0  # set by memlane.recall.pipeline from raw evidence; not part of `score`
    exact: bool = False  # holds a distinctive query term verbatim (memlane.recall.relevance)
    code: bool = False  # a chunk of a code memory (set by memlane.recall.pipeline when it read the chunk)
    # holds every name the question gives (memlane.recall.names; set by memlane.recall.pipeline: True
    # where the question names nothing)
    named: bool = True
    titled: bool = False  # its title holds every content word of the question (memlane.recall.relevance)
    # its own words hold every content word of a question of two or more (memlane.recall.pipeline)
    whole: bool = False


@dataclass
class ScoredDocument:
    document_id: str
    score: float
    chunks: list[ScoredChunk] = field(default_factory=list)

    @property
    def relevance(self) -> float:
        """A document is as relevant as its best evidence."""
        return max((c.relevance for c in self.chunks), default=0.0)


def normalize_by_max(candidates: Iterable[Candidate], at_least: float = 0.0) -> dict[str, float]:
    """Text scores divided by the batch maximum (spec §4.3), so the best keyword match is 1.0; with
    `at_least`, by no less than that (FusionWeights.text_reference × query words): a batch whose best
    match is weak keeps it weak."""
    items = list(candidates)
    top = max(max((c.score for c in items), default=0.0), at_least)
    if top <= 0:
        return {c.chunk_id: 0.0 for c in items}
    return {c.chunk_id: max(0.0, c.score) / top for c in items}


def fuse_scores(
    legs: LegResults, now: datetime, weights: FusionWeights | None = None,
    text_scores: Mapping[str, float] | None = None, code: frozenset[str] = frozenset(), terms: int = 1,
    coverage: Mapping[str, float] | None = None,
) -> list[ScoredChunk]:
    """Merge both legs into one list of chunks, best first. `text_scores` (chunk id → [0, 1])
    replaces BM25 over the batch maximum for the chunks it names (memlane.recall.pipeline: code
    chunks, by their own evidence, when `FusionWeights.code_text_evidence` is set); every other
    chunk's text score is the spec's. `code`: the chunk ids known to be code (marked `code`). `terms`:
    the query's content words (memlane.recall.relevance.query_terms), for `FusionWeights.text_reference`.
    `coverage` (chunk id → [0, 1], memlane.recall.coverage): the share of the question's content words
    each chunk holds; its text share is scaled by coverage ** `FusionWeights.text_coverage` (a chunk not
    named keeps its share)."""
    w = weights or FusionWeights()
    text_norm = normalize_by_max(legs.text, w.text_reference * max(1, terms))
    if text_scores:
        text_norm.update({k: min(1.0, max(0.0, v)) for k, v in text_scores.items() if k in text_norm})
    if coverage and w.text_coverage > 0:
        for k, share in coverage.items():
            if k in text_norm:
                text_norm[k] *= min(1.0, max(0.0, share)) ** w.text_coverage
    by_id: dict[str, Candidate] = {}
    vector_scores: dict[str, float] = {}
    for c in legs.vector:
        by_id[c.chunk_id] = c
        # Cosine similarity can be slightly negative for unrelated text; the spec's range is 0–1.
        vector_scores[c.chunk_id] = min(1.0, max(0.0, c.score))
    raw_text: dict[str, float] = {}
    for c in legs.text:
        by_id.setdefault(c.chunk_id, c)
        raw_text[c.chunk_id] = max(0.0, c.score)

    fused: list[ScoredChunk] = []
    for chunk_id, c in by_id.items():
        v = vector_scores.get(chunk_id, 0.0)
        t = text_norm.get(chunk_id, 0.0)
        r = recency_bonus(c.created_at, now, w)
        fused.append(
            ScoredChunk(
                chunk_id=chunk_id,
                document_id=c.document_id,
                chunk_index=c.chunk_index,
                score=w.vector * v + w.text * t + r,
                vector_score=v,
                text_score=t,
                recency=r,
                bm25=raw_text.get(chunk_id, 0.0),
                code=chunk_id in code,
            )
        )
    if w.support > 0 and w.support_chunks > 0:
        _add_document_support(fused, w.support, w.support_chunks)
    # Ties broken by chunk id so results are stable across runs and engines.
    fused.sort(key=lambda s: (-s.score, s.chunk_id))
    return fused


def _add_document_support(fused: list[ScoredChunk], weight: float, siblings: int) -> None:
    """A document's best chunk gains `weight` × the sum of the scores of its next `siblings` best
    chunks, so grouping by best chunk ranks documents by best + weight × (next best few). The other
    chunks keep their own scores: a page's weak chunks are not lifted over other pages' good ones."""
    by_document: dict[str, list[ScoredChunk]] = {}
    for sc in fused:
        by_document.setdefault(sc.document_id, []).append(sc)
    for chunks in by_document.values():
        if len(chunks) < 2:
            continue
        chunks.sort(key=lambda c: (-c.score, c.chunk_id))
        best = chunks[0]
        best.support = weight * sum(c.score for c in chunks[1 : siblings + 1])
        best.score += best.support


def group_by_document(
    chunks: Iterable[ScoredChunk], max_chunks_per_document: int = 3
) -> list[ScoredDocument]:
    """Group chunks by document (spec §4.6): a document ranks by its best chunk; the chunks shown
    are its best few, in index order."""
    groups: dict[str, ScoredDocument] = {}
    for sc in chunks:  # arrives best first
        g = groups.get(sc.document_id)
        if g is None:
            groups[sc.document_id] = ScoredDocument(sc.document_id, sc.score, [sc])
        elif len(g.chunks) < max_chunks_per_document:
            g.chunks.append(sc)
    docs = sorted(groups.values(), key=lambda g: (-g.score, g.document_id))
    for g in docs:
        g.chunks.sort(key=lambda s: s.chunk_index)
    return docs
