"""POST /v3/recall with the neighbouring-messages stage, on a real local server (hashing embedder:
the stage does not depend on the model): only messages of one conversation (conversation_id)
lift each other, and the answer says when the stage applied."""

from __future__ import annotations

import pytest


def _save(client, project_id: str, content: str, conversation_id: str | None = "chat-1") -> str:
    body = {"content": content, "title": "chat", "project_id": project_id}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    r = client.post("/v3/memory", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["conversation_id"] == conversation_id
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
    assert r.json()["stages"] == ["fusion", "neighbours"]


def test_notes_saved_seconds_apart_without_a_conversation_do_not_lift_each_other(hash_server):
    # Given the same turns saved as standalone notes, one after another
    with hash_server.client() as client:
        project_id = client.post("/v3/projects", json={"name": "notes"}).json()["id"]
        for text in ("Ann: Did you finish the pottery class you signed up for?",
                     "Bo: Yes, last Friday! I made a black and white bowl.",
                     "Ann: The weather has been lovely this week."):
            _save(client, project_id, text, conversation_id=None)
        r = client.post("/v3/recall", json={"query": "pottery class bowl", "project_id": project_id, "limit": 10})
        assert r.status_code == 200, r.text
    # Then every score is its best chunk's fused score, and the answer says only fusion applied
    results = r.json()["results"]
    assert len(results) >= 2
    assert all(d["score"] == pytest.approx(d["chunks"][0]["score"], abs=1e-6) for d in results)
    assert r.json()["stages"] == ["fusion"]
