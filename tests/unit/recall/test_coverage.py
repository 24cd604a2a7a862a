"""Issue 35, fourth round: the word share counts how much of the question a chunk's words account for
(memlane.recall.coverage), and a chunk whose own words hold the whole question is a strong match."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from fakes import ChunkRecords, FixedLegs

from memlane.config import Settings
from memlane.domain.tuning import FusionWeights
from memlane.ports import Candidate, LegResults, RecallFilters, SearchScope
from memlane.recall import relevance as rel
from memlane.recall.coverage import coverage, holds_stem, question_stems, stem
from memlane.recall.fusion import fuse_scores
from memlane.recall.pipeline import Retrieval, retrieve
from memlane.recall.recipes import COLLECTION_HYBRID, MEMORY_RECALL

NOW = datetime(2026, 11, 29, tzinfo=UTC)
C = rel.MINILM
WIFI_QUESTION = "what's the key for the wireless at our apartment?"


@pytest.mark.parametrize("asked, text", [
    ("parking", "We parked behind the station."),
    ("vaccinated", "Pepper's vaccinations are due in May."),
    ("happy", "Her happiness matters."),
    ("expire", "The passport expires in September."),
    ("boxes", "The key box is by the door."),
])
def test_a_word_is_held_in_any_form_its_stem_takes(asked: str, text: str) -> None:
    assert holds_stem(text.lower(), stem(asked))


@pytest.mark.parametrize("asked, text", [
    ("car", "We cared for the cat."),  # a prefix is not the word
    ("art", "The party starts at eight."),  # nor is a word inside another
    ("key", "The monkey escaped."),
])
def test_a_word_is_not_held_by_a_longer_word_it_opens_or_sits_in(asked: str, text: str) -> None:
    assert not holds_stem(text.lower(), stem(asked))


def test_coverage_is_the_share_of_the_questions_content_words_held() -> None:
    # "what's", "the", "for", "at", "our" are not content words: key, wireless, apartment are
    assert question_stems(WIFI_QUESTION) == (stem("key"), stem("wireless"), stem("apartment"))
    assert coverage("The spare apartment key hangs in the cellar.", question_stems(WIFI_QUESTION)) == pytest.approx(2 / 3)
    assert coverage("Router password: tulpe-Regen-4471", question_stems(WIFI_QUESTION)) == 0.0
    assert coverage("Wireless key for the apartment: tulpe", question_stems(WIFI_QUESTION)) == 1.0
    assert coverage("anything", ()) == 1.0  # a question of stopwords only: nothing to account for


def test_the_word_share_is_scaled_by_the_square_of_the_words_a_chunk_holds() -> None:
    legs = LegResults(vector=[], text=[Candidate("one", "d1", 0, 10.0, NOW), Candidate("all", "d2", 0, 10.0, NOW)])
    weights = FusionWeights(text_coverage=2.0)
    fused = {f.chunk_id: f for f in fuse_scores(legs, NOW, weights, coverage={"one": 1 / 3, "all": 1.0})}
    assert fused["all"].text_score == pytest.approx(1.0)
    assert fused["one"].text_score == pytest.approx(1 / 9)
    # 0: the spec's share, whatever the chunk holds
    spec = {f.chunk_id: f for f in fuse_scores(legs, NOW, FusionWeights(), coverage={"one": 1 / 3, "all": 1.0})}
    assert spec["one"].text_score == pytest.approx(1.0)


class _Messages(ChunkRecords):
    """Chunk records whose documents in `threads` are messages of a conversation."""

    def __init__(self, texts: dict[str, tuple[str, str]], threads: frozenset[str]) -> None:
        super().__init__(texts)
        self.threads = threads

    def conversation_messages(self, org_id: str, document_ids: list[str]) -> set[str]:
        return set(document_ids) & self.threads


def _retrieve(legs: LegResults, query: str, texts: dict[str, tuple[str, str]], weights: FusionWeights,
              threads: frozenset[str] = frozenset(), floor: float = 0.0):  # noqa: ANN202
    svc = SimpleNamespace(embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0]),
                          index=FixedLegs(legs), clock=SimpleNamespace(now=lambda: NOW),
                          metadata=_Messages(texts, threads))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    return retrieve(svc, Retrieval(query=query, scope=scope, k=50, weights=weights, floor=floor))  # type: ignore[arg-type]


# The router note answers the question and shares no word with it; the cellar note shares "apartment"
# and "key" is not in it: one word of three, the batch's best keyword match, and a strong one (BM25 9).
ROUTER_AND_CELLAR = LegResults(
    vector=[Candidate("router", "d-router", 0, 0.42, NOW), Candidate("cellar", "d-cellar", 0, 0.29, NOW)],
    text=[Candidate("cellar", "d-cellar", 0, 9.0, NOW)])
TEXTS = {"router": ("", "Home wifi is 'Weserblick_5G', password tulpe-Regen-4471."),
         "cellar": ("Cellar", "The apartment's cellar compartment is number 14.")}


def test_one_word_of_the_question_no_longer_outvotes_the_note_whose_meaning_answers_it() -> None:
    found = _retrieve(ROUTER_AND_CELLAR, WIFI_QUESTION, TEXTS, Settings().fusion)
    assert [g.document_id for g in found.documents] == ["d-router", "d-cellar"]
    # the divisor alone (no coverage) gave the cellar note 9 / (2.5 · 3) → the whole text weight, and the lead
    unscaled = _retrieve(ROUTER_AND_CELLAR, WIFI_QUESTION, TEXTS, FusionWeights(text_reference=2.5, code_text_evidence=True))
    assert unscaled.documents[0].document_id == "d-cellar"


def test_a_message_of_a_conversation_keeps_its_word_share() -> None:
    # its text entry also holds its neighbours' words (memlane.documents.contextual), which its record
    # does not: what it holds of the question cannot be read from the record, so it is not scaled
    found = _retrieve(ROUTER_AND_CELLAR, WIFI_QUESTION, TEXTS, Settings().fusion, threads=frozenset({"d-cellar"}))
    assert found.documents[0].document_id == "d-cellar"
    assert found.chunks[0].text_score == pytest.approx(1.0)


def test_a_chunk_whose_own_words_hold_the_whole_question_is_strong() -> None:
    legs = LegResults(vector=[Candidate("pass", "d-pass", 0, 0.3, NOW)], text=[Candidate("pass", "d-pass", 0, 3.0, NOW)])
    texts = {"pass": ("Documents", "Passport no. C4J7R2K91 expires on 2 Sept 2026.")}
    whole = _retrieve(legs, "when does my passport expire?", texts, Settings().fusion, floor=C.floor)
    [best] = whole.documents
    assert best.chunks[0].whole and best.relevance >= C.strong
    assert rel.match_of(best.relevance, C.strong) == "strong"
    # one word asked is a topic, not the question: an exact match, shown but not strong
    one = _retrieve(legs, "passport", texts, Settings().fusion, floor=C.floor).documents[0]
    assert not one.chunks[0].whole and one.relevance == pytest.approx(C.exact_match) and C.exact_match < C.strong
    # a chunk missing a word of the question ("renew") is not
    part = _retrieve(legs, "when must I renew my passport?", texts, Settings().fusion).documents[0]
    assert not part.chunks[0].whole and part.relevance < C.strong


def test_memories_scale_by_coverage_and_collections_keep_the_spec_formula() -> None:
    svc = SimpleNamespace(settings=Settings())
    assert MEMORY_RECALL.weights(svc).text_coverage == pytest.approx(2.0)  # type: ignore[arg-type]
    assert COLLECTION_HYBRID.weights(svc).text_coverage == 0.0  # type: ignore[arg-type]


def _ranked(first_few: int, cosines: list[float], floor: float = C.floor):  # noqa: ANN202
    legs = LegResults(vector=[Candidate(f"c{i}", f"d{i}", 0, x, NOW) for i, x in enumerate(cosines)], text=[])
    svc = SimpleNamespace(embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0]),
                          index=FixedLegs(legs), clock=SimpleNamespace(now=lambda: NOW), metadata=_Messages({}, frozenset()))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    return retrieve(svc, Retrieval(query="q", scope=scope, k=50, weights=FusionWeights(), floor=floor,  # type: ignore[arg-type]
                                   first_few=first_few))


def test_with_an_unsure_answer_recall_lists_the_first_few_below_the_floor_as_weak() -> None:
    # one memory passes the floor, weak (cosine 0.5: relevance 0.5, from standing 0.29 above the store's
    # median of 0.21); the next three sit below the floor (0.36, 0.35, 0.3: relevance 0.15 and less)
    store = [0.25, 0.22, 0.2, 0.2, 0.19, 0.18, 0.18, 0.17]
    found = _ranked(3, [0.5, 0.36, 0.35, 0.3, *store])
    listed = found.documents
    assert C.floor <= listed[0].relevance < C.strong
    assert [g.document_id for g in listed] == ["d0", "d1", "d2"]
    assert 0 < listed[1].relevance < C.floor and rel.match_of(listed[1].relevance, C.strong) == "weak"
    # the floor alone (the context pack, a request with min_relevance or strict): the answer only
    assert [g.document_id for g in _ranked(0, [0.5, 0.36, 0.35, 0.3, *store]).documents] == ["d0"]
    # a strong answer is not followed by what sits below the floor
    strong = _ranked(3, [0.7, 0.36, 0.35, 0.3, *store]).documents
    assert strong[0].relevance >= C.strong and [g.document_id for g in strong] == ["d0"]
    # a candidate with no evidence at all (relevance 0) is not listed: nothing says it is related
    bare = _ranked(3, [0.5, 0.24, 0.23, *store]).documents
    assert [g.document_id for g in bare] == ["d0"] and all(g.relevance == 0 for g in _ranked(3, [0.5, 0.24, 0.23, *store],
                                                                                               floor=0.0).documents[1:3])
    # and nothing above the floor (nonsense): still nothing
    assert _ranked(3, [0.25, 0.24, 0.2, 0.12, 0.1, 0.1, 0.09, 0.08, 0.07, 0.06, 0.05, 0.04]).documents == []


def test_recall_lists_the_first_few_unless_the_request_asks_for_strict_abstention() -> None:
    from memlane.recall.pipeline import FIRST_FEW
    from memlane.recall.recipes import CONTEXT_MEMORIES, RELATED_MEMORIES

    svc: Any = SimpleNamespace(settings=Settings(), embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384"), rerank=None,
                               metadata=None, clock=SimpleNamespace(now=lambda: NOW))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    assert MEMORY_RECALL.retrieval(svc, "q", scope).first_few == FIRST_FEW == 3
    assert MEMORY_RECALL.retrieval(svc, "q", scope, min_relevance=0.3).first_few == 0
    assert MEMORY_RECALL.retrieval(svc, "q", scope, strict=True).first_few == 0
    assert CONTEXT_MEMORIES.retrieval(svc, "q", scope).first_few == 0
    assert RELATED_MEMORIES.retrieval(svc, "q", scope).first_few == 0
