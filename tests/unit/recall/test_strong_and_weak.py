"""Issue 35: meaning is not outvoted by an incidental word, relevance knows a clear answer from noise,
and two thresholds mark each result strong or weak (memlane.recall)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from fakes import ChunkRecords, FixedLegs

from memlane.config import Settings
from memlane.domain.tuning import FusionWeights
from memlane.mcp.formatting import recall_text
from memlane.ports import Candidate, LegResults, RecallFilters, SearchScope
from memlane.recall import relevance as rel
from memlane.recall.pipeline import Retrieval, retrieve

NOW = datetime(2026, 11, 29, tzinfo=UTC)
C = rel.MINILM
# a person's notes: the query's neighbours in a store of unrelated notes sit near 0.1
FLAT = [0.14, 0.13, 0.12, 0.12, 0.11, 0.1, 0.1, 0.09, 0.09, 0.08, 0.07, 0.05]


def _retrieve(legs: LegResults, query: str, weights: FusionWeights, floor: float = 0.0, keep_clear_best: bool = False,
              texts: dict[str, tuple[str, str]] | None = None):  # noqa: ANN202
    svc = SimpleNamespace(embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0]),
                          index=FixedLegs(legs), clock=SimpleNamespace(now=lambda: NOW),
                          metadata=ChunkRecords(texts, default=("t", "")))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    return retrieve(svc, Retrieval(query=query, scope=scope, k=50, weights=weights, floor=floor,  # type: ignore[arg-type]
                                   keep_clear_best=keep_clear_best))


def _store(best: float, others: list[float]) -> LegResults:
    vector = [Candidate("answer", "d-answer", 0, best, NOW)]
    vector += [Candidate(f"n{i}", f"d-n{i}", 0, c, NOW) for i, c in enumerate(others)]
    return LegResults(vector=vector, text=[])


def test_an_incidental_word_no_longer_outvotes_the_note_whose_meaning_matches() -> None:
    # Given the router note (cosine 0.42, no shared word) and a note sharing one incidental word ("key")
    # that is the batch's best keyword match, weak as BM25 goes (4 over three query words)
    legs = LegResults(
        vector=[Candidate("router", "d-router", 0, 0.42, NOW), Candidate("cellar", "d-cellar", 0, 0.15, NOW)],
        text=[Candidate("cellar", "d-cellar", 0, 4.0, NOW)])
    query = "what's the key for the wireless at our apartment?"
    # When recall fuses them as the settings say (the text share's divisor never below 5 per query word)
    found = _retrieve(legs, query, Settings().fusion)
    # Then meaning wins: the router note first
    assert [g.document_id for g in found.documents] == ["d-router", "d-cellar"]
    # (the spec's batch maximum alone gives the incidental word the whole text weight and the lead)
    spec = _retrieve(legs, query, FusionWeights())
    assert spec.documents[0].document_id == "d-cellar"


def test_a_strong_keyword_batch_keeps_the_spec_share_scaled_by_the_words_it_holds() -> None:
    # a batch whose best match holds the whole query (BM25 well above the divisor's floor per word) is
    # normalised by the batch maximum, as the spec has it; a chunk holding two of the three words asked
    # keeps (2/3)² of its spec share (FusionWeights.text_coverage 2)
    legs = LegResults(vector=[Candidate("a", "d-a", 0, 0.3, NOW)],
                      text=[Candidate("a", "d-a", 0, 30.0, NOW), Candidate("b", "d-b", 0, 15.0, NOW)])
    texts = {"a": ("Courtyard", "The gate code is 4711."), "b": ("Garage", "Gate codes change on Mondays.")}
    fused = {f.chunk_id: f for f in _retrieve(legs, "gate code courtyard", Settings().fusion, texts=texts).chunks}
    assert Settings().fusion.text_coverage == pytest.approx(2.0)
    assert fused["a"].text_score == pytest.approx(1.0)
    assert fused["b"].text_score == pytest.approx(0.5 * (2 / 3) ** 2)


def test_a_clear_winner_over_the_rest_of_the_store_is_strong_at_a_low_cosine() -> None:
    # Given a paraphrase whose note sits at cosine 0.48 (the absolute scale alone: 0.45, weak), the
    # rest of the person's notes near 0.1
    found = _retrieve(_store(0.48, FLAT), "when does my travel document run out?", FusionWeights(), floor=C.floor)
    best = found.documents[0]
    # Then it stands 0.38 above the median candidate: relevance 0.7 from that, above the strong threshold
    assert best.document_id == "d-answer"
    assert rel.vector_part(0.48, C) < C.strong <= best.relevance
    assert rel.match_of(best.relevance, C.strong) == "strong"
    # and the notes around 0.1 are not returned at all
    assert [g.document_id for g in found.documents] == ["d-answer"]


def test_a_flat_spread_of_weak_matches_is_below_the_floor() -> None:
    # nonsense: every note a little similar, none standing out
    flat = [0.24, 0.23, 0.23, 0.22, 0.22, 0.21, 0.2, 0.2, 0.19]
    found = _retrieve(_store(0.25, flat), "zeppelin quiver barnacle nozzle", FusionWeights(), floor=C.floor)
    assert found.documents == [] and found.below_floor == 10


def test_elevation_needs_a_rest_of_the_store_to_stand_above() -> None:
    # a handful of candidates has no median that means "the rest of the store"
    few = rel.Background((0.5, 0.2, 0.1, 0.1, 0.1, 0.05))
    assert few.median is None and rel.elevation_part(0.5, few, C) == 0.0
    ten = rel.Background((0.5, 0.3, 0.25, 0.22, 0.2, 0.2, 0.15, 0.12, 0.1, 0.05))
    assert ten.median == pytest.approx(0.2)
    assert rel.elevation_part(0.5, ten, C) == pytest.approx((0.3 - 0.1) / 0.4)
    assert rel.elevation_part(0.9, None, C) == 0.0
    # an embedder without a measured scale reads no elevation
    assert rel.elevation_part(0.9, rel.Background((0.9, 0.0, 0.0)), rel.UNKNOWN) == 0.0


@pytest.mark.parametrize("keep, shown", [(True, ["d-answer"]), (False, [])])
def test_a_clear_best_match_below_the_floor_is_kept_unless_abstention_is_strict(keep, shown) -> None:  # noqa: ANN001
    # three notes: too few for elevation; the best one 0.1 above the others, below the floor on its own
    found = _retrieve(_store(0.3, [0.2, 0.19]), "who has to sign off on large bills?", FusionWeights(),
                      floor=C.floor, keep_clear_best=keep)
    assert [g.document_id for g in found.documents] == shown
    assert all(g.relevance < C.floor for g in found.documents)


def test_no_clear_best_when_two_matches_are_close() -> None:
    found = _retrieve(_store(0.3, [0.27, 0.1]), "x y", FusionWeights(), floor=C.floor, keep_clear_best=True)
    assert found.documents == []


def test_the_thresholds_are_ordered_and_match_follows_them() -> None:
    for c in (rel.MINILM, rel.OPENAI, rel.BEDROCK, rel.UNKNOWN):
        assert 0.0 <= c.floor <= c.strong <= 1.0
    assert rel.match_of(C.strong, C.strong) == "strong"
    assert rel.match_of(C.strong - 0.01, C.strong) == "weak"


def test_mcp_recall_labels_weak_results_and_says_when_nothing_is_strong() -> None:
    weak = {"title": "Passport", "score": 0.4, "relevance": 0.5, "match": "weak", "chunks": [{"content": "valid until"}]}
    strong = {**weak, "title": "Router", "relevance": 0.9, "match": "strong"}
    only_weak = recall_text("travel document", {"results": [weak], "floor": 0.24}, {})
    assert only_weak.startswith('No strong match for "travel document"')
    assert "possibly related; low confidence" in only_weak.split("\n\n", 1)[1]
    both = recall_text("wifi", {"results": [strong, weak], "floor": 0.24}, {})
    assert both.startswith('Found 2 memories for "wifi" (1 of them possibly related; low confidence)')
    first, second = both.split("---")
    assert "low confidence" not in first.split("\n", 2)[2] and "possibly related; low confidence;" in second


def test_the_pack_leaves_out_documentation_that_is_no_evidence_for_the_question() -> None:
    # issue 35 item 6: a question about a reading list was padded with unrelated doc snippets
    from memlane.domain.requests import ContextIn
    from memlane.recall.fusion import ScoredChunk
    from memlane.services.context_pack import _Candidate, _documentation

    def chunk(cid: str, relevance: float) -> ScoredChunk:
        return ScoredChunk(cid, "d-" + cid, 0, 0.5, 0.5, 0.0, 0.0, relevance=relevance)

    docs = [chunk("on-topic", 0.9), chunk("weak", 0.3), chunk("unrelated", 0.05)]
    strong_memory = [_Candidate(chunk("memory", 0.8), "memory", 0.8, "strong")]
    weak_memory = [_Candidate(chunk("memory", 0.3), "memory", 0.3, "weak")]
    body = ContextIn(query="which books are on my reading list?")
    kept = lambda memories, b=body: [c.scored.chunk_id for c in _documentation(docs, memories, C.floor, C.strong, b)]  # noqa: E731
    # below the memories' floor: never packed; a weak snippet: only when no strong memory answers
    assert kept(strong_memory) == ["on-topic"]
    assert kept(weak_memory) == ["on-topic", "weak"]
    assert kept(weak_memory, ContextIn(query="x", strict=True)) == ["on-topic"]
    # the caller's own floor is the floor of both kinds: nothing else is cut
    assert kept(strong_memory, ContextIn(query="x", min_relevance=0)) == ["on-topic", "weak", "unrelated"]


def test_a_clear_winner_among_a_few_memories_is_strong_and_nonsense_there_is_not() -> None:
    # Given a person's first three memories (too few candidates for a median) and a paraphrase of one:
    # the cat's pill note at cosine 0.55, the bakery and the backups at 0.13 and 0.09
    found = _retrieve(_store(0.55, [0.13, 0.09]), "what medication does my pet take daily?", FusionWeights(),
                      floor=C.floor)
    # Then the note is the answer, strong: it stands 0.42 above every other document
    assert [g.document_id for g in found.documents] == ["d-answer"]
    assert rel.match_of(found.documents[0].relevance, C.strong) == "strong"
    assert found.documents[0].relevance == pytest.approx((0.55 - 0.13 - 0.1) / 0.4)
    # And nonsense of the same store, whose least unrelated memory stands 0.12 above the others below the band
    # of unrelated text (cosine 0.24), gets nothing: no elevation without a cosine above that band
    nonsense = _retrieve(_store(0.24, [0.12, 0.1]), "velvet teapot saxophone", FusionWeights(), floor=C.floor)
    assert nonsense.documents == []


def test_among_a_few_memories_a_chunk_stands_above_other_documents_not_its_own() -> None:
    # two chunks of one document at 0.55 and 0.5, another document at 0.1: the runner-up is the other document
    few = rel.Background.of([("a", 0.55), ("a", 0.5), ("b", 0.1)], 50)
    assert few.median is None and few.reference("a") == pytest.approx(0.1) and few.reference("b") == pytest.approx(0.55)
    assert rel.elevation_part(0.55, few, C, "a") == pytest.approx(min(1.0, (0.55 - 0.1 - 0.1) / 0.4))
    # a single document has nothing to stand above
    assert rel.elevation_part(0.55, rel.Background.of([("a", 0.55)], 50), C, "a") == 0.0


TITLED = ChunkRecords({c: (t, "- contrast\n- labels") for c, t in
                      (("check", "Checklist"), ("wifi", "Home wifi password"), ("other", "Netflix password"))})


@pytest.mark.parametrize("query, strong", [
    ("checklist", ["d-check"]),  # the memory's own name, whatever BM25 makes of one word in a small store
    ("wifi password", ["d-wifi"]),  # every word in one title; "password" alone in another is not the answer
    ("Spotify password", []),  # a near miss: no title holds "spotify"
])
def test_a_title_holding_every_word_asked_is_a_strong_match(query, strong) -> None:  # noqa: ANN001
    # Given three memories the text leg finds, each with a weak keyword score and no meaningful cosine
    legs = LegResults(vector=[Candidate(c, f"d-{c}", 0, 0.2, NOW) for c in ("check", "wifi", "other")],
                      text=[Candidate(c, f"d-{c}", 0, 0.3, NOW) for c in ("check", "wifi", "other")])
    svc = SimpleNamespace(embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0]),
                          index=FixedLegs(legs), clock=SimpleNamespace(now=lambda: NOW), metadata=TITLED)
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    found = retrieve(svc, Retrieval(query=query, scope=scope, k=50, weights=FusionWeights(), floor=C.floor))  # type: ignore[arg-type]
    # Then only a memory whose title holds every content word of the question is strong
    assert sorted(g.document_id for g in found.documents if rel.match_of(g.relevance, C.strong) == "strong") == strong
