"""Conversations on the real local server (loopback), its LLM the fake OpenAI-compatible server on
loopback, configured the way a user configures Ollama (MEMLANE_LLM_BASE_URL): the answer comes
before any LLM call, the server's own worker thread draws the facts, reconciles an update, and
recall, as_of and the profile follow; a restart finds queued extractions again."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from conftest_helpers import free_port
from fake_chat_server import FakeChatServer
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.server import LocalServer

FACTS = {"I live in Lisbon.": "Sam lives in Lisbon", "We moved to Porto!": "Sam lives in Porto"}


def brain(task: str, data: dict[str, Any]) -> dict[str, Any]:
    if task == "extract_facts":
        return {"facts": [{"text": FACTS[m["text"]], "subject": "Sam", "sources": [m["n"]]}
                          for m in data["messages"] if m["text"] in FACTS]}
    return {"outcome": "update", "target": 1, "reason": "Sam moved"}


@pytest.fixture
def llm():
    with FakeChatServer(brain) as server:
        yield server


def start(tmp_path, llm: FakeChatServer) -> tuple[LocalServer, httpx.Client]:
    settings = Settings.from_env({"MEMLANE_LLM_BASE_URL": llm.base_url, "MEMLANE_LLM_MODEL": "fake-1"},
                                 data_dir=tmp_path / "data")
    srv = LocalServer(settings, host="127.0.0.1", port=free_port(), embedder=HashEmbedder())
    key = srv.prepare()
    srv.start_in_thread()
    return srv, httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", headers={"Authorization": f"Bearer {key}"},
                             timeout=30)


def wait_done(client: httpx.Client, extraction_id: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        record = client.get(f"/v3/extractions/{extraction_id}").json()
        if record["status"] in ("done", "failed"):
            return record
        time.sleep(0.1)
    raise AssertionError(f"extraction {extraction_id} did not finish: {record}")


def test_the_running_server_extracts_reconciles_and_answers_as_of_and_the_profile(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        first = client.post("/v3/conversations", json={
            "conversation_id": "s1", "messages": [{"speaker": "Sam", "content": "I live in Lisbon."}]})
        assert first.status_code == 201 and first.json()["extraction"]["status"] == "queued"
        lisbon = wait_done(client, first.json()["extraction"]["id"])["facts"][0]
        assert lisbon["outcome"] == "new"
        before = client.get(f"/v3/documents/{lisbon['fact_id']}").json()["created_at"]
        time.sleep(0.05)
        second = client.post("/v3/conversations", json={
            "conversation_id": "s2", "messages": [{"speaker": "Sam", "content": "We moved to Porto!"}]}).json()
        porto = wait_done(client, second["extraction"]["id"])["facts"][0]
        assert porto["outcome"] == "update" and porto["decision"]["supersedes"] == lisbon["fact_id"]
        facts = client.post("/v3/recall", json={"query": "where does Sam live", "min_relevance": 0,
                                                "filters": {"kind": ["fact"]}}).json()["results"]
        assert [r["chunks"][0]["content"] for r in facts] == ["Sam lives in Porto"]
        then = client.post("/v3/recall", json={"query": "where does Sam live", "min_relevance": 0, "as_of": before,
                                               "filters": {"kind": ["fact"]}}).json()["results"]
        assert [r["chunks"][0]["content"] for r in then] == ["Sam lives in Lisbon"]
        profile = client.get("/v3/profile", params={"subject": "Sam"}).json()
        assert [f["text"] for f in profile["facts"]] == ["Sam lives in Porto"]
        assert client.get("/v3/profile", params={"subject": ""}).status_code == 400
    finally:
        client.close()
        srv.shutdown()


def test_an_extraction_queued_while_the_llm_is_down_completes_after_a_restart(tmp_path, llm) -> None:
    llm.down = True
    srv, client = start(tmp_path, llm)
    try:
        out = client.post("/v3/conversations", json={
            "conversation_id": "s1", "messages": [{"speaker": "Sam", "content": "I live in Lisbon."}]}).json()
        deadline = time.monotonic() + 30
        while client.get(f"/v3/extractions/{out['extraction']['id']}").json()["error"] is None:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        client.close()
        srv.shutdown()
    # When the LLM is back and the server starts again on the same data directory
    llm.down = False
    srv, client = start(tmp_path, llm)
    try:
        with srv.runtime.stack.db.transaction() as conn:  # make it due now instead of after its backoff
            conn.execute("UPDATE jobs SET not_before = 0")
        srv.runtime.worker.wake()
        record = wait_done(client, out["extraction"]["id"])
        assert record["status"] == "done" and record["facts"][0]["text"] == "Sam lives in Lisbon"
    finally:
        client.close()
        srv.shutdown()


def test_a_retried_save_with_its_idempotency_key_saves_and_queues_once(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        body = {"conversation_id": "retry-1", "messages": [
            {"speaker": "Sam", "content": "I live in Lisbon."}, {"role": "assistant", "content": "Noted, Sam."}]}
        headers = {"Idempotency-Key": "conv-save-1"}
        first = client.post("/v3/conversations", json=body, headers=headers)
        again = client.post("/v3/conversations", json=body, headers=headers)
        assert first.status_code == again.status_code == 201
        assert again.json() == first.json()  # the first answer replayed: the same extraction id
        assert first.json()["saved"] == 2 and first.json()["extraction"]["status"] == "queued"
        record = wait_done(client, first.json()["extraction"]["id"])
        assert [f["outcome"] for f in record["facts"]] == ["new"]
        messages = client.get("/v3/conversations/retry-1").json()["messages"]
        assert [(m["speaker"] or m["role"], m["content"]) for m in messages] == [
            ("Sam", "I live in Lisbon."), ("assistant", "Noted, Sam.")]
        # one extraction record and one extraction asked of the LLM: the retry queued nothing
        with srv.runtime.stack.db.transaction() as conn:
            records = conn.execute("SELECT key FROM blobs WHERE key LIKE 'extractions/%'").fetchall()
        assert len(records) == 1
        assert llm.tasks().count("extract_facts") == 1
        other = client.post("/v3/conversations", json={**body, "conversation_id": "retry-2"}, headers=headers)
        assert other.status_code == 409 and "Idempotency-Key" in other.json()["error"]
        # the key guards one request on one route: a memory saved under it is another body
        memory = client.post("/v3/memory", json={"content": "x"}, headers=headers)
        assert memory.status_code == 409
    finally:
        client.close()
        srv.shutdown()


def test_a_conversation_reads_back_in_order_a_page_at_a_time(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        said = [f"Turn {i}: the plan for step {i} is written down." for i in range(5)]
        r = client.post("/v3/conversations", json={
            "conversation_id": "planning: week 1", "extract": False,
            "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": t,
                          "time": f"2026-11-0{i + 1}T10:00:00Z"} for i, t in enumerate(said)]})
        assert r.status_code == 201, r.text
        path = "/v3/conversations/planning%3A%20week%201"
        first = client.get(path, params={"limit": 2}).json()
        assert [m["content"] for m in first["messages"]] == said[:2]
        assert [m["role"] for m in first["messages"]] == ["user", "assistant"]
        assert first["messages"][0]["kind"] == "message" and first["messages"][0]["time"].startswith("2026-11-01")
        rest = client.get(path, params={"limit": 2, "cursor": first["next_cursor"]}).json()
        # a message deleted between pages moves no other one out of the next page
        assert client.delete(f"/v3/documents/{first['messages'][0]['id']}").status_code == 200
        last = client.get(path, params={"limit": 2, "cursor": rest["next_cursor"]}).json()
        assert [m["content"] for m in rest["messages"] + last["messages"]] == said[2:]
        assert last["next_cursor"] is None
        missing = client.get("/v3/conversations/nobody-said-this")
        assert missing.status_code == 404 and "nobody-said-this" in missing.json()["error"]
        for junk in ("abc", "W10", "WzEsIm5vdCBhIGRhdGUiLCJ4Il0"):  # not base64 JSON; []; [1, "not a date", "x"]
            bad = client.get(path, params={"cursor": junk})
            assert bad.status_code == 400 and "cursor" in bad.json()["error"], (junk, bad.text)
        assert client.get(path, params={"limit": 0}).status_code == 400
        # an id with a slash is no path segment: the query form takes any id
        client.post("/v3/conversations", json={"conversation_id": "user/42", "extract": False,
                                               "messages": [{"role": "user", "content": "A slash in my id."}]})
        assert client.get("/v3/conversations/user%2F42").status_code == 404
        by_query = client.get("/v3/conversations", params={"conversation_id": "user/42"}).json()
        assert [m["content"] for m in by_query["messages"]] == ["A slash in my id."]
        same = client.get("/v3/conversations", params={"conversation_id": "planning: week 1", "limit": 2}).json()
        assert same == client.get(path, params={"limit": 2}).json() and len(same["messages"]) == 2
        missing_id = client.get("/v3/conversations")
        assert missing_id.status_code == 400 and "conversation_id" in missing_id.json()["error"]
    finally:
        client.close()
        srv.shutdown()


def test_a_line_said_twice_is_two_messages_and_the_same_message_sent_again_is_one(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        first = client.post("/v3/conversations", json={"conversation_id": "c1", "messages": [
            {"speaker": "Sam", "content": "Thanks!"}, {"role": "assistant", "content": "Anything else?"},
            {"speaker": "Sam", "content": "Thanks!"}]}).json()
        assert (first["saved"], first["duplicates"]) == (3, 0)
        other = client.post("/v3/conversations", json={"conversation_id": "c2", "messages": [
            {"speaker": "Sam", "content": "Thanks!", "message_index": 0}]}).json()
        assert (other["saved"], other["duplicates"]) == (1, 0)
        assert [m["content"] for m in client.get("/v3/conversations/c1").json()["messages"]] == [
            "Thanks!", "Anything else?", "Thanks!"]
        assert [m["content"] for m in client.get("/v3/conversations/c2").json()["messages"]] == ["Thanks!"]
        # the same message sent again to its place (a client retrying without an Idempotency-Key);
        # a message saved without its place is new every time (its retries need the key)
        again = client.post("/v3/memory", json={"content": "Thanks!", "conversation_id": "c2", "message_index": 0})
        assert again.status_code == 200 and again.json()["duplicate"] is True
        # a note is not a message: the same words saved as a note are their own memory
        note = client.post("/v3/memory", json={"content": "Thanks!"})
        assert note.json()["duplicate"] is False
    finally:
        client.close()
        srv.shutdown()


HISTORY = [{"role": "user", "content": "Can you book the dentist for Tuesday?"},
           {"role": "assistant", "content": "Booked: Dr Okafor, Tuesday 9:30."},
           {"role": "user", "content": "ok"},
           {"role": "assistant", "content": "Anything else?"}]


def said(client: httpx.Client, conversation_id: str) -> list[tuple[int, str, str]]:
    return [(m["message_index"], m["role"], m["content"])
            for m in client.get(f"/v3/conversations/{conversation_id}").json()["messages"]]


def test_a_conversation_sent_again_whole_stores_only_what_is_new(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        # Given a chat client that sends the whole history every turn, without an Idempotency-Key
        first = client.post("/v3/conversations", json={"conversation_id": "chat", "messages": HISTORY}).json()
        assert (first["saved"], first["duplicates"]) == (4, 0)
        wait_done(client, first["extraction"]["id"])
        # When the same body is sent again
        again = client.post("/v3/conversations", json={"conversation_id": "chat", "messages": HISTORY})
        # Then nothing is stored: every message is answered by the one already saved, no extraction runs
        assert again.status_code == 201
        out = again.json()
        assert (out["saved"], out["duplicates"]) == (0, 4)
        assert [m["id"] for m in out["messages"]] == [m["id"] for m in first["messages"]]
        assert all(m["duplicate"] for m in out["messages"])
        assert out["extraction"]["status"] == "off" and "already saved" in out["extraction"]["reason"]
        assert said(client, "chat") == [(i, m["role"], m["content"]) for i, m in enumerate(HISTORY)]
        # When the next turn re-sends the history with two new messages, "ok" said again among them
        turn = [*HISTORY, {"role": "user", "content": "ok"}, {"role": "user", "content": "Thanks!"}]
        out = client.post("/v3/conversations", json={"conversation_id": "chat", "messages": turn}).json()
        # Then only those two are stored, after the others
        assert (out["saved"], out["duplicates"]) == (2, 4)
        assert [m["message_index"] for m in out["messages"]] == [0, 1, 2, 3, 4, 5]
        record = wait_done(client, out["extraction"]["id"])
        assert record["messages"] == [m["id"] for m in out["messages"][4:]]  # facts drawn from the new ones only
        assert said(client, "chat")[4:] == [(4, "user", "ok"), (5, "user", "Thanks!")]
        # and recall finds each message once
        hits = client.post("/v3/recall", json={"query": "book the dentist Tuesday", "limit": 10}).json()["results"]
        dentist = [h for h in hits if "dentist" in h["chunks"][0]["content"]]
        assert len(dentist) == 1
    finally:
        client.close()
        srv.shutdown()


def test_a_message_sent_to_its_stored_place_is_the_same_one_or_a_new_version_of_it(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        placed = [{**m, "message_index": i} for i, m in enumerate(HISTORY)]
        first = client.post("/v3/conversations", json={"conversation_id": "c", "extract": False, "messages": placed}).json()
        # When message 1 comes again with the same text and message 3 with other text
        out = client.post("/v3/conversations", json={"conversation_id": "c", "extract": False, "messages": [
            placed[1], {**placed[3], "content": "Anything else before Tuesday?"}]}).json()
        # Then the first is a duplicate, the second a new version of message 3, in its place
        assert [m["duplicate"] for m in out["messages"]] == [True, False]
        assert out["messages"][0]["id"] == first["messages"][1]["id"]
        assert (out["saved"], out["duplicates"]) == (1, 1)
        assert said(client, "c")[3] == (3, "assistant", "Anything else before Tuesday?")
        assert len(said(client, "c")) == 4
        versions = client.get(f"/v3/documents/{out['messages'][1]['id']}", params={"include_versions": "true"}).json()
        assert [v["id"] for v in versions["versions"]] == [first["messages"][3]["id"], out["messages"][1]["id"]]
    finally:
        client.close()
        srv.shutdown()


def test_a_conversation_re_sent_by_several_clients_at_once_is_stored_once(tmp_path, llm) -> None:
    srv, client = start(tmp_path, llm)
    try:
        body = {"conversation_id": "race", "extract": False, "messages": HISTORY}
        # When eight clients send the same conversation at the same moment
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(lambda _: client.post("/v3/conversations", json=body), range(8)))
        assert {a.status_code for a in answers} == {201}
        # Then each message is stored once, and the answers together say so
        assert said(client, "race") == [(i, m["role"], m["content"]) for i, m in enumerate(HISTORY)]
        assert sum(a.json()["saved"] for a in answers) == 4
        assert sum(a.json()["duplicates"] for a in answers) == 28
        assert len({m["id"] for a in answers for m in a.json()["messages"]}) == 4
    finally:
        client.close()
        srv.shutdown()
