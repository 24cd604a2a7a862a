"""The optional rerank stage after the fusion: what it sends, how it mixes, what it keeps, and a
failing reranker skipping the stage (never an error) — on its own and inside recall."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from memlane.domain.errors import MemlaneError, TransientError
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.ports import Rerank, Reranker
from memlane.recall.fusion import ScoredChunk, ScoredDocument
from memlane.recall.rerank import MAX_TEXT_CHARS, RerankStage
from memlane.recall.service import recall
from memlane.services.memory import save_memory


class TableReranker:
    """Scores each text by the first entry of `table` that it contains; records what it was sent."""

    def __init__(self, table: dict[str, float], error: Exception | None = None) -> None:
        self.table = table
        self.error = error
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def id(self) -> str:
        return "test/table"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        if self.error is not None:
            raise self.error
        return [next((s for k, s in self.table.items() if k in t), 0.0) for t in texts]


def doc(doc_id: str, score: float) -> ScoredDocument:
    chunk = ScoredChunk(f"{doc_id}#0", doc_id, 0, score, score, 0.0, 0.0)
    return ScoredDocument(doc_id, score, [chunk])


def texts_of(ids: Sequence[str]) -> dict[str, str]:
    return {i: f"text of {i.split('#')[0]}" for i in ids}


def test_the_reranker_score_is_mixed_with_the_fused_one_and_reorders_the_head() -> None:
    reranker = TableReranker({"text of c": 0.9, "text of a": 0.1, "text of b": 0.5})
    ranked = [doc("a", 0.8), doc("b", 0.6), doc("c", 0.4)]
    out, report = RerankStage(reranker, top_n=3, weight=0.7).apply("q", ranked, texts_of)
    scores = {d.document_id: d.score for d in out}
    assert scores["c"] == pytest.approx(0.7 * 0.9 + 0.3 * 0.4)  # 0.75
    assert scores["b"] == pytest.approx(0.7 * 0.5 + 0.3 * 0.6)  # 0.53
    assert scores["a"] == pytest.approx(0.7 * 0.1 + 0.3 * 0.8)  # 0.31
    assert [d.document_id for d in out] == ["c", "b", "a"]
    # the chunks move with their document
    assert out[0].chunks[0].score == pytest.approx(scores["c"])
    assert (report.status, report.reranked, report.model) == ("applied", 3, "test/table")
    assert reranker.calls == [("q", ["text of a", "text of b", "text of c"])]


def test_weight_one_replaces_the_fused_score() -> None:
    reranker = TableReranker({"text of b": 0.9, "text of a": 0.2})
    out, _ = RerankStage(reranker, top_n=5, weight=1.0).apply("q", [doc("a", 0.9), doc("b", 0.1)], texts_of)
    assert [(d.document_id, round(d.score, 6)) for d in out] == [("b", 0.9), ("a", 0.2)]


def test_documents_past_top_n_are_not_sent_keep_their_order_and_never_outscore_the_reranked() -> None:
    reranker = TableReranker({})  # every text sent scores 0
    ranked = [doc("a", 0.9), doc("b", 0.8), doc("c", 0.7), doc("d", 0.2)]
    out, report = RerankStage(reranker, top_n=2, weight=0.5).apply("q", ranked, texts_of)
    assert [t for _, ts in reranker.calls for t in ts] == ["text of a", "text of b"]
    assert [d.document_id for d in out] == ["a", "b", "c", "d"]
    # a: 0.45, b: 0.40; c (0.7) is shown at most at b's score, d keeps its own
    assert [round(d.score, 6) for d in out] == [0.45, 0.4, 0.4, 0.2]
    assert report.reranked == 2


def test_only_the_best_chunk_is_sent_cut_to_the_limit_and_deleted_chunks_are_not_sent() -> None:
    reranker = TableReranker({})
    ranked = [doc("long", 0.9), doc("gone", 0.8)]

    def texts(ids: Sequence[str]) -> dict[str, str]:
        return {i: "x" * (MAX_TEXT_CHARS + 500) for i in ids if not i.startswith("gone")}

    out, report = RerankStage(reranker, top_n=10, weight=0.7).apply("q" * 5000, ranked, texts)
    query, sent = reranker.calls[0]
    assert len(query) == MAX_TEXT_CHARS and [len(t) for t in sent] == [MAX_TEXT_CHARS]
    assert report.reranked == 1 and [d.document_id for d in out] == ["long", "gone"]


@pytest.mark.parametrize(
    "error, reason",
    [
        (TransientError("Bedrock Rerank (m) unavailable: ThrottlingException"), "ThrottlingException"),
        (MemlaneError("Bedrock Rerank (m) refused the request: AccessDeniedException"), "AccessDeniedException"),
    ],
)
def test_a_failing_reranker_skips_the_stage_and_says_why(error: Exception, reason: str) -> None:
    ranked = [doc("a", 0.8), doc("b", 0.6)]
    out, report = RerankStage(TableReranker({}, error=error), top_n=5, weight=0.7).apply("q", ranked, texts_of)
    assert out == ranked
    assert report.status == "skipped" and reason in (report.reason or "")


def test_a_reranker_answering_the_wrong_number_of_scores_is_skipped() -> None:
    class Short(TableReranker):
        def score(self, query: str, texts: Sequence[str]) -> list[float]:
            return [0.5]

    ranked = [doc("a", 0.8), doc("b", 0.6)]
    out, report = RerankStage(Short({}), top_n=5, weight=0.7).apply("q", ranked, texts_of)
    assert out == ranked and report.status == "skipped" and "1 scores for 2 texts" in (report.reason or "")


def test_the_option_refuses_settings_it_cannot_honour() -> None:
    assert isinstance(TableReranker({}), Reranker)
    with pytest.raises(ValueError, match="top_n"):
        Rerank(TableReranker({}), top_n=0)
    with pytest.raises(ValueError, match="top_n"):
        Rerank(TableReranker({}), top_n=101)
    with pytest.raises(ValueError, match="weight"):
        Rerank(TableReranker({}), weight=0)


# --------------------------------------------------------------------------- inside recall


@pytest.fixture
def saved(stack, who):
    for text in ("the landlord needs two months notice", "notice periods for the office lease",
                 "a recipe for lemon cake"):
        save_memory(stack.services, who, MemoryIn(content=text), inline=True)
    return stack


def test_recall_without_a_rerank_stage_says_nothing_about_one(saved, who) -> None:
    out = recall(saved.services, who, RecallIn(query="notice"))
    assert out.rerank is None and out.total == 3  # (no relevance floor on this branch)


def test_recall_applies_the_stage_and_reports_it(saved, who) -> None:
    plain = recall(saved.services, who, RecallIn(query="notice"))
    first, second = (d.chunks[0].content for d in plain.results[:2])
    # Given a model that prefers the fused ranking's second memory and doubts its first
    reranker = TableReranker({second: 0.95, first: 0.05})
    svc = dataclasses.replace(saved.services, rerank=Rerank(reranker, top_n=30, weight=0.7))
    out = recall(svc, who, RecallIn(query="notice"))
    assert [d.chunks[0].content for d in out.results][:2] == [second, first]
    assert out.rerank == {"model": "test/table", "status": "applied", "reranked": 3}
    # the second recall is served from the cache, with the same report and no second model call
    again = recall(svc, who, RecallIn(query="notice"))
    assert again.rerank == out.rerank and len(reranker.calls) == 1
    assert [d.document_id for d in again.results] == [d.document_id for d in out.results]


def test_a_throttled_reranker_leaves_the_fused_answer_says_so_and_is_tried_again(saved, who) -> None:
    plain = recall(saved.services, who, RecallIn(query="notice"))
    reranker = TableReranker({}, error=TransientError("Bedrock Rerank (m) unavailable: ThrottlingException"))
    svc = dataclasses.replace(saved.services, rerank=Rerank(reranker))
    out = recall(svc, who, RecallIn(query="notice"))
    assert [d.document_id for d in out.results] == [d.document_id for d in plain.results]
    assert [d.score for d in out.results] == [d.score for d in plain.results]
    assert out.rerank is not None and out.rerank["status"] == "skipped"
    assert "ThrottlingException" in str(out.rerank["reason"])
    # not cached: the next recall asks the model again
    recall(svc, who, RecallIn(query="notice"))
    assert len(reranker.calls) == 2
