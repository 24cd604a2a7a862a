from datetime import UTC, datetime, timedelta

import pytest

from memlane.domain.tuning import FusionWeights
from memlane.ports import Candidate, LegResults
from memlane.recall.fusion import fuse_scores, group_by_document, recency_bonus

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def cand(cid, doc, score, idx=0, age_days=0.0):
    return Candidate(
        chunk_id=cid, document_id=doc, chunk_index=idx, score=score, created_at=NOW - timedelta(days=age_days)
    )


def test_recency_bonus_matches_the_spec_table():
    w = FusionWeights()
    assert recency_bonus(NOW, NOW, w) == pytest.approx(0.1)
    assert recency_bonus(NOW - timedelta(days=30), NOW, w) == pytest.approx(0.0368, abs=1e-4)
    assert recency_bonus(NOW - timedelta(days=90), NOW, w) == pytest.approx(0.0050, abs=1e-4)
    assert recency_bonus(NOW - timedelta(days=365), NOW, w) < 1e-5


def test_score_formula_is_0_6_vector_plus_0_4_normalized_text_plus_recency():
    # Given a chunk found by both legs, text scores 4.0 of a batch max 8.0, 30 days old
    legs = LegResults(
        vector=[cand("a", "d1", 0.8, age_days=30)],
        text=[cand("a", "d1", 4.0, age_days=30), cand("b", "d2", 8.0, age_days=30)],
    )
    fused = {s.chunk_id: s for s in fuse_scores(legs, NOW)}
    expected_a = 0.6 * 0.8 + 0.4 * 0.5 + 0.1 * 2.718281828**-1
    assert fused["a"].score == pytest.approx(expected_a, abs=1e-9)
    # b: text only, normalised to 1.0
    assert fused["b"].text_score == 1.0 and fused["b"].vector_score == 0.0
    assert fused["b"].score == pytest.approx(0.4 + 0.1 * 2.718281828**-1, abs=1e-9)


def test_keyword_only_match_surfaces_without_a_threshold():
    legs = LegResults(vector=[], text=[cand("k", "doc", 0.001)])
    fused = fuse_scores(legs, NOW)
    assert [s.chunk_id for s in fused] == ["k"]
    assert fused[0].text_score == 1.0


def test_hybrid_match_beats_either_leg_alone():
    legs = LegResults(
        vector=[cand("both", "d1", 0.7), cand("vec", "d2", 0.7)],
        text=[cand("both", "d1", 5.0), cand("txt", "d3", 5.0)],
    )
    order = [s.chunk_id for s in fuse_scores(legs, NOW)]
    assert order[0] == "both"


def test_newer_of_two_equally_relevant_results_ranks_first():
    legs = LegResults(
        vector=[cand("old", "d1", 0.5, age_days=60), cand("new", "d2", 0.5, age_days=1)], text=[]
    )
    assert [s.chunk_id for s in fuse_scores(legs, NOW)] == ["new", "old"]


def test_negative_cosine_is_clamped_to_zero():
    fused = fuse_scores(LegResults(vector=[cand("x", "d", -0.2, age_days=10_000)], text=[]), NOW)
    assert fused[0].vector_score == 0.0 and fused[0].score == pytest.approx(0.0)


def test_weights_are_configurable():
    legs = LegResults(
        vector=[cand("v", "d1", 1.0, age_days=10_000)], text=[cand("t", "d2", 1.0, age_days=10_000)]
    )
    fused = fuse_scores(legs, NOW, FusionWeights(vector=0.2, text=0.8, recency=0.0))
    assert [s.chunk_id for s in fused] == ["t", "v"]
    assert fused[0].score == pytest.approx(0.8)


def test_grouping_ranks_documents_by_best_chunk_and_orders_chunks_by_index():
    legs = LegResults(
        vector=[
            cand("d1c2", "d1", 0.9, idx=2),
            cand("d2c0", "d2", 0.8, idx=0),
            cand("d1c0", "d1", 0.3, idx=0),
        ],
        text=[],
    )
    groups = group_by_document(fuse_scores(legs, NOW))
    assert [g.document_id for g in groups] == ["d1", "d2"]
    assert [c.chunk_index for c in groups[0].chunks] == [0, 2]
    assert groups[0].score == pytest.approx(0.6 * 0.9 + 0.1)


def test_negative_weights_are_rejected():
    with pytest.raises(ValueError):
        FusionWeights(vector=-1)


def test_memory_recall_has_no_document_support_by_default():
    w = FusionWeights()
    assert w.support == 0.0
    legs = LegResults(vector=[cand("a0", "a", 0.8), cand("a1", "a", 0.7), cand("b0", "b", 0.8)], text=[])
    fused = {s.chunk_id: s for s in fuse_scores(legs, NOW, FusionWeights(recency=0.0))}
    assert all(s.support == 0.0 for s in fused.values())
    assert fused["a0"].score == pytest.approx(0.6 * 0.8)


def test_document_support_lifts_a_documents_best_chunk_by_its_next_best_chunks():
    # Page "topic" has four matching chunks, page "mention" one slightly better chunk.
    legs = LegResults(
        vector=[
            cand("mention0", "mention", 0.70),
            cand("topic0", "topic", 0.68),
            cand("topic1", "topic", 0.60),
            cand("topic2", "topic", 0.50),
            cand("topic3", "topic", 0.40),
        ],
        text=[],
    )
    w = FusionWeights(vector=1.0, text=0.0, recency=0.0, support=0.2, support_chunks=2)
    fused = {s.chunk_id: s for s in fuse_scores(legs, NOW, w)}
    # The best chunk gains 0.2 × the next two; a fourth chunk counts for nothing.
    assert fused["topic0"].support == pytest.approx(0.2 * (0.60 + 0.50))
    assert fused["topic0"].score == pytest.approx(0.68 + 0.2 * (0.60 + 0.50))
    # The other chunks keep their own scores, so a page's weak chunks are not lifted.
    assert fused["topic1"].score == pytest.approx(0.60) and fused["topic1"].support == 0.0
    assert fused["topic3"].score == pytest.approx(0.40)
    assert fused["mention0"].score == pytest.approx(0.70)
    ranked = fuse_scores(legs, NOW, w)
    assert [s.chunk_id for s in ranked][:3] == ["topic0", "mention0", "topic1"]
    assert [g.document_id for g in group_by_document(ranked)] == ["topic", "mention"]


def test_document_support_of_a_lone_chunk_is_zero_and_support_chunks_bounds_it():
    legs = LegResults(vector=[cand("a0", "a", 0.5), cand("a1", "a", 0.5), cand("b0", "b", 0.9)], text=[])
    w = FusionWeights(1.0, 0.0, 0.0, support=0.5, support_chunks=1)
    one = {s.chunk_id: s for s in fuse_scores(legs, NOW, w)}
    assert one["b0"].support == 0.0
    # A tie is broken by chunk id: a0 leads its document and counts a1 once.
    assert one["a0"].score == pytest.approx(0.75) and one["a1"].score == pytest.approx(0.5)
    off = fuse_scores(legs, NOW, FusionWeights(1.0, 0.0, 0.0, support=0.5, support_chunks=0))
    assert all(s.support == 0.0 for s in off)


def test_support_weights_are_validated():
    with pytest.raises(ValueError):
        FusionWeights(support=-0.1)
    with pytest.raises(ValueError):
        FusionWeights(support_chunks=-1)
