"""The bound on what any fusion of the two legs can reach (bench.fusion_bound)."""

from __future__ import annotations

from bench.fusion_bound import beats, bound_row, markdown, reachable, rows


def _record(documents: dict[str, list[tuple[float, float]]], evidence: list[str], query: str = "q", **extra) -> dict:
    return {"documents": [[d, [[c, b, False] for c, b in chunks]] for d, chunks in documents.items()],
            "evidence": evidence, "query": query, **extra}


def test_a_document_beats_another_only_when_it_is_as_high_on_both_legs_and_higher_on_one() -> None:
    assert beats([(0.6, 3.0)], [(0.5, 3.0)]) and beats([(0.5, 4.0)], [(0.5, 3.0)])
    assert not beats([(0.5, 3.0)], [(0.5, 3.0)])  # a tie: the chunk ids decide, so it can go either way
    assert not beats([(0.9, 0.0)], [(0.5, 3.0)])  # higher on one leg only: a text-heavy fusion reverses it
    # the two strengths in different chunks do not beat one chunk that has both: the best chunk decides
    assert not beats([(0.9, 0.0), (0.1, 9.0)], [(0.5, 3.0)])
    # every chunk of theirs must be met: their second chunk's BM25 is beyond ours
    assert not beats([(0.9, 5.0)], [(0.5, 3.0), (0.1, 6.0)])
    assert not beats([], [(0.1, 0.0)])


def test_evidence_beaten_on_both_legs_by_ten_candidates_is_out_of_every_fusions_ten() -> None:
    # ten candidates above the answer on both legs: no weights bring it into the first ten
    crowded = {f"d{i}": [(0.6 + i / 100, 5.0 + i)] for i in range(10)}
    crowded["gold"] = [(0.5, 4.0)]
    assert not reachable(crowded, "gold")
    # nine such candidates: a fusion can put it tenth
    nine = {d: v for d, v in crowded.items() if d != "d9"}
    assert reachable(nine, "gold")
    # ten candidates ahead on cosine alone, but the answer has the best BM25: enough text weight lifts it
    vector_only = {f"d{i}": [(0.6 + i / 100, 1.0)] for i in range(10)} | {"gold": [(0.5, 4.0)]}
    assert reachable(vector_only, "gold")
    # not a candidate at all: out of reach
    assert not reachable(vector_only, "missing")
    # as many chunks as the recording keeps of a document: it may have a stronger one, so it stays within reach
    three = {**crowded, "gold": [(0.5, 4.0), (0.4, 3.0), (0.3, 2.0)]}
    assert not reachable(three, "gold") and reachable(three, "gold", shown=3)


def test_the_bound_is_the_share_of_evidence_within_reach_beside_the_product_and_the_vector_leg() -> None:
    crowded = {f"d{i}": [(0.6 + i / 100, 5.0 + i)] for i in range(10)}
    records = [
        # the product ranks gold 11th (after the ten), and no fusion can do better
        _record({**crowded, "gold": [(0.5, 4.0)]}, ["gold"], query="out of reach"),
        # gold has the best BM25 but the lowest cosine: the product (as recorded) found it, the vector leg did not
        _record({"gold": [(0.1, 9.0)], **{f"v{i}": [(0.5 + i / 100, 1.0)] for i in range(12)}}, ["gold"]),
    ]
    row = bound_row("code", records)
    assert row.questions == 2 and row.product == 0.5 and row.vector == 0.0 and row.bound == 0.5
    assert row.out_of_reach == ["out of reach"]
    data = {"embedder": "local/x", "answerable": [{**records[1], "category": 3}],
            "code": {"answerable": records}, "chunks_per_document": 3}
    table = rows(data)
    assert [r.workload for r in table] == ["conversations", "conversations: open-domain", "code"]
    text = markdown(data, table, "cmd")
    assert "| code | 2 | 0.500 | 0.000 | 0.500 |" in text
    assert 'Code: 1 of 2 functions are out of every such fusion\'s first 10, so no fusion of these two legs reaches more than 0.500 recall@10 (MiniLM alone: 0.000): "out of reach".' in text
