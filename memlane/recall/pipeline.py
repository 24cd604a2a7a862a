"""memlane's one retrieval pipeline: candidates → fusion → stages → relevance floor.

Every ranked read calls `retrieve`: recall (/v3/recall, MCP recall), the context pack, related
memories, raged collections and documentation retrieval (/retrieve). Each caller keeps its own scope,
grouping and output; what it asks for is a `Retrieval`, which its recipe builds (memlane.recall.recipes:
each way memlane retrieves, named once, with its candidate count, legs, fusion, stages and floor):

1. candidates: the query embedded once (or a vector the caller already has), both search legs under
   the caller's scope and filters (`legs` can keep one: raged's semantic strategy, /retrieve's
   `mode`);
2. fusion: memlane.recall.fusion.fuse_scores with the caller's weights (the spec's formula for
   memories, unchanged), grouped by document (spec §4.6);
3. stages: a list of `Stage`s, each with a name, applied in order to the grouped ranking (today the
   neighbouring-memories stage, memlane.recall.neighbours, where the store knows the save order);
4. relevance and floor: every chunk gets a relevance in [0, 1] from raw evidence
   (memlane.recall.relevance) and from what its text holds of the question (memlane.recall.evidence);
   chunks and documents below `floor` are dropped. The floor never reorders: what passes keeps its rank.

The answer names the stages that ran (`["fusion", ...]`) and the floor that applied, so every
surface can say so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Literal, Protocol

from memlane.domain.models import Chunk, ContentType
from memlane.domain.tuning import FusionWeights, NeighbourWeights
from memlane.ingest.identifiers import query_identifier_words
from memlane.ports import DocumentStore, LegResults, SearchScope, Services
from memlane.recall import relevance as rel
from memlane.recall.evidence import filed_under, fusion_coverage, own_coverage, set_relevance
from memlane.recall.fusion import ScoredChunk, ScoredDocument, fuse_scores, group_by_document
from memlane.recall.neighbours import add_neighbour_context, changed
from memlane.recall.rerank import RerankPipelineStage, RerankStage

Legs = Literal["hybrid", "vector", "bm25"]


class Stage(Protocol):
    """A step after the fusion: re-ranks the grouped documents (never adds one the legs did not
    return, so the scope and filters hold)."""

    @property
    def name(self) -> str: ...

    def settings(self) -> object:
        """What changes the stage's output besides its input (part of the recall cache key)."""
        ...

    def __call__(self, groups: list[ScoredDocument], scope: SearchScope) -> list[ScoredDocument]: ...


@dataclass(frozen=True)
class NeighbourStage:
    """Neighbouring messages of one conversation (memlane.recall.neighbours): the metadata port
    knows each conversation's order on every host."""

    store: DocumentStore
    weights: NeighbourWeights
    now: Callable[[], datetime]
    name: str = "neighbours"

    def settings(self) -> object:
        w = self.weights
        return [w.weight, w.window, w.decay, w.lookups]

    def __call__(self, groups: list[ScoredDocument], scope: SearchScope) -> list[ScoredDocument]:
        w = self.weights
        now = scope.now or self.now()
        return add_neighbour_context(
            groups,
            lambda ids: self.store.conversation_around(scope.organization_id, ids, w.window, now),
            w,
        )


def memory_stages(svc: Services, query: str | None = None) -> list[Stage]:
    """The stages memory recall applies in this composition (recall, the context pack's memories,
    related memories: one list, so a memory ranks alike in all three). The rerank stage, where one
    is composed (AWS, off by default), is bound to the query, so it is in the list when one is given."""
    stages: list[Stage] = []
    n = svc.settings.neighbours
    if n.active:
        stages.append(NeighbourStage(svc.metadata, n, svc.clock.now))
    if svc.rerank is not None and query:
        stages.append(RerankPipelineStage(RerankStage.from_option(svc.rerank), query, partial(_chunk_texts, svc)))
    return stages


def _chunk_texts(svc: Services, organization_id: str, chunk_ids: Sequence[str]) -> dict[str, str]:
    return {c.id: c.content for c in svc.metadata.get_chunks_by_id(organization_id, list(chunk_ids))}


@dataclass(frozen=True)
class Retrieval:
    query: str
    scope: SearchScope
    k: int  # candidates per leg
    weights: FusionWeights
    stages: Sequence[Stage] = ()
    floor: float = 0.0
    legs: Legs = "hybrid"
    max_chunks_per_document: int = 3
    query_vector: Sequence[float] | None = None  # already embedded (the context pack embeds once)
    text_query: str | None = None  # what the text leg matches, when not `query` ("" for none)
    calibration: rel.Calibration | None = None  # default: the embedder's (memlane.recall.relevance)
    # Exact matches count as evidence (off when a whole document is the query: related memories,
    # where some word of a long text is always in some memory).
    exact: bool = True
    # When nothing reaches the floor, a clear best match is kept anyway (memlane.recall.relevance,
    # `clear_margin`): the floor decides how sure an answer is, not whether a stored answer may be seen.
    # Off for a caller that asks for strict abstention (`min_relevance`, `strict`).
    keep_clear_best: bool = False
    # When something reaches the floor but nothing is strong, the first `first_few` documents in rank order
    # that hold any evidence are kept with it, each marked by its own relevance (weak): an unsure answer
    # shows the few candidates it was unsure between (recall's list; 0: the floor alone, as the context
    # pack keeps it).
    first_few: int = 0


@dataclass
class Retrieved:
    chunks: list[ScoredChunk]  # every fused candidate at or above the floor, best first
    documents: list[ScoredDocument]  # grouped, after the stages, at or above the floor, best first
    stages: list[str]  # what ran: "fusion", then each stage's name
    floor: float
    below_floor: int = 0  # documents the floor dropped
    calibration: rel.Calibration = field(default=rel.UNKNOWN)
    background: rel.Background | None = None  # what the store gives this query (memlane.recall.relevance)


def retrieve(svc: Services, r: Retrieval) -> Retrieved:
    now = r.scope.now or svc.clock.now()
    vector = r.query_vector
    if vector is None and r.legs != "bm25":
        vector = svc.embedder.embed_query(r.query)
    text = r.query if r.text_query is None else r.text_query
    if r.weights.identifier_words:
        # A query naming `getUserName` also searches for its words, as code chunks are then indexed
        # with them (memlane.ingest.identifiers); a query without compound identifiers is unchanged.
        text = query_identifier_words(text)
    legs = svc.index.search(r.scope, text if r.legs != "vector" else "", vector if r.legs != "bm25" else None, r.k,
                            complete=r.weights.complete_legs)
    if r.legs == "vector":
        legs = LegResults(vector=legs.vector, text=[])
    elif r.legs == "bm25":
        legs = LegResults(vector=[], text=legs.text)
    calibration = r.calibration or rel.calibration_for(svc.embedder.id)
    records, code = _candidate_chunks(svc, r, legs)
    text_scores = None
    terms = rel.query_terms(text)
    if r.weights.code_text_evidence and code:
        text_scores = {c.chunk_id: code_text_share(c.score, terms, calibration) for c in legs.text if c.chunk_id in code}
    if filed := filed_under(r.query, records):
        # A memory filed under every word asked for (a person's own label) is full text evidence,
        # whatever BM25 makes of one word in a small store.
        text_scores = {**(text_scores or {}), **dict.fromkeys(filed, 1.0)}
    background = rel.Background.of([(c.document_id, c.score) for c in legs.vector], r.k) if r.legs != "bm25" else None
    own = own_coverage(r.query, r.weights, r.exact, legs, records)
    fused = fuse_scores(legs, now, r.weights, text_scores, code, terms,
                        fusion_coverage(svc.metadata, r.scope, r.query, r.weights, own, records, code))
    set_relevance(r.query, r.legs != "vector" and r.exact, fused, calibration, records, background, own)
    groups = group_by_document(fused, r.max_chunks_per_document)
    names = ["fusion"]
    for stage in r.stages:
        before, groups = groups, stage(groups, r.scope)
        if changed(before, groups):  # the answer's `stages` names what changed the ranking
            names.append(stage.name)
    kept = _shown(r, groups, calibration)
    shown = {g.document_id for g in kept}
    return Retrieved(
        chunks=[c for c in fused if c.relevance >= r.floor or c.document_id in shown],
        documents=kept,
        stages=names,
        floor=r.floor,
        below_floor=len(groups) - len(kept),
        calibration=calibration,
        background=background,
    )


# When an answer passes the floor but none of it is strong, recall lists the documents ranked first to
# FIRST_FEW with it (each with any evidence, shown as weak matches): a person's paraphrase of a note often
# sits second or third, below the floor, behind a note that shares a word with the question (the personal
# notes: top-3 at the default settings 0.887 → 0.925, and nonsense answered with nothing as often as
# before: BENCHMARKS.md, issue 35). A strong answer is not followed by unrelated memories, and the
# context pack keeps the floor alone: what an assistant reads is not padded.
FIRST_FEW = 3


def _shown(r: Retrieval, groups: list[ScoredDocument], c: rel.Calibration) -> list[ScoredDocument]:
    """The documents the answer holds: those at or above the floor, with the first `first_few` when some
    is and none is strong; when none is, a clear best match (`keep_clear_best`) or nothing."""
    kept = [g for g in groups if g.relevance >= r.floor]
    if not kept:
        return clear_best(groups, c) if r.keep_clear_best else []
    if not r.first_few or any(g.relevance >= c.strong - 1e-9 for g in kept):
        return kept
    return with_first_few(groups, kept, r.first_few)


def with_first_few(groups: list[ScoredDocument], kept: list[ScoredDocument], few: int) -> list[ScoredDocument]:
    """`kept` (what passed the floor) with those of the first `few` of `groups` that hold any evidence
    (relevance above 0), in rank order."""
    ids = {g.document_id for g in kept} | {g.document_id for g in groups[:few] if g.relevance > 0}
    return [g for g in groups if g.document_id in ids]


def clear_best(groups: list[ScoredDocument], c: rel.Calibration) -> list[ScoredDocument]:
    """The first document alone, when its best cosine reaches `clear_cosine` and stands at least
    `clear_margin` above every other document's (a clear best match below the floor); else nothing."""
    if not groups or c.clear_margin <= 0:
        return []
    cosine = [max((ch.vector_score for ch in g.chunks), default=0.0) for g in groups]
    best = cosine[0]
    if best < max(c.clear_cosine, 1e-9) or any(best - other < c.clear_margin for other in cosine[1:]):
        return []
    return groups[:1]


def code_text_share(bm25: float, terms: int, c: rel.Calibration) -> float:
    """A code chunk's text share in the fusion (`FusionWeights.code_text_evidence`): its own BM25
    evidence, the relevance's text part, instead of BM25 over the batch maximum."""
    return rel.text_part(bm25, terms, c)


def _candidate_chunks(svc: Services, r: Retrieval, legs: LegResults) -> tuple[dict[str, Chunk], frozenset[str]]:
    """The chunk records of the candidates, read once, and which candidates are code: their
    content type (a code chunk's text share and relevance, memlane.recall.fusion and .relevance)
    and their text (exact matches). Read only where they can matter: the text leg's candidates when
    exact matches count or the fusion weighs code by its evidence, and every candidate when the
    calibration treats code apart (a candidate whose content type the index returned is not read
    for it: at a million chunks a miss read ~100 records, half of them for their type alone)."""
    text_ids: list[str] = []
    if r.legs != "vector" and (r.exact or r.weights.code_text_evidence):
        text_ids = [c.chunk_id for c in legs.text]
    typed: list[str] = []
    calibration = r.calibration or rel.calibration_for(svc.embedder.id)
    if calibration.code is not None:
        typed = [c.chunk_id for c in legs.vector]
    known = {c.chunk_id: c.content_type for c in (*legs.vector, *legs.text) if c.content_type is not None}
    ids = list(dict.fromkeys([*text_ids, *(i for i in typed if i not in known)]))
    records = (
        {ch.id: ch for ch in svc.metadata.get_chunks_by_id(r.scope.organization_id, ids)} if ids else {}
    )
    read = set(ids)
    code = frozenset(cid for cid, ch in records.items() if ch.content_type is ContentType.CODE) | frozenset(
        cid for cid in typed if cid not in read and known.get(cid) == ContentType.CODE.value
    )
    return records, code
