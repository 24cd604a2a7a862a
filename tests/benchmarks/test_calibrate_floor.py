"""The floor calibration's offline analysis (bench.calibrate_floor): one recording, every floor."""

from __future__ import annotations

from bench.calibrate_floor import (
    NONSENSE_COUNT,
    Params,
    choose,
    curve,
    held_out,
    held_out_markdown,
    nonsense_queries,
)

P = Params(cosine_zero=0.3, cosine_one=0.7, bm25_scale=5.0, exact_match=0.6)


def _rec(*docs: tuple[str, float, float, bool], evidence: list[str] | None = None) -> dict:
    out = {"terms": 3, "documents": [[d, [[cos, bm25, exact]]] for d, cos, bm25, exact in docs]}
    if evidence is not None:
        out["evidence"] = evidence
    return out


def test_a_floor_drops_weak_results_and_the_next_ones_move_up() -> None:
    data = {
        # the answer ranks third, behind two weak candidates: a floor lifts it into the first ten
        "answerable": [_rec(*[(f"weak{i}", 0.31, 0.0, False) for i in range(10)], ("gold", 0.65, 0.0, False),
                            evidence=["gold"])],
        "unanswerable": [_rec(("x", 0.35, 0.0, False)), _rec(("y", 0.2, 30.0, False))],
        "nonsense": [_rec(("z", 0.1, 0.0, False))],
    }
    rows = {r["floor"]: r for r in curve(data, P, [0.0, 0.1, 0.5])}
    assert rows[0.0]["recall@10"] == 0.0 and rows[0.1]["recall@10"] == 1.0
    # relevance of x is 0.125 (cosine 0.35), of y 0.865 (BM25 10 a term): both pass 0.1, only y passes 0.5
    assert rows[0.1]["abstain_unanswerable"] == 0.0 and rows[0.5]["abstain_unanswerable"] == 0.5
    assert rows[0.0]["abstain_nonsense"] == 0.0 and rows[0.1]["abstain_nonsense"] == 1.0


def test_the_default_is_the_highest_floor_within_two_points_of_no_floor() -> None:
    rows = [{"floor": 0.0, "recall@10": 0.725}, {"floor": 0.29, "recall@10": 0.706},
            {"floor": 0.3, "recall@10": 0.701}]
    assert choose(rows)["floor"] == 0.29


def test_nonsense_queries_are_fixed_by_the_seed() -> None:
    assert nonsense_queries() == nonsense_queries() and len(nonsense_queries()) == NONSENSE_COUNT
    assert len(set(nonsense_queries())) >= NONSENSE_COUNT - 2


def test_code_chunks_are_read_on_their_own_cosine_scale() -> None:
    # a recorded chunk says whether it is code; the same cosine is evidence for code, noise for a note
    data = {
        "answerable": [{"terms": 3, "documents": [["fn", [[0.35, 0.0, False, True]]]], "evidence": ["fn"]}],
        "unanswerable": [{"terms": 3, "documents": [["note", [[0.35, 0.0, False, False]]]]}],
        "nonsense": [],
    }
    [row] = curve(data, P, [0.24])
    assert row["recall@10"] == 1.0  # code: (0.35 − 0.15) / 0.4 = 0.5 ≥ 0.24
    assert row["abstain_unanswerable"] == 1.0  # a note: (0.35 − 0.3) / 0.4 = 0.125 < 0.24
    # an old recording (three values a chunk) reads as prose
    old = {**data, "answerable": [{"terms": 3, "documents": [["fn", [[0.35, 0.0, False]]]], "evidence": ["fn"]}]}
    assert curve(old, P, [0.24])[0]["recall@10"] == 0.0


def _asked(conversation: str, cosine: float, *, evidence: bool) -> dict:
    rec = _rec(("gold" if evidence else "other", cosine, 0.0, False), evidence=["gold"] if evidence else None)
    return {**rec, "conversation": conversation}


def test_held_out_applies_the_floor_chosen_on_the_other_conversations() -> None:
    # a and b answer at relevance 0.75 (cosine 0.6), c at 0.25 (cosine 0.4): on a and b alone every floor up to
    # 0.39 keeps recall, so c, held out, gets that floor and loses its answer; with c in the training set,
    # the rule stops where c's answer is still above the floor
    data = {
        "answerable": [_asked("a", 0.6, evidence=True), _asked("b", 0.6, evidence=True), _asked("c", 0.4, evidence=True)],
        "unanswerable": [_asked("a", 0.35, evidence=False), _asked("b", 0.5, evidence=False),
                         _asked("c", 0.2, evidence=False)],
        "nonsense": [],
    }
    rows = {r["conversation"]: r for r in held_out(data, P, [0.0, 0.2, 0.25, 0.39])}
    assert rows["c"]["floor"] == 0.39 and rows["c"]["recall@10"] == 1.0 and rows["c"]["at_floor"] == 0.0
    assert rows["c"]["loss"] == 1.0 and rows["c"]["abstain_unanswerable"] == 1.0
    # a held out: b and c decide; c's answer (0.25) allows 0.25, and a's own question asked elsewhere (0.125) abstains
    assert rows["a"]["floor"] == 0.25 and rows["a"]["loss"] == 0.0 and rows["a"]["abstain_unanswerable"] == 1.0
    # b's question asked elsewhere (cosine 0.5: relevance 0.5) does not
    assert rows["b"]["abstain_unanswerable"] == 0.0
    text = "\n".join(held_out_markdown(list(rows.values())))
    assert "1 of 3 held-out conversations lose more than 0.02 (c)" in text
    # pooled: c loses its one answer of three questions; a and c abstain, b does not
    assert "recall@10 loses 0.333, and 66.7% of the questions asked of another conversation get nothing" in text


def test_a_recording_without_conversation_ids_has_no_held_out_rows() -> None:
    data = {"answerable": [_rec(("gold", 0.6, 0.0, False), evidence=["gold"])], "unanswerable": [], "nonsense": []}
    assert held_out(data, P) == [] and held_out_markdown([]) == []
