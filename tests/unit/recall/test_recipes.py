"""The retrieval recipes (memlane.recall.recipes): each way memlane retrieves asks for the candidates,
legs, weights, stages and floor it asked for before the recipes named them (issue 33 item 4), and
the context pack's documentation asks for what /retrieve asks for."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

import pytest

from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.domain.tuning import FusionWeights
from memlane.ports import RecallFilters, SearchScope, Services
from memlane.recall.pipeline import NeighbourStage
from memlane.recall.recipes import (
    COLLECTION_HYBRID,
    COLLECTION_SEMANTIC,
    CONTEXT_DOCS,
    CONTEXT_MEMORIES,
    DOCS_RETRIEVE,
    MEMORY_RECALL,
    RECIPES,
    RELATED_MEMORIES,
)
from memlane.recall.relevance import MINILM

SCOPE = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(),
                    now=datetime(2026, 1, 1, tzinfo=UTC))


def _svc(**settings: Any) -> Services:
    """The ports a recipe reads: the host's settings (their defaults, with `settings` changed) and the
    embedder's name (MiniLM: its calibrated floors)."""
    d = Settings()
    s = SimpleNamespace(candidate_k=d.candidate_k, fusion=d.fusion, max_chunks_per_document=d.max_chunks_per_document,
                        neighbours=d.neighbours)
    s.__dict__.update(settings)
    return cast(Services, SimpleNamespace(settings=s, embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2"),
                                          rerank=None, metadata=None, clock=SimpleNamespace(now=lambda: SCOPE.now)))


def _shelf(settings: DocsetSettings | None = None) -> Any:
    s = settings or DocsetSettings()
    return SimpleNamespace(fusion=s.fusion, candidate_k=s.candidate_k, store=None)


def test_memory_recall_asks_each_leg_for_five_candidates_a_result_and_at_least_the_settings_count() -> None:
    svc = _svc()
    assert MEMORY_RECALL.k(svc, 10) == 50 and MEMORY_RECALL.k(svc, 20) == 100 and MEMORY_RECALL.k(svc, 3) == 50
    # a filter applied after the legs (as_of) counts each result four times
    assert MEMORY_RECALL.k(svc, 10, post_filtered=True) == 200
    assert MEMORY_RECALL.k(_svc(candidate_k=300), 10) == 300


def test_memory_recall_runs_the_memory_stages_with_the_settings_weights_and_the_calibrated_floor() -> None:
    svc = _svc()
    r = MEMORY_RECALL.retrieval(svc, "where is the boat", SCOPE, results=10)
    assert r.weights == svc.settings.fusion and r.legs == "hybrid" and r.exact
    assert [type(s) for s in r.stages] == [NeighbourStage]
    assert r.floor == MINILM.floor and r.keep_clear_best
    assert r.max_chunks_per_document == svc.settings.max_chunks_per_document
    # strict: only strong matches, no clear best below them; the client's own floor wins over both
    strict = MEMORY_RECALL.retrieval(svc, "q", SCOPE, strict=True)
    assert strict.floor == MINILM.strong and not strict.keep_clear_best
    own = MEMORY_RECALL.retrieval(svc, "q", SCOPE, min_relevance=0.1, strict=True)
    assert own.floor == pytest.approx(0.1) and not own.keep_clear_best


def test_the_context_packs_memories_are_ranked_as_recall_ranks_its_default_limit() -> None:
    svc = _svc()
    pack = CONTEXT_MEMORIES.retrieval(svc, "q", SCOPE, query_vector=[0.0])
    recall = MEMORY_RECALL.retrieval(svc, "q", SCOPE, results=10)
    assert (pack.k, pack.weights, pack.floor, pack.keep_clear_best) == (recall.k, recall.weights, recall.floor, True)
    assert [s.name for s in pack.stages] == [s.name for s in recall.stages]


def test_related_memories_have_their_own_floor_and_no_exact_matches() -> None:
    r = RELATED_MEMORIES.retrieval(_svc(), "a whole document", SCOPE, results=12)
    assert r.floor == MINILM.related_floor and not r.exact and not r.keep_clear_best and r.k == 60


def test_retrieve_asks_for_the_docsets_candidates_and_enough_for_the_per_page_cap() -> None:
    svc, shelf = _svc(), _shelf()
    assert DOCS_RETRIEVE.k(svc, 5, per_page=3, docsets=shelf) == 100
    assert DOCS_RETRIEVE.k(svc, 20, per_page=5, docsets=shelf) == 200
    assert DOCS_RETRIEVE.k(svc, 20, per_page=9, docsets=shelf) == 200  # at most 5 chunks a page counted
    r = DOCS_RETRIEVE.retrieval(svc, "q", SCOPE, results=5, per_page=3, legs="bm25", docsets=shelf)
    assert r.weights == shelf.fusion and r.legs == "bm25" and r.stages == () and r.floor == MINILM.docs_floor
    assert DOCS_RETRIEVE.retrieval(svc, "q", SCOPE, min_relevance=0.3, strict=True, docsets=shelf).floor == 0.3
    with pytest.raises(ValueError, match="docsets"):
        DOCS_RETRIEVE.retrieval(svc, "q", SCOPE)


def test_the_context_packs_documentation_asks_what_a_default_retrieve_asks() -> None:
    svc, shelf = _svc(), _shelf(DocsetSettings(candidate_k=120))
    pack = CONTEXT_DOCS.retrieval(svc, "q", SCOPE, query_vector=[0.0], docsets=shelf)
    retrieve = DOCS_RETRIEVE.retrieval(svc, "q", SCOPE, results=5, per_page=3, docsets=shelf)
    assert pack.k == retrieve.k == 120  # 50 before issue 33
    assert (pack.weights, pack.legs, pack.floor, pack.stages) == (retrieve.weights, "hybrid", retrieve.floor, ())


def test_collections_keep_the_specs_formula_for_code_and_raged_semantics() -> None:
    svc = _svc(fusion=FusionWeights(code_text_evidence=True, text_reference=1.5))
    hybrid = COLLECTION_HYBRID.retrieval(svc, "q", SCOPE, results=30)
    assert hybrid.weights == replace(svc.settings.fusion, code_text_evidence=False)
    assert hybrid.k == 120 and hybrid.floor == 0.0 and hybrid.stages == () and not hybrid.keep_clear_best
    # a filter that cannot be pushed into the legs: 1,000 candidates a leg
    assert COLLECTION_HYBRID.k(svc, 30, post_filtered=True) == 1000
    semantic = COLLECTION_SEMANTIC.retrieval(svc, "q", SCOPE, results=5)
    assert semantic.legs == "vector" and (semantic.weights.vector, semantic.weights.text, semantic.weights.recency) == (
        1.0, 0.0, 0.0)


def test_every_way_of_retrieving_has_one_named_recipe() -> None:
    assert set(RECIPES) == {"memory recall", "context memories", "related memories", "/retrieve",
                            "collections hybrid", "collections semantic"}
