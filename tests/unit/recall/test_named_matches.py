"""A question that names something is answered strongly only by a memory that names it
(memlane.recall.names, issue 35): the note on one's own passport is shown for "when does Aylin's
passport expire?", weak, never as the answer; the rule hides nothing and moves nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from fakes import ChunkRecords, FixedLegs

from memlane.domain.tuning import FusionWeights
from memlane.ports import Candidate, LegResults, RecallFilters, SearchScope
from memlane.recall import relevance as rel
from memlane.recall.names import named_terms, names_all
from memlane.recall.pipeline import Retrieval, retrieve

NOW = datetime(2026, 11, 29, tzinfo=UTC)
C = rel.MINILM
STORE = [0.14, 0.13, 0.12, 0.12, 0.11, 0.1, 0.1, 0.09, 0.09, 0.08, 0.07, 0.05]
TEXTS = {
    "passport": ("Passport", "Reisepass no. C4J7R2K91, valid until 2 Sept 2026. Kept in the desk drawer."),
    "aylin": ("Aylin – birthday & gift ideas", "Aylin's birthday: 17 August. Her passport is in her bag."),
    "code": ("", "def expire(self):\n    self._passport = None"),
}


def _retrieve(legs: LegResults, query: str, floor: float = 0.0):  # noqa: ANN202
    svc = SimpleNamespace(embedder=SimpleNamespace(id="local/all-MiniLM-L6-v2/384", embed_query=lambda q: [1.0]),
                          index=FixedLegs(legs), clock=SimpleNamespace(now=lambda: NOW),
                          metadata=ChunkRecords(TEXTS, code=frozenset({"code"})))
    scope = SearchScope(organization_id="o", project_ids=("p",), filters=RecallFilters(), now=NOW)
    return retrieve(svc, Retrieval(query=query, scope=scope, k=50, weights=FusionWeights(), floor=floor))  # type: ignore[arg-type]


def _legs(cosines: dict[str, float], bm25: dict[str, float]) -> LegResults:
    vector = [Candidate(c, f"d-{c}", 0, x, NOW) for c, x in cosines.items()]
    vector += [Candidate(f"n{i}", f"d-n{i}", 0, x, NOW) for i, x in enumerate(STORE)]
    return LegResults(vector=vector, text=[Candidate(c, f"d-{c}", 0, x, NOW) for c, x in bm25.items()])


def test_a_memory_lacking_the_name_asked_about_is_shown_weak_not_as_the_answer() -> None:
    # Given the note on one's own passport, close in meaning (cosine 0.6, well above the rest of the store)
    # and sharing the word "passport", asked about Aylin's passport, which it never names
    found = _retrieve(_legs({"passport": 0.6}, {"passport": 4.0}), "when does Aylin's passport expire?", floor=C.floor)
    [best] = [g for g in found.documents if g.document_id == "d-passport"]
    # Then it is still returned, first (the rule moves nothing and hides nothing) ...
    assert found.documents[0].document_id == "d-passport"
    # ... but weak: held just below the strong threshold, where its evidence alone would make it strong
    assert rel.relevance(0.6, 4.0, 2, False, C, background=found.background) >= C.strong
    assert best.relevance == pytest.approx(C.named_cap) and C.floor <= best.relevance < C.strong
    assert rel.match_of(best.relevance, C.strong) == "weak"
    assert not best.chunks[0].named


def test_a_memory_naming_it_is_strong() -> None:
    found = _retrieve(_legs({"aylin": 0.6}, {"aylin": 9.0}), "when does Aylin's passport expire?", floor=C.floor)
    best = found.documents[0]
    assert best.document_id == "d-aylin" and best.chunks[0].named
    assert rel.match_of(best.relevance, C.strong) == "strong"


def test_a_question_naming_nothing_is_never_held_back() -> None:
    # a paraphrase shares no word with its note (the text leg never found it): nothing to hold it to
    found = _retrieve(_legs({"passport": 0.6}, {}), "when does my travel document run out?", floor=C.floor)
    assert found.documents[0].relevance >= C.strong and found.documents[0].chunks[0].named


def test_code_is_not_held_to_the_names_of_a_question_in_prose() -> None:
    # code spells what it handles as identifiers; a question in prose names it as words
    found = _retrieve(_legs({"code": 0.7}, {"code": 3.0}), "Expire the Tcl passport", floor=C.floor)
    assert found.documents[0].chunks[0].code and found.documents[0].relevance >= C.strong


@pytest.mark.parametrize("query, names", [
    ("when does Aylin's passport expire?", ["aylin"]),
    ("who's my contact at the Leipzig DC?", ["leipzig", "dc"]),
    ("Kofi's first task", []),  # the opening word is no name by its case alone ...
    ("PIN for my bank card", ["pin"]),  # ... but an acronym or a code is, anywhere
    ("3PL Poznań support hotline", ["3pl", "poznań"]),
    ("when does etl-box-02 get decommissioned?", ["etl-box-02"]),
    ("Spotify password", []),
    ("What did Caroline research? Melanie said so", ["caroline"]),  # a sentence's first word is no name
    ("how much tax-free allowance on the 8th?", []),  # a hyphenated word, an ordinal
    ("What Is The Capital Of France", []),  # Title Case says nothing
    ("WHERE IS THE ROUTER", []),  # nor does shouting
    ("what's the key for the wireless at our apartment?", []),
])
def test_the_names_a_question_gives(query: str, names: list[str]) -> None:
    assert named_terms(query) == names


def test_a_name_is_held_as_a_whole_word_in_any_case() -> None:
    assert names_all("Aylin's birthday", ["aylin"])
    assert names_all("open on Sunday mornings", ["sundays"])
    assert not names_all("Aylinka's birthday", ["aylin"])
    assert names_all("the 3PL re-sends", ["3pl"]) and not names_all("the 3PL re-sends", ["3pl", "poznań"])
