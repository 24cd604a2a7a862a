"""Relevance in [0, 1] from raw evidence, and the one pipeline's floor (memlane.recall)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlane.mcp.formatting import recall_text
from memlane.ports import Candidate, LegResults, RecallFilters, SearchScope
from memlane.recall import relevance as rel
from memlane.recall.fusion import fuse_scores

NOW = datetime(2026, 11, 25, tzinfo=UTC)
C = rel.MINILM


def test_relevance_stays_in_0_1_whatever_the_evidence() -> None:
    for cosine in (-0.3, 0.0, 0.2, 0.5, 0.9, 1.2):
        for bm25 in (0.0, 0.5, 5.0, 80.0):
            for exact in (False, True):
                assert 0.0 <= rel.relevance(cosine, bm25, 3, exact, C) <= 1.0


def test_unrelated_cosines_give_nothing_and_close_paraphrases_everything() -> None:
    assert rel.vector_part(0.2, C) == 0.0  # MiniLM's unrelated text sits around 0.0-0.25
    assert rel.vector_part(0.8, C) == 1.0
    assert rel.vector_part(0.4, C) < rel.vector_part(0.5, C)


def test_bm25_counts_per_query_term_so_a_long_query_does_not_inflate_it() -> None:
    # the same raw BM25 is strong evidence for a one-word query, weak for a ten-word one
    assert rel.text_part(10.0, 1, C) > 0.8
    assert rel.text_part(10.0, 10, C) < 0.2
    assert rel.text_part(0.0, 1, C) == 0.0


def test_a_possessive_is_not_a_query_term_of_its_own() -> None:
    # OpenSearch's english analyzer drops it; the embedded tokenizer would count an `s`
    assert rel.query_terms("What country is Caroline's grandma from?") == 3
    assert rel.content_words("Nate\u2019s favorite game") == ["nate", "favorite", "game"]
    assert rel.query_terms("it's Bess's") == 1


def test_distinctive_terms_are_codes_identifiers_numbers_and_acronyms() -> None:
    terms = rel.distinctive_terms("why did ZX-4471 fail in parse_config after v2.3 and the NASA memo, Paris?")
    assert terms == ["zx-4471", "parse_config", "v2.3", "NASA"]
    assert rel.contains_term("the NASA memo", "NASA") and not rel.contains_term("my arm hurts", "ARM")
    assert rel.distinctive_terms("how much notice for my landlord") == []
    assert rel.contains_term("Ticket ZX-4471 was escalated", "zx-4471")
    assert not rel.contains_term("Ticket ZX-44712 was escalated", "zx-4471")


def test_embedders_get_their_own_calibration_and_an_unknown_one_no_floor() -> None:
    assert rel.calibration_for("local/all-MiniLM-L6-v2/384") is rel.MINILM
    assert rel.calibration_for("local/all-MiniLM-L6-v2-int8/384") is rel.MINILM
    assert rel.calibration_for("openai/text-embedding-3-small/1536").floor < rel.MINILM.floor
    assert rel.calibration_for("bedrock/amazon.titan-embed-text-v2:0/1024").calibrated is False
    assert rel.calibration_for("test/hash/256").floor == 0.0


def test_fusion_keeps_the_raw_bm25_beside_the_normalised_score() -> None:
    def cand(cid: str, score: float) -> Candidate:
        return Candidate(cid, "d-" + cid, 0, score, NOW)

    fused = fuse_scores(LegResults(vector=[], text=[cand("a", 4.0), cand("b", 0.4)]), NOW)
    by_id = {f.chunk_id: f for f in fused}
    # normalised to the batch maximum, the weak match of a weak batch would look as good as any
    assert by_id["a"].text_score == 1.0 and by_id["a"].bm25 == 4.0 and by_id["b"].bm25 == 0.4


class _Index:
    def __init__(self, legs: LegResults) -> None:
        self.legs = legs
        self.calls: list[tuple[str, object]] = []
        self.complete: list[bool] = []

    def search(self, scope, text, vector, k, *, complete=True):  # noqa: ANN001, ANN201
        self.calls.append((text, vector))
        self.complete.append(complete)
        return self.legs


class _Chunks:
    """The metadata port's chunk records, as the pipeline reads them (content type and text)."""

    def __init__(self, types: dict[str, str], text: str = "") -> None:
        self.types = types
        self.text = text
        self.asked: list[list[str]] = []

    def get_chunks_by_id(self, org_id, chunk_ids):  # noqa: ANN001, ANN201
        from types import SimpleNamespace

        from memlane.domain.models import ContentType

        self.asked.append(list(chunk_ids))
        return [SimpleNamespace(id=c, document_id=f"d-{c}", title="t", heading_path=[], content=self.text, tags=[],
                                content_type=ContentType(self.types[c]))
                for c in chunk_ids if c in self.types]


@pytest.mark.parametrize("floor, kept", [(0.0, ["d-strong", "d-weak"]), (0.5, ["d-strong"])])
def test_the_pipeline_drops_what_is_below_the_floor_and_says_what_ran(floor, kept) -> None:  # noqa: ANN001
    from types import SimpleNamespace

    from memlane.domain.tuning import FusionWeights
    from memlane.recall.pipeline import Retrieval, retrieve

    legs = LegResults(
        vector=[Candidate("strong", "d-strong", 0, 0.75, NOW), Candidate("weak", "d-weak", 0, 0.2, NOW)], text=[])
    index = _Index(legs)
    embedder = SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0])
    svc = SimpleNamespace(embedder=embedder, index=index, clock=SimpleNamespace(now=lambda: NOW),
                          metadata=_Chunks({"strong": "text", "weak": "text"}))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    found = retrieve(svc, Retrieval(query="what medication does my cat take", scope=scope, k=10,  # type: ignore[arg-type]
                                    weights=FusionWeights(), floor=floor))
    assert [g.document_id for g in found.documents] == kept
    assert found.stages == ["fusion"] and found.floor == floor
    assert found.below_floor == 2 - len(kept)
    assert all(0 <= g.relevance <= 1 for g in found.documents)


def test_mcp_recall_says_no_memory_matches_and_names_the_floor() -> None:
    text = recall_text("zeppelin quiver", {"results": [], "total": 0, "floor": 0.29}, {})
    assert text.startswith("No memory matches") and "0.29" in text
    shown = recall_text("tides", {"results": [{"title": "t", "score": 0.8, "relevance": 0.61, "chunks": [
        {"content": "spring tides"}]}], "floor": 0.29}, {})
    assert "relevance: 0.61" in shown


def test_every_content_word_of_the_query_in_the_text_is_an_exact_match() -> None:
    words = rel.content_words("what about the tomatoes?")
    assert words == ["about", "tomatoes"]
    assert rel.exact_match("Tomato seedlings need sun.", [], rel.content_words("tomato"))
    assert rel.exact_match("Two tomatoes.", [], rel.content_words("Tomato"))
    assert not rel.exact_match("Tomato seedlings need sun.", [], rel.content_words("tomato soup"))
    assert rel.exact_match("see parse_config", rel.distinctive_terms("parse_config bug"), ["parse_config", "bug"])


def test_mcp_recall_without_a_floor_says_nothing_was_found() -> None:
    assert recall_text("x", {"results": [], "floor": 0}, {}) == 'No memories found for "x".'


def test_a_year_is_not_a_distinctive_term() -> None:
    assert rel.distinctive_terms("what did Caroline do in May 2023") == []
    assert rel.distinctive_terms("gate code 4411") == ["4411"]


def test_a_code_chunks_text_share_is_its_own_evidence_not_the_batch_maximum() -> None:
    def cand(cid: str, score: float) -> Candidate:
        return Candidate(cid, "d-" + cid, 0, score, NOW)

    legs = LegResults(vector=[cand("described", 0.6), cand("shares-a-word", 0.3)], text=[cand("shares-a-word", 4.0)])
    spec = {f.chunk_id: f for f in fuse_scores(legs, NOW)}
    # spec: the batch's best keyword match (one common word of a prose question) gets the whole 0.4
    assert spec["shares-a-word"].text_score == 1.0
    assert spec["shares-a-word"].score > spec["described"].score
    evidence = rel.text_part(4.0, 5, C)  # 4.0 over five query words: weak
    assert 0.1 < evidence < 0.2
    fused = {f.chunk_id: f for f in fuse_scores(legs, NOW, text_scores={"shares-a-word": evidence},
                                                code=frozenset({"described", "shares-a-word"}))}
    assert fused["shares-a-word"].text_score == pytest.approx(evidence)
    assert fused["described"].score > fused["shares-a-word"].score  # the described function first
    assert fused["described"].code and fused["shares-a-word"].bm25 == 4.0


def _pipeline(types: dict[str, str], legs: LegResults, weights: object, floor: float = 0.0):  # noqa: ANN202
    from types import SimpleNamespace

    from memlane.recall.pipeline import Retrieval, retrieve

    embedder = SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0])
    metadata = _Chunks(types)
    svc = SimpleNamespace(embedder=embedder, index=_Index(legs), clock=SimpleNamespace(now=lambda: NOW),
                          metadata=metadata)
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    found = retrieve(svc, Retrieval(query="Return true if this widget is mapped", scope=scope, k=10,  # type: ignore[arg-type]
                                    weights=weights, floor=floor))  # type: ignore[arg-type]
    return found, metadata


@pytest.mark.parametrize("content_type, first", [("code", "d-described"), ("text", "d-shares-a-word")])
def test_the_pipeline_weighs_code_by_its_keyword_evidence_and_prose_by_the_spec(content_type, first) -> None:  # noqa: ANN001
    from memlane.domain.tuning import FusionWeights

    legs = LegResults(
        vector=[Candidate("described", "d-described", 0, 0.6, NOW), Candidate("shares-a-word", "d-shares-a-word", 0, 0.3, NOW)],
        text=[Candidate("shares-a-word", "d-shares-a-word", 0, 4.0, NOW)])
    types = {"described": content_type, "shares-a-word": content_type}
    found, metadata = _pipeline(types, legs, FusionWeights(code_text_evidence=True))
    assert [g.document_id for g in found.documents][0] == first
    assert metadata.asked == [["shares-a-word", "described"]]  # one read of the candidates' records
    # the spec's formula when the weights do not ask for it: the shared word wins for code too
    found, _ = _pipeline(types, legs, FusionWeights())
    assert [g.document_id for g in found.documents][0] == "d-shares-a-word"


def test_code_is_relevant_at_lower_cosines_than_prose() -> None:
    # a question in prose meets the code that answers it at lower cosines than a note that does
    assert C.code is not None and C.code.zero < C.cosine_zero
    assert rel.vector_part(0.35, C) < C.floor <= rel.vector_part(0.35, C, code=True)
    assert rel.relevance(0.35, 0.0, 4, False, C, code=True) == rel.vector_part(0.35, C, code=True)
    assert rel.vector_part(C.code.zero, C, code=True) == 0.0 and rel.vector_part(C.code.one, C, code=True) == 1.0
    assert rel.vector_part(0.35, rel.UNKNOWN, code=True) == rel.vector_part(0.35, rel.UNKNOWN)  # no code scale


def test_the_floor_keeps_a_code_answer_a_note_at_the_same_cosine_would_lose() -> None:
    from memlane.domain.tuning import FusionWeights

    legs = LegResults(vector=[Candidate("a", "d-a", 0, 0.35, NOW)], text=[])
    code, _ = _pipeline({"a": "code"}, legs, FusionWeights(), floor=C.floor)
    note, _ = _pipeline({"a": "note"}, legs, FusionWeights(), floor=C.floor)
    assert [g.document_id for g in code.documents] == ["d-a"] and code.documents[0].chunks[0].code
    assert note.documents == [] and note.below_floor == 1


def test_memories_get_completed_legs_and_documentation_each_legs_own_top_k() -> None:
    from types import SimpleNamespace

    from memlane.config import Settings
    from memlane.config.docsets import DocsetSettings
    from memlane.domain.tuning import DOCSET_FUSION
    from memlane.recall.pipeline import Retrieval, retrieve

    index = _Index(LegResults(vector=[Candidate("c", "d", 0, 0.75, NOW)], text=[]))
    svc = SimpleNamespace(embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0]),
                          index=index, clock=SimpleNamespace(now=lambda: NOW), metadata=_Chunks({"c": "text"}))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    for weights in (Settings().fusion, DOCSET_FUSION, DocsetSettings.from_env({}).fusion):
        retrieve(svc, Retrieval(query="q", scope=scope, k=10, weights=weights))  # type: ignore[arg-type]
    # Then memory recall asks the index to score each leg's candidates on the other leg, and
    # documentation retrieval (its weights and page support chosen with each leg's own top k) does not
    assert index.complete == [True, False, False]
    assert Settings.from_env({"MEMLANE_FUSION_COMPLETE_LEGS": "0"}).fusion.complete_legs is False
