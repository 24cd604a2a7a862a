"""memlane_client's conversation calls against a real local server on loopback whose LLM is the
fake OpenAI-compatible server on loopback (tests/fake_chat_server.py): a conversation saved (once,
however often it is retried with its key), read back in order, its extraction followed, recall by
kind and `as_of`, and the profile; the same through the async client; and the no-LLM answer."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from memlane_client import AsyncMemlaneClient, MemlaneClient, NotFound, message

pytestmark = pytest.mark.integration

def finished(memlane: MemlaneClient, extraction_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        record = memlane.extraction(extraction_id)
        if record["status"] in ("done", "failed") or time.monotonic() > deadline:
            return dict(record)
        time.sleep(0.1)


def test_conversations_facts_as_of_and_the_profile_through_the_client(llm_server):
    url, key, llm = llm_server
    with MemlaneClient(url, key, timeout=30) as memlane:
        said = [message("I live in Lisbon.", speaker="Sam", time="2026-11-01T09:00:00Z"),
                message("Lovely city.", role="assistant")]
        first = memlane.save_conversation("trip", said, idempotency_key="trip-1")
        again = memlane.save_conversation("trip", said, idempotency_key="trip-1")
        assert first["extraction"]["status"] == "queued" and again == first  # replayed, not saved twice
        lisbon = finished(memlane, first["extraction"]["id"])
        assert lisbon["status"] == "done" and [f["text"] for f in lisbon["facts"]] == ["Sam lives in Lisbon"]
        assert llm.tasks().count("extract_facts") == 1
        back = memlane.conversation("trip")
        assert [(m["speaker"] or m["role"], m["content"]) for m in back["messages"]] == [
            ("Sam", "I live in Lisbon."), ("assistant", "Lovely city.")]
        assert back["messages"][0]["time"].startswith("2026-11-01T09:00")
        before = memlane.document(lisbon["facts"][0]["fact_id"])["created_at"]
        time.sleep(0.05)

        moved = memlane.save_conversation("trip-2", [message("We moved to Porto!", speaker="Sam")])
        porto = finished(memlane, moved["extraction"]["id"])
        assert porto["facts"][0]["outcome"] == "update"
        assert porto["facts"][0]["decision"]["supersedes"] == lisbon["facts"][0]["fact_id"]

        now = memlane.recall("where does Sam live", kind="fact", min_relevance=0)
        assert [r["chunks"][0]["content"] for r in now["results"]] == ["Sam lives in Porto"]
        then = memlane.recall("where does Sam live", kind=["fact"], as_of=before, min_relevance=0)
        assert [r["chunks"][0]["content"] for r in then["results"]] == ["Sam lives in Lisbon"]
        messages = memlane.recall("Sam Lisbon Porto", kind="message", min_relevance=0)
        assert {r["chunks"][0]["content"] for r in messages["results"]} >= {"I live in Lisbon.", "We moved to Porto!"}

        profile = memlane.profile(subject="Sam")
        assert [f["text"] for f in profile["facts"]] == ["Sam lives in Porto"]
        assert profile["extraction"] == "on"
        with pytest.raises(NotFound) as missing:
            memlane.conversation("never said")
        assert "never said" in missing.value.error


def test_the_async_client_saves_reads_back_and_follows_an_extraction(llm_server):
    url, key, _ = llm_server

    async def run() -> tuple[list[str], dict[str, Any], list[str]]:
        async with AsyncMemlaneClient(url, key, timeout=30) as m:
            lines = [f"Line {i} of the rehearsal notes." for i in range(5)] + ["I play the cello."]
            saved = await m.save_conversation("rehearsal", [message(t, speaker="Ana") for t in lines],
                                              subject="Ana")
            read = [x["content"] async for x in m.iter_conversation("rehearsal", page_size=2)]
            record = await m.extraction(saved["extraction"]["id"])
            while record["status"] not in ("done", "failed"):
                await asyncio.sleep(0.1)
                record = await m.extraction(saved["extraction"]["id"])
            profile = await m.profile(subject="Ana")
            return read, dict(record), [f["text"] for f in profile["facts"]]

    read, record, facts = asyncio.run(run())
    assert read == [f"Line {i} of the rehearsal notes." for i in range(5)] + ["I play the cello."]
    assert record["status"] == "done" and [f["text"] for f in record["facts"]] == ["Ana plays the cello"]
    assert facts == ["Ana plays the cello"]


def test_without_an_llm_the_client_is_told_extraction_is_off(hash_server):
    with MemlaneClient(hash_server.url, hash_server.key, timeout=30) as memlane:
        out = memlane.save_conversation("plain", [message("Just a message.", role="user")])
        assert out["saved"] == 1 and out["extraction"]["status"] == "off"
        assert "no LLM is configured" in (out["extraction"]["reason"] or "")
        assert memlane.profile()["extraction"].startswith("off")
        assert [m["content"] for m in memlane.conversation("plain")["messages"]] == ["Just a message."]
        memlane.save_conversation("team/standup", [message("A conversation id with a slash.", speaker="Kim")])
        assert [m["speaker"] for m in memlane.iter_conversation("team/standup")] == ["Kim"]


def test_a_conversation_sent_again_whole_stores_only_its_new_messages_sync_and_async(hash_server):
    # Given a chat app that sends the whole history each turn (the client gives each save a new
    # Idempotency-Key, so the server, not the key, must recognise the history)
    history = [message("Where did I park?", role="user"), message("Level 3, bay 42.", role="assistant")]
    with MemlaneClient(hash_server.url, hash_server.key, timeout=30) as memlane:
        first = memlane.save_conversation("parking", history)
        again = memlane.save_conversation("parking", [*history, message("ok", role="user")])
        assert (first["saved"], again["saved"], again["duplicates"]) == (2, 1, 2)
        assert [m["id"] for m in again["messages"][:2]] == [m["id"] for m in first["messages"]]

    async def resend() -> tuple[dict[str, Any], list[str]]:
        async with AsyncMemlaneClient(hash_server.url, hash_server.key, timeout=30) as m:
            out = await m.save_conversation("parking", [*history, message("ok", role="user")])
            return dict(out), [x["content"] async for x in m.iter_conversation("parking")]

    out, stored = asyncio.run(resend())
    assert (out["saved"], out["duplicates"]) == (0, 3)
    assert stored == ["Where did I park?", "Level 3, bay 42.", "ok"]


def test_the_openai_tools_include_the_mcp_profile_tool_and_run_it(llm_server):
    from memlane_client.openai_tools import mcp_tools, openai_tools, run_tool_call

    url, key, _ = llm_server
    (tool,) = openai_tools(["profile"])
    definition = next(t for t in mcp_tools() if t["name"] == "profile")
    assert tool["function"]["description"] == definition["description"]
    assert tool["function"]["parameters"] == definition["inputSchema"]
    with MemlaneClient(url, key, timeout=30) as memlane:
        saved = memlane.save_conversation("cello", [message("I play the cello.", speaker="Ana")])
        assert finished(memlane, saved["extraction"]["id"])["status"] == "done"
        text = run_tool_call(memlane, "profile", '{"subject": "Ana"}')
        assert "Ana plays the cello" in text and not text.startswith("Error")
        assert text == memlane.mcp_call("profile", {"subject": "Ana"})["content"][0]["text"]
