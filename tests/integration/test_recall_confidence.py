"""Issue 35 through the local server with the embedded default (MiniLM): a person's paraphrase of a
stored note gets that note (strong or weak, never nothing), nonsense gets nothing, and the confidence
is in the answer (`match`, `strong`) of /v3/recall and the context pack; strict abstention on request."""

from __future__ import annotations

import httpx
import pytest

from memlane.recall.relevance import MINILM

NOTES = [
    (None, "Home wifi is 'Weserblick_5G', password tulpe-Regen-4471. FritzBox admin page at 192.168.178.1."),
    ("Landlord", "The lease says I must give my landlord two months' written notice before moving out."),
    ("Offsite", "Offsite plan: the team meets in Lisbon on March 3rd, hotel booked near the river."),
    ("1:1 Priya", "1:1 with Priya: she wants to move to the platform team after the Q2 release."),
    ("Bike", "The bike's rear derailleur needs a new cable; the shop on Elm Street can do it Tuesday."),
    ("Sourdough", "Sourdough starter: feed it 50 g flour and 50 g water every morning, keep it at 24 °C."),
    ("Passport", "Reisepass no. C4J7R2K91, issued 3 Sept 2016 in Hamburg, valid until 2 Sept 2026."),
    ("Invoices", "Project Heron: any invoice over 5,000 EUR needs Sabine's approval before it is paid."),
    ("Dentist", "Dentist: Dr. Okafor, next cleaning Tue 14 Jan at 08:15, costs 95 EUR."),
    ("Pepper", "Pepper the dog gets her worming tablet every three months; the vet is on Sonnenallee."),
]


def _save_notes(client: httpx.Client) -> dict[str, str]:
    ids = {}
    for title, content in NOTES:
        r = client.post("/v3/memory", json={"content": content, **({"title": title} if title else {})})
        assert r.status_code in (200, 201, 202), r.text
        ids[title or "wifi"] = r.json()["id"]
    return ids


def _recall(client: httpx.Client, query: str, **fields) -> dict:
    r = client.post("/v3/recall", json={"query": query, **fields})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("query, note", [
    ("what's the key for the wireless at our apartment?", "wifi"),
    ("when does my travel document run out?", "Passport"),
    ("who has to sign off on large bills?", "Invoices"),
])
def test_a_paraphrase_of_a_stored_note_gets_that_note_never_nothing(server, query, note):
    ids = _save_notes(server.client)
    # When the person asks in their own words, as a client asks (no min_relevance)
    out = _recall(server.client, query)
    # Then the note comes back first, marked with how sure memlane is of it
    assert out["results"], f"{query!r} came back with nothing"
    first = out["results"][0]
    assert first["document_id"] == ids[note]
    assert first["match"] in ("strong", "weak")
    assert first["match"] == ("strong" if first["relevance"] >= out["strong"] else "weak")
    assert out["floor"] == MINILM.floor and out["strong"] == MINILM.strong


def test_nonsense_gets_nothing_and_a_clear_question_a_strong_match(server):
    ids = _save_notes(server.client)
    assert _recall(server.client, "zeppelin quiver barnacle nozzle")["results"] == []
    assert _recall(server.client, "asdfgh jkl qwerty")["results"] == []
    clear = _recall(server.client, "how much notice do I need to give my landlord")
    assert clear["results"][0]["document_id"] == ids["Landlord"] and clear["results"][0]["match"] == "strong"


def test_strict_abstention_on_request(server):
    ids = _save_notes(server.client)
    query = "who has to sign off on large bills?"
    default = _recall(server.client, query)
    assert [r["document_id"] for r in default["results"]][:1] == [ids["Invoices"]]
    assert default["results"][0]["match"] == "weak"
    # `strict`: only strong matches, so nothing here; the floor it applied is the strong threshold
    strict = _recall(server.client, query, strict=True)
    assert strict["results"] == [] and strict["floor"] == MINILM.strong
    # `min_relevance`: the caller's own floor, nothing below it, no clear-best exception
    own = _recall(server.client, query, min_relevance=0.3)
    assert own["results"] == [] and own["floor"] == 0.3
    # a strong match passes strict
    pup = _recall(server.client, "how often does the pup need parasite pills?", strict=True)
    assert pup["results"][0]["document_id"] == ids["Pepper"] and pup["results"][0]["match"] == "strong"


def test_strict_must_be_a_boolean(server):
    r = server.client.post("/v3/recall", json={"query": "x", "strict": "sometimes"})
    assert r.status_code == 400 and "strict" in r.json()["error"], r.text


def test_the_context_pack_labels_weak_memories_and_leaves_them_out_when_strict(server):
    ids = _save_notes(server.client)
    body = {"query": "who has to sign off on large bills?", "docsets": []}
    r = server.client.post("/v3/context", json=body)
    assert r.status_code == 200, r.text
    pack = r.json()
    assert [p["document_id"] for p in pack["pieces"]] == [ids["Invoices"]]
    assert pack["pieces"][0]["match"] == "weak" and pack["strong"] == MINILM.strong
    assert "[1] memory (possibly related; low confidence):" in pack["text"]
    strict = server.client.post("/v3/context", json={**body, "strict": True}).json()
    assert strict["pieces"] == [] and strict["floor"] == MINILM.strong


def test_every_piece_of_the_pack_is_marked_as_its_relevance_says(server):
    _save_notes(server.client)
    r = server.client.post("/v3/context", json={"query": "how much notice do I need to give my landlord", "docsets": [],
                                               "min_relevance": 0, "budget": 50_000})
    assert r.status_code == 200, r.text
    pieces = r.json()["pieces"]
    assert {p["match"] for p in pieces} == {"strong", "weak"}
    assert all(p["match"] == ("strong" if p["relevance"] >= MINILM.strong else "weak") for p in pieces)
    assert r.json()["text"].count("(possibly related; low confidence)") == sum(p["match"] == "weak" for p in pieces)
