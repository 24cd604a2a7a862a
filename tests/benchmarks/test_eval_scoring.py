"""The scoring of the recall suite (bench.eval.scoring), applied offline to the rankings a run
recorded: recall@k, hit@k and MRR@10 over targets, coverage of evidence turns by facts, the code
hit, the abstention share and the floor curve."""

from __future__ import annotations

import pytest

from bench.eval.locomo import Conversation, Fact
from bench.eval.report import conversations_targets, facts_targets, target_verdict
from bench.eval.scoring import (
    Interval,
    Record,
    abstention_share,
    curve,
    highest_floor_within,
    paired_interval,
    score,
    summarize,
)
from bench.eval.workloads.facts import evidence_targets, shuffled_facts


def test_recall_is_the_share_of_targets_found_hit_whether_any_and_mrr_the_first():
    # Given a ranking of twelve ids and three evidence turns: one 3rd, one 8th, one not returned
    ranking = [f"d{i}" for i in range(12)]
    s = score(ranking, [["d2"], ["d7"], ["zz"]])
    assert s["recall@5"] == pytest.approx(1 / 3)
    assert s["recall@10"] == pytest.approx(2 / 3)
    assert s["hit@5"] == 1.0 and s["hit@10"] == 1.0
    assert s["mrr@10"] == pytest.approx(1 / 3)
    # and an id at rank 11 is not found at 10, nor counted in MRR@10
    assert score(ranking, [["d10"]]) == {"recall@1": 0.0, "recall@3": 0.0, "recall@5": 0.0, "recall@10": 0.0,
                                         "hit@1": 0.0, "hit@3": 0.0, "hit@5": 0.0, "hit@10": 0.0, "mrr@10": 0.0}
    # top-1 and top-3 (the personal notes' measures): the 3rd is found at 3, not at 1
    assert (s["hit@1"], s["hit@3"], s["recall@3"]) == (0.0, 1.0, pytest.approx(1 / 3))
    # and two evidence turns saved as one memory count twice when that memory is returned
    assert score(ranking, [["d1"], ["d1"], ["zz"], ["zz"]])["recall@5"] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        score(ranking, [])


def test_an_evidence_turn_is_covered_by_any_fact_citing_it():
    # Given facts f1 and f2 both citing turn D1:3 of conversation c1, f3 citing D2:1 of c2
    citing = {("c1", "D1:3"): ["f1", "f2"], ("c2", "D2:1"): ["f3"], ("c1", "D2:1"): ["f4"]}
    # When a question of c1 has evidence D1:3, D2:1 and D9:9 (which no fact cites)
    targets = evidence_targets(("D1:3", "D2:1", "D9:9"), "c1", citing)
    # Then the uncited turn is left out, and a fact of another conversation never covers a turn
    assert targets == [["f1", "f2"], ["f4"]]
    # and returning f2 alone covers the first turn: recall 1/2, hit 1
    s = score(["x", "f2", "f3"], targets)
    assert s["recall@5"] == 0.5 and s["hit@5"] == 1.0 and s["mrr@10"] == 0.5
    # returning both facts of one turn covers it once
    assert score(["f1", "f2"], targets)["recall@10"] == 0.5
    assert score(["f1", "f4"], targets)["recall@10"] == 1.0


def test_facts_are_shuffled_the_same_way_every_run():
    conv = Conversation("c1", [], [], facts=[Fact("c1", "Ann", f"fact {i}", ("D1:1",), "") for i in range(30)])
    first, again = shuffled_facts([conv]), shuffled_facts([conv])
    assert [f.text for f in first] == [f.text for f in again]
    assert [f.text for f in first] != [f"fact {i}" for i in range(30)]
    assert sorted(f.text for f in first) == sorted(f.text for f in conv.facts)


def test_a_code_question_is_found_when_its_functions_memory_is_returned():
    # Given three code questions: found 1st, found 4th, not found in the first ten
    records = [
        Record("code", "memlane", "", "q1", ["fn1", "x"], [["fn1"]]),
        Record("code", "memlane", "", "q2", ["a", "b", "c", "fn2"], [["fn2"]]),
        Record("code", "memlane", "", "q3", [f"o{i}" for i in range(10)] + ["fn3"], [["fn3"]]),
    ]
    s = summarize(records)
    assert s.n == 3
    assert s["hit@5"] == pytest.approx(2 / 3)
    assert s["recall@10"] == pytest.approx(2 / 3)
    assert s["mrr@10"] == pytest.approx((1 + 1 / 4 + 0) / 3)


def _unanswerable(relevance, category="nonsense"):
    ranked = [f"d{i}" for i in range(len(relevance))]
    return Record("abstention", "memlane", category, "q", ranked, [], relevance)


def test_the_abstention_share_counts_questions_with_nothing_at_or_above_the_floor():
    records = [_unanswerable([0.2, 0.1]), _unanswerable([0.6, 0.3]), _unanswerable([]), _unanswerable([0.4])]
    # an empty answer abstains at any floor; the best result decides for the others
    assert abstention_share(records, 0.0) == 0.25
    assert abstention_share(records, 0.3) == 0.5
    assert abstention_share(records, 0.4) == 0.5  # a result exactly at the floor is returned
    assert abstention_share(records, 0.7) == 1.0
    # answerable records are not part of the share; none at all gives no figure
    assert abstention_share([Record("code", "memlane", "", "q", ["a"], [["a"]], [0.9])], 0.5) is None
    # without relevance (a server before the floor) only empty answers abstain
    no_relevance = [Record("abstention", "memlane", "x", "q", ["a"], []), Record("abstention", "memlane", "x", "q", [], [])]
    assert abstention_share(no_relevance, 0.9) == 0.5


def test_the_curve_trades_abstention_against_answerable_recall_and_picks_the_floor_within_the_allowance():
    # Given an answerable workload whose one relevant result has relevance 0.5 in one question of two
    answerable = {"code": [
        Record("code", "memlane", "", "q1", ["a", "b"], [["a"]], [0.9, 0.1]),
        Record("code", "memlane", "", "q2", ["c", "d"], [["d"]], [0.6, 0.5]),
    ]}
    unanswerable = {"nonsense": [_unanswerable([0.3]), _unanswerable([0.55])]}
    points = curve(answerable, unanswerable, floors=(0.0, 0.3, 0.35, 0.55, 0.6))
    by_floor = {p.floor: p for p in points}
    assert by_floor[0.0].abstention == {"nonsense": 0.0}
    assert by_floor[0.0].recall10 == {"code": 1.0}
    assert by_floor[0.35].abstention == {"nonsense": 0.5}
    assert by_floor[0.35].loss == {"code": 0.0}
    # above 0.5 the second question loses its answer
    assert by_floor[0.55].recall10 == {"code": 0.5}
    assert by_floor[0.55].loss == {"code": -0.5}
    assert by_floor[0.6].abstention == {"nonsense": 1.0}
    # the highest floor losing at most 0.02 recall@10
    best = highest_floor_within(points, 0.02)
    assert best is not None and best.floor == 0.35
    assert highest_floor_within(points[3:], 0.02) is None


def test_targets_name_the_categories_behind_a_baseline_and_the_facts_margin():
    def rec(method, category, found):
        return Record("x", method, category, "q", ["a"] if found else ["b"], [["a"]])

    records = [rec("memlane", c, True) for c in ("multi-hop", "temporal")]
    records += [rec("bm25", "multi-hop", False), rec("minilm", "multi-hop", False)]
    records += [rec("bm25", "temporal", True), rec("minilm", "temporal", False)]
    text = conversations_targets(records)
    assert "recall@10 ≥ 0.705 **met (1.000)**" in text
    assert "**not met (behind: temporal)**" in text  # a tie with a baseline is not above it
    # the same categories read at the default floor, as a client asks: temporal's answer is found there too
    floored = records + [rec("memlane-floor", "multi-hop", True), rec("memlane-floor", "temporal", True)]
    assert target_verdict("conversations", floored) == (
        "≥ 0.705, each category above both baselines: **not met**")  # a tie at the floor as well
    records_ahead = [r for r in records if not (r.method == "bm25" and r.category == "temporal")]
    records_ahead.append(rec("bm25", "temporal", False))
    assert target_verdict("conversations", records_ahead) == "≥ 0.705, each category above both baselines: met"
    facts = [rec("memlane", "", True), rec("memlane", "", False), rec("bm25", "", True), rec("bm25", "", False),
             rec("minilm", "", False), rec("minilm", "", False), rec("stages-off", "", True), rec("stages-off", "", True)]
    text = facts_targets(facts)
    assert "above the better baseline **not met (0.500 against 0.500)**" in text
    assert "stage-free pipeline's **not met (0.500 against 1.000)**" in text


def test_the_paired_interval_is_the_mean_difference_and_narrows_with_more_questions():
    def recs(method, found, n_copies):
        # the same questions for both methods, asked in the same order; one query asked twice
        out = []
        for _ in range(n_copies):
            for i, hit in enumerate(found):
                out.append(Record("x", method, "", f"q{i % 4}", ["a"] if hit else ["b"], [["a"]]))
        return out

    ours = [True, True, True, False, True, True, True, True]
    theirs = [True, False, True, False, True, False, True, True]
    small = paired_interval(recs("memlane", ours, 1), recs("minilm", theirs, 1))
    large = paired_interval(recs("memlane", ours, 25), recs("minilm", theirs, 25))
    # Then the mean is memlane's recall@10 minus the baseline's, question by question (7/8 - 5/8)
    assert small is not None and large is not None
    assert small.mean == pytest.approx(0.25) and large.mean == pytest.approx(0.25) and large.n == 200
    # and the interval holds it, and is narrower with 25 times the questions
    assert small.low <= 0.25 <= small.high and large.low <= 0.25 <= large.high
    assert large.high - large.low < (small.high - small.low) / 3
    # and it is reproducible (seeded), and says nothing without shared questions
    assert paired_interval(recs("memlane", ours, 1), recs("minilm", theirs, 1)) == small
    assert paired_interval(recs("memlane", ours, 1), []) is None
    assert str(Interval(0.028, 0.005, 0.052, 631)) == "+0.028 [+0.005, +0.052]"


def test_the_facts_target_line_carries_the_interval_against_the_better_baseline():
    def rec(method, i, found):
        return Record("x", method, "", f"q{i}", ["a"] if found else ["b"], [["a"]])

    records = [rec("memlane", i, True) for i in range(4)] + [rec("minilm", i, i < 2) for i in range(4)]
    records += [rec("bm25", i, i < 1) for i in range(4)]
    text = facts_targets(records)
    assert "**met (1.000 against 0.500)**" in text
    assert "recall@10 − MiniLM +0.500 [" in text


def test_the_conversations_line_reads_the_ranking_at_the_default_floor_beside_the_one_without():
    def rec(method, category, query, found):
        return Record("conversations", method, category, query, ["a"] if found else ["b"], [["a"]])

    # open-domain: without a floor memlane finds q1 only, MiniLM q1 and q2; at the default floor memlane's
    # weak first results are dropped and the answers of q1, q2 and q3 move into the first ten
    records = []
    for q, (ours, floored, minilm) in {"q1": (True, True, True), "q2": (False, True, True),
                                       "q3": (False, True, False)}.items():
        records += [rec("memlane", "open-domain", q, ours), rec("memlane-floor", "open-domain", q, floored),
                    rec("minilm", "open-domain", q, minilm), rec("bm25", "open-domain", q, False)]
    text = conversations_targets(records)
    assert "without a floor, recall@10 ≥ 0.705 **not met (0.333)**" in text
    assert "every category above both baselines on recall@10 **not met (behind: open-domain)**" in text
    assert "At the default floor, as a client asks (no `min_relevance`): recall@10 ≥ 0.705 **met (1.000)**" in text
    assert "on recall@10 **met (all four)**" in text
    # the category short in one reading gets both readings' intervals against its better baseline
    assert "Open-domain, memlane − MiniLM per question" in text
    assert "without a floor -0.333 [" in text and "at the default floor +0.333 [" in text
    verdict = target_verdict("conversations", records)
    assert verdict == ("≥ 0.705, each category above both baselines: met at the default floor; "
                       "**not met** without one (behind: open-domain)")
