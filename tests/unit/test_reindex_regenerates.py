"""`memlane reindex` regenerates what an earlier memlane generated (issue 36).

Given documents stored the way an earlier memlane stored them (a title with a character reference,
a summary carrying markup, keyphrases as tags and `keywords`, a cut place name, a JSON memory
titled "{"), When the data directory is reindexed and the worker drains its jobs, Then their
titles, summaries, keyphrases and entities are today's, their generated tags are gone, and what a
client gave (a title, tags) stays as given.
"""

from __future__ import annotations

from memlane.domain.requests import MemoryIn
from memlane.local.reindex import requeue_everything
from memlane.local.worker import IngestWorker
from memlane.services.memory import save_memory

BUDGET = ("# Q3 marketing budget &amp; spend\n\nThe marketing budget &amp; spend for Q3 is 40,000 EUR, agreed at the "
          "Bürgeramt Friedrichshain meeting near the Weserstraße. <script>alert('xss')</script> The team reviews "
          "the figures every month with the finance department and adjusts the plan when the campaigns perform "
          "better or worse than expected. Any change above five percent needs a written note from the budget owner, "
          "and the finance department files it with the quarterly report for the board.")
CONFIG = '{"host": "db.internal", "port": 6432, "user": "ro_dashboards", "sslmode": "require"}'
WIFI = "Home wifi is 'Weserblick_5G', password tulpe-Regen-4471; the router admin page is at 192.168.178.1."


def stored(stack, who, body: MemoryIn, **old):
    """A document saved today, then rewritten in the store the way an earlier memlane kept it."""
    doc_id = save_memory(stack.services, who, body, inline=True).id
    doc = stack.metadata.get_document(who.organization_id, doc_id)
    stack.metadata.put_document(doc.model_copy(update=old))
    return doc_id


def reindex(stack):
    requeue_everything(stack.services, stack.metadata, stack.index, stack.queue)
    IngestWorker(stack.services, stack.queue).drain()


def test_reindex_regenerates_titles_summaries_keyphrases_and_entities(stack, who):
    old_phrases = ["marketing budget amp", "rgeramt friedrichshain"]
    budget = stored(stack, who, MemoryIn(content=BUDGET, content_type="markdown"),
                    title="Q3 marketing budget &amp; spend",
                    summary="The marketing budget &amp; spend &copy; <script>alert('xss')</script>",
                    metadata={"tags": old_phrases, "keywords": old_phrases, "category": "note",
                              "entities": [{"text": "Weserstra", "kind": "place"}]})
    config = stored(stack, who, MemoryIn(content=CONFIG), title="{",
                    metadata={"tags": ["host", "port"], "keywords": ["host", "port"]})
    wifi = stored(stack, who, MemoryIn(content=WIFI, title="Wifi &amp; router", tags=["home"]),
                  metadata={"tags": ["home"], "keywords": ["wifi", "router admin"]})

    reindex(stack)
    org = who.organization_id
    doc = stack.metadata.get_document(org, budget)
    assert doc.status == "ready"
    assert doc.title == "Q3 marketing budget & spend"
    assert "&amp;" not in doc.summary and "<script" not in doc.summary and "&copy;" not in doc.summary
    assert doc.tags == [] and "keywords" not in doc.metadata
    assert "rgeramt friedrichshain" not in doc.keyphrases and "marketing budget amp" not in doc.keyphrases
    texts = {e["text"] for e in doc.metadata["entities"]}
    assert "Weserstra" not in texts and {"Weserstraße", "Bürgeramt Friedrichshain"} <= texts

    assert stack.metadata.get_document(org, config).title == "JSON: host, port, user, sslmode"
    assert stack.metadata.get_document(org, config).tags == []

    # what a client gave stays as given: its title (character reference and all) and its tags
    kept = stack.metadata.get_document(org, wifi)
    assert (kept.title, kept.tags) == ("Wifi &amp; router", ["home"])
    assert kept.keyphrases and "keywords" not in kept.metadata
