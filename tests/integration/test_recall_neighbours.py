"""POST /v3/recall with the neighbouring-memories stage, on a real local server (hashing embedder:
the stage does not depend on the model)."""

from __future__ import annotations

import pytest


def _save(client, project_id: str, content: str) -> str:
    r = client.post("/v3/memory", json={"content": content, "title": "chat", "project_id": project_id})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_a_turn_gains_a_share_of_the_turn_saved_next_to_it(hash_server):
    # Given a conversation saved turn by turn, where the answer never names what it answers
    with hash_server.client() as client:
        project_id = client.post("/v3/projects", json={"name": "chat"}).json()["id"]
        asked = _save(client, project_id, "Ann: Did you finish the pottery class you signed up for?")
        answer = _save(client, project_id, "Bo: Yes, last Friday! I made a black and white bowl.")
        _save(client, project_id, "Ann: The weather has been lovely this week.")
        elsewhere = client.post("/v3/projects", json={"name": "other"}).json()["id"]
        _save(client, elsewhere, "Bo: I made a black and white bowl in pottery class.")

        # When the question is asked in the conversation's project
        r = client.post("/v3/recall", json={"query": "pottery class bowl", "project_id": project_id, "limit": 10})
        assert r.status_code == 200, r.text
        results = {d["document_id"]: d for d in r.json()["results"]}

    # Then each document's score is its best chunk's fused score plus 0.3 (the default weight) × the
    # relevance of the document saved right next to it: its fused score without the recency bonus
    # (0.1 for a memory saved seconds ago), and no other project's memory is returned or counted
    fused = {d: results[d]["chunks"][0]["score"] for d in results}
    assert asked in results and answer in results
    assert results[answer]["score"] == pytest.approx(fused[answer] + 0.3 * (fused[asked] - 0.1), abs=1e-5)
    assert results[asked]["score"] == pytest.approx(fused[asked] + 0.3 * (fused[answer] - 0.1), abs=1e-5)
    assert all(d["project_id"] == project_id for d in results.values())
