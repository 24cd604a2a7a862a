"""The floor calibration's offline analysis (bench.calibrate_floor): one recording, every floor."""

from __future__ import annotations

from bench.calibrate_floor import NONSENSE_COUNT, Params, choose, curve, nonsense_queries

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
