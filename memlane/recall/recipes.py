"""Every way memlane retrieves, named once: a recipe per caller of memlane's one retrieval pipeline
(memlane.recall.pipeline), in the manner of Graphiti's named search configs.

A recipe says how many candidates each search leg brings (`k`), which legs run, which fusion weights
rank them, which stages follow the fusion and which relevance floor applies. A caller gives what its
request decides (the query, the scope, how many results it shows, a floor the client set) and takes
the `Retrieval` the recipe builds; no caller assembles its own parameters.

| recipe | k per leg | legs | fusion | stages | floor |
| --- | --- | --- | --- | --- | --- |
| memory recall (/v3/recall, MCP recall, similar facts) | max(candidate_k, 5 × limit); × 4 results when a filter drops candidates after the legs | both | Settings.fusion | neighbours, rerank | the embedder's floor (`strict`: strong); a clear best below it kept |
| context memories (/v3/context) | as recall at its default limit (10) | both | Settings.fusion | neighbours, rerank | as recall |
| related memories | as recall | both | Settings.fusion | neighbours, rerank | related_floor; no exact matches (a whole document is the query) |
| /retrieve (docsets) and context docs | max(DocsetSettings.candidate_k, 2 × topK × min(maxChunksPerPage, 5)) | both, or the request's `mode` | DocsetSettings.fusion | none | docs_floor |
| collections /query, hybrid | max(candidate_k, 4 × topK); at least 1,000 when the filter is applied after the legs | both | Settings.fusion without code_text_evidence | none | none |
| collections /query, semantic | as hybrid | vector | the cosine alone | none | none |

The context pack's documentation takes /retrieve's recipe with /retrieve's default request (topK 5,
3 chunks a page), so a snippet ranks in the pack as /retrieve ranks it.

The recipes choose where defaults come from (the host's Settings for memories and collections, the
docsets' settings for documentation); they never redefine a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from memlane.domain.requests import RecallIn
from memlane.domain.tuning import FusionWeights
from memlane.ports import DocsetShelf, SearchScope, Services
from memlane.recall.pipeline import FIRST_FEW, Legs, Retrieval, memory_stages
from memlane.recall.relevance import Calibration, calibration_for

# /retrieve's request defaults (memlane.docsets.schemas.RetrieveIn reads them here): the context pack's
# documentation is ranked as /retrieve ranks a default request.
DOCS_TOP_K = 5
DOCS_CHUNKS_PER_PAGE = 3
# /v3/recall's default limit: the context pack's memories are ranked with the candidates recall uses for it.
RECALL_LIMIT: int = RecallIn.model_fields["limit"].default

Floor = Literal["floor", "related_floor", "docs_floor"]
Source = Literal["memories", "documentation"]


@dataclass(frozen=True)
class Candidates:
    """Candidates per search leg: at least the settings' `candidate_k`, and `per_result` for each
    result shown. /retrieve shows up to min(maxChunksPerPage, `per_page_cap`) chunks of a page, each
    needing candidates. When a filter drops candidates after the legs (`post_filtered`), each result
    counts `post_filter_factor` times and the count is at least `post_filter_minimum`."""

    per_result: int
    per_page_cap: int = 1
    post_filter_factor: int = 1
    post_filter_minimum: int = 0

    def count(self, candidate_k: int, results: int, *, per_page: int = 1, post_filtered: bool = False) -> int:
        shown = results * min(per_page, self.per_page_cap) * self.per_result
        if not post_filtered:
            return max(candidate_k, shown)
        return max(candidate_k, shown * self.post_filter_factor, self.post_filter_minimum)


@dataclass(frozen=True)
class Recipe:
    name: str
    source: Source  # whose candidate_k and fusion weights: Settings, or the docsets' (DocsetShelf)
    candidates: Candidates
    results: int  # what a caller that sets no count of its own is ranked for
    legs: Legs = "hybrid"
    fusion: FusionWeights | None = None  # fixed weights instead of the source's
    code_text_evidence: bool | None = None  # the source's choice, unless set here
    text_coverage: float | None = None  # the source's FusionWeights.text_coverage, unless set here
    memory_stages: bool = False  # neighbouring memories, rerank (memlane.recall.pipeline.memory_stages)
    floor: Floor | None = None  # the embedder's calibrated floor (memlane.recall.relevance); None: no floor
    strict_floor: bool = False  # a `strict` request raises the floor to the strong threshold
    keep_clear_best: bool = False  # a clear best match below the floor is kept (unless the request sets a floor)
    first_few: int = 0  # with an answer above the floor, the first this many are listed too (pipeline.FIRST_FEW)
    exact: bool = True  # exact matches count as evidence
    chunks_per_document: int | None = 3  # of a grouped document; None: Settings.max_chunks_per_document

    def floor_for(self, c: Calibration, min_relevance: float | None = None, strict: bool = False) -> float:
        """The request's floor when it sets one (`min_relevance`), else this recipe's."""
        if min_relevance is not None:
            return min_relevance
        if self.floor is None:
            return 0.0
        return c.strong if strict and self.strict_floor else float(getattr(c, self.floor))

    def weights(self, svc: Services, docsets: DocsetShelf | None = None) -> FusionWeights:
        base = self.fusion or (self._shelf(docsets).fusion if self.source == "documentation" else svc.settings.fusion)
        if self.code_text_evidence is not None:
            base = replace(base, code_text_evidence=self.code_text_evidence)
        return base if self.text_coverage is None else replace(base, text_coverage=self.text_coverage)

    def k(self, svc: Services, results: int | None = None, *, per_page: int = DOCS_CHUNKS_PER_PAGE,
          post_filtered: bool = False, docsets: DocsetShelf | None = None) -> int:
        base = self._shelf(docsets).candidate_k if self.source == "documentation" else svc.settings.candidate_k
        return self.candidates.count(base, self.results if results is None else results, per_page=per_page,
                                     post_filtered=post_filtered)

    def retrieval(self, svc: Services, query: str, scope: SearchScope, *, results: int | None = None,
                  per_page: int = DOCS_CHUNKS_PER_PAGE, post_filtered: bool = False,
                  min_relevance: float | None = None, strict: bool = False, legs: Legs | None = None,
                  query_vector: Sequence[float] | None = None, docsets: DocsetShelf | None = None) -> Retrieval:
        """What memlane.recall.pipeline.retrieve runs for this request: `results` shown (the recipe's
        default when None), `min_relevance` and `strict` as the client set them."""
        return Retrieval(
            query=query,
            scope=scope,
            k=self.k(svc, results, per_page=per_page, post_filtered=post_filtered, docsets=docsets),
            weights=self.weights(svc, docsets),
            stages=memory_stages(svc, query) if self.memory_stages else (),
            floor=self.floor_for(calibration_for(svc.embedder.id), min_relevance, strict),
            legs=legs or self.legs,
            max_chunks_per_document=(svc.settings.max_chunks_per_document if self.chunks_per_document is None
                                     else self.chunks_per_document),
            query_vector=query_vector,
            exact=self.exact,
            keep_clear_best=self.keep_clear_best and min_relevance is None and not strict,
            first_few=self.first_few if min_relevance is None and not strict else 0,
        )

    def _shelf(self, docsets: DocsetShelf | None) -> DocsetShelf:
        if docsets is None:
            raise ValueError(f"the {self.name} recipe ranks documentation: it needs the docsets' settings")
        return docsets


_MEMORY_CANDIDATES = Candidates(per_result=5, post_filter_factor=4)

MEMORY_RECALL = Recipe(
    name="memory recall", source="memories", candidates=_MEMORY_CANDIDATES, results=RECALL_LIMIT,
    memory_stages=True, floor="floor", strict_floor=True, keep_clear_best=True, chunks_per_document=None,
    first_few=FIRST_FEW,
)
# A memory ranks in the pack as it ranks in recall at recall's default limit; the pack holds what passes
# the floor (and a clear best match), not the first few below it.
CONTEXT_MEMORIES = replace(MEMORY_RECALL, name="context memories", first_few=0)
# A whole document as the query: its own floor, and no exact matches (some word of a long text is
# always in some memory).
RELATED_MEMORIES = replace(MEMORY_RECALL, name="related memories", floor="related_floor", strict_floor=False,
                           keep_clear_best=False, first_few=0, exact=False)
DOCS_RETRIEVE = Recipe(
    name="/retrieve", source="documentation", candidates=Candidates(per_result=2, per_page_cap=5),
    results=DOCS_TOP_K, floor="docs_floor",
)
# The context pack's documentation ranks as /retrieve ranks it (issue 33: it asked for 50 candidates
# before, /retrieve for at least the docsets' candidate_k, 100 by default).
CONTEXT_DOCS = DOCS_RETRIEVE
# raged's semantics: every match, ranked (no stages, no floor); hybrid keeps the spec's formula for
# code too and for the words a chunk covers (the code share by evidence and the coverage scaling,
# FusionWeights.code_text_evidence and text_coverage, are measured on memories, not on collections).
# A filter that cannot be pushed down into the legs exactly is applied after them: 1,000 candidates
# per leg at least, so enough survive it.
_COLLECTION_CANDIDATES = Candidates(per_result=4, post_filter_minimum=1000)
COLLECTION_HYBRID = Recipe(
    name="collections hybrid", source="memories", candidates=_COLLECTION_CANDIDATES, results=10,
    code_text_evidence=False, text_coverage=0.0,
)
# raged's semantic strategy: the vector leg alone, weighed alone, so the score is the cosine.
COLLECTION_SEMANTIC = replace(COLLECTION_HYBRID, name="collections semantic", legs="vector",
                              fusion=FusionWeights(vector=1.0, text=0.0, recency=0.0))

RECIPES: dict[str, Recipe] = {r.name: r for r in (
    MEMORY_RECALL, CONTEXT_MEMORIES, RELATED_MEMORIES, DOCS_RETRIEVE, COLLECTION_HYBRID, COLLECTION_SEMANTIC)}
