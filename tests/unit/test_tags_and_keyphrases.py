"""Tags are what a person or a client gave; what memlane generates stays `keyphrases` (issue 36, item 5).

Given memories saved with and without tags, When they are stored and recalled on the embedded default,
Then a memory saved without tags has none (its generated phrases are metadata.keyphrases),
`filters.keyphrases` finds it by a generated phrase while `filters.tags` does not, and a query that is a
tag word finds the memories filed under that tag even when their text never says the word.
"""

from __future__ import annotations

from memlane.domain.models import KEYPHRASE_LABEL, filter_labels
from memlane.domain.requests import MemoryIn, RecallFiltersIn, RecallIn
from memlane.recall.service import recall
from memlane.services.memory import save_memory

MIGRATION = ("Priya: for billing-migration-2025-11 we'll dual-write to Postgres and MySQL for two weeks, then "
             "cut over. The dual-write billing migration keeps both ledgers in step until the cut-over.")
WIFI = "Wifi is 'Weserblick_5G', password tulpe-Regen-4471; the router admin page is at 192.168.178.1."
TRIP = "Flights BER to LIS on 15 May, apartment in Alfama, key box code 5521."


def save(stack, who, content, tags=None):
    body = MemoryIn(content=content, **({"tags": tags} if tags else {}))
    return stack.metadata.get_document(who.organization_id, save_memory(stack.services, who, body, inline=True).id)


def ids(stack, who, query="", **filters):
    out = recall(stack.services, who, RecallIn(query=query, min_relevance=0,
                                                filters=RecallFiltersIn(**filters) if filters else None))
    return [r.document_id for r in out.results]


def test_a_memory_saved_without_tags_has_none_and_its_generated_phrases_are_keyphrases(stack, who):
    doc = save(stack, who, MIGRATION)
    assert doc.tags == []
    assert doc.metadata.get("tags") in (None, [])
    assert "keywords" not in doc.metadata
    assert doc.keyphrases and all(isinstance(p, str) for p in doc.keyphrases)


def test_given_tags_stay_as_given_beside_the_keyphrases(stack, who):
    doc = save(stack, who, WIFI, tags=["home", "wifi"])
    assert doc.tags == ["home", "wifi"]
    assert doc.keyphrases and not set(doc.keyphrases) & {"home", "wifi"} - set(doc.keyphrases)


def test_filters_keyphrases_finds_a_generated_phrase_and_filters_tags_does_not(stack, who):
    doc = save(stack, who, MIGRATION)
    other = save(stack, who, TRIP, tags=["travel"])
    phrase = doc.keyphrases[0]
    assert ids(stack, who, keyphrases=[phrase]) == [doc.id]
    assert ids(stack, who, query="billing", keyphrases=[phrase]) == [doc.id]
    assert ids(stack, who, tags=[phrase]) == []
    assert ids(stack, who, tags=["travel"]) == [other.id]


def test_a_query_that_is_a_tag_word_finds_the_memories_filed_under_it(stack, who):
    wifi = save(stack, who, WIFI, tags=["home"])
    trip = save(stack, who, TRIP, tags=["travel"])
    save(stack, who, MIGRATION)
    assert "home" not in WIFI.lower() and "travel" not in TRIP.lower()
    assert ids(stack, who, query="home")[:1] == [wifi.id]
    assert ids(stack, who, query="travel")[:1] == [trip.id]


def test_a_tag_and_a_keyphrase_of_one_word_are_different_labels():
    assert filter_labels(["Home"], ["home", "router admin"]) == ["home", KEYPHRASE_LABEL + "home",
                                                                 KEYPHRASE_LABEL + "router admin"]
