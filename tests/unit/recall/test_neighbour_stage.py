"""Neighbouring memories as context, the recall stage after the fusion."""

from __future__ import annotations

import pytest

from memlane.domain.tuning import NeighbourWeights
from memlane.recall.fusion import ScoredDocument
from memlane.recall.neighbours import add_neighbour_context

# Save order of a conversation: q asks, a answers, x and y are elsewhere in the thread.
ORDER = ["x", "q", "a", "y"]


def around(ids):
    out = {}
    for d in ids:
        i = ORDER.index(d)
        out[d] = (list(reversed(ORDER[max(0, i - 2) : i])), ORDER[i + 1 : i + 3])
    return out


def docs(**scores):
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    return [ScoredDocument(d, s, []) for d, s in ranked]


def test_an_answer_gains_a_share_of_the_question_saved_before_it():
    # Given the turn asking about the topic scores well and its answer, which never names it, less
    # than an unrelated turn
    groups = docs(q=0.8, y=0.5, a=0.4)
    # When the next save on either side passes 0.3 of its fused score
    out = add_neighbour_context(groups, around, NeighbourWeights(weight=0.3, window=1))
    # Then the answer rises above the unrelated turn: 0.4 + 0.3 × 0.8 = 0.64 > 0.5 + 0.3 × 0.4
    scores = {g.document_id: g.score for g in out}
    assert scores["a"] == pytest.approx(0.64)
    assert scores["q"] == pytest.approx(0.8 + 0.3 * 0.4)
    assert scores["y"] == pytest.approx(0.5 + 0.3 * 0.4)
    assert [g.document_id for g in out] == ["q", "a", "y"]


def test_only_the_best_neighbour_counts_and_farther_ones_count_less():
    groups = docs(q=0.8, a=0.6, y=0.1, x=0.1)
    near = NeighbourWeights(weight=0.5, window=1)
    out = {g.document_id: g.score for g in add_neighbour_context(groups, around, near)}
    # y's neighbours are a (0.6) and, two saves away, q: within window 1 only a counts
    assert out["y"] == pytest.approx(0.1 + 0.5 * 0.6)
    wide = NeighbourWeights(weight=0.5, window=2, decay=0.5)
    out = {g.document_id: g.score for g in add_neighbour_context(groups, around, wide)}
    assert out["y"] == pytest.approx(0.1 + 0.5 * max(0.6, 0.5 * 0.8))


def test_documents_the_legs_did_not_return_are_never_added():
    # Given only the question was found, its answer and the rest were not
    out = add_neighbour_context(docs(q=0.8), around, NeighbourWeights(weight=0.3))
    assert [(g.document_id, g.score) for g in out] == [("q", 0.8)]


def test_weight_zero_is_the_spec_ranking_and_looks_nothing_up():
    def fail(ids):
        raise AssertionError("no lookup when the stage is off")

    groups = docs(y=0.5, a=0.4)
    assert add_neighbour_context(groups, fail, NeighbourWeights(weight=0.0)) is groups


def test_invalid_settings_are_refused():
    for bad in ({"weight": -0.1}, {"window": 0}, {"decay": 1.5}):
        with pytest.raises(ValueError):
            NeighbourWeights(**bad)


def test_neighbours_pass_on_relevance_not_their_recency_bonus():
    from memlane.recall.fusion import ScoredChunk

    # Given a question turn whose fused 0.9 holds a 0.1 recency bonus
    q = ScoredDocument("q", 0.9, [ScoredChunk("q:0", "q", 0, 0.9, 1.0, 0.5, recency=0.1)])
    a = ScoredDocument("a", 0.5, [ScoredChunk("a:0", "a", 0, 0.5, 0.5, 0.0, recency=0.1)])
    out = {g.document_id: g.score for g in add_neighbour_context([q, a], around, NeighbourWeights(weight=0.5))}
    # Then the answer gains half of 0.8, not of 0.9
    assert out["a"] == pytest.approx(0.5 + 0.5 * 0.8)
