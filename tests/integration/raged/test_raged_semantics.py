"""With the real embedding model: a natural-language question finds the chunk that answers it."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_semantic_query_finds_the_answer_without_shared_words(server):
    c = server.client
    items = [
        {"id": "ops:runbook.md",
         "text": "Rotate the database password every ninety days using the vault CLI.",
         "source": "runbook.md", "metadata": {"repoId": "ops", "path": "runbook.md", "lang": "md"}},
        {"id": "web:pets.md", "text": "Our cat Miso needs her thyroid pill every morning with food.",
         "source": "pets.md", "metadata": {"repoId": "web", "path": "pets.md", "lang": "md"}},
    ]
    assert c.post("/ingest", json={"collection": "kb", "items": items}).json() == {"ok": True, "upserted": 2}
    question = "what medication does my pet take daily?"
    out = c.post("/query", json={"collection": "kb", "query": question}).json()
    assert out["routing"]["strategy"] == "semantic" and out["routing"]["method"] == "rule"
    assert out["results"][0]["id"] == "web:pets.md:0"
    assert out["results"][0]["score"] > out["results"][1]["score"]
