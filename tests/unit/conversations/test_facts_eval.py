"""bench/facts_eval.py end to end on a LoCoMo-shaped conversation, through the one resolver
in-process and the fake LLM on loopback: the figures it reports are computed from what the
endpoint did (facts stored, their sources, the questions' evidence)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fake_chat_server import FakeChatServer

from bench.facts_eval import Client, evaluate, session_time
from memlane.api.auth import authorizer_context
from memlane.api.events import build_event

from .conftest import make_world

DATA = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Mel",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I moved to Berlin in April."},
            {"speaker": "Mel", "dia_id": "D1:2", "text": "Nice! I started pottery classes."},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "Haha, fun."},
        ],
    },
    "qa": [
        {"question": "Where did Caroline move?", "answer": "Berlin", "evidence": ["D1:1"], "category": 4},
        {"question": "What class did Mel start?", "answer": "pottery", "evidence": ["D1:2"], "category": 4},
        {"question": "What does Mel dislike?", "answer": "spiders", "evidence": ["D1:3"], "category": 4},
        {"question": "An adversarial one", "answer": "x", "evidence": ["D1:1"], "category": 5},
    ],
}]
FACTS = {"I moved to Berlin in April.": "Caroline moved to Berlin in April 2023",
         "Nice! I started pottery classes.": "Mel started pottery classes"}


def brain(task: str, data: dict[str, Any]) -> dict[str, Any]:
    if task == "extract_facts":
        return {"facts": [{"text": FACTS[m["text"]], "subject": m["speaker"], "sources": [m["n"]]}
                          for m in data["messages"] if m["text"] in FACTS]}
    return {"outcome": "new", "reason": "about something else"}


@pytest.fixture
def world(tmp_path):
    with FakeChatServer(brain) as server:
        w = make_world(tmp_path, server)
        yield w
        w.stack.close()


def test_the_evaluation_reports_facts_answer_coverage_and_recall_over_facts_and_turns(world) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v3/extractions/"):
            world.worker.drain()  # the local worker, run when the command asks how extraction is going
        event = build_event(request.method, request.url.path, request.url.query.decode(),
                            {"Content-Type": "application/json"}, request.content, authorizer_context(world.who))
        result = world.api.handle(event, None)
        return httpx.Response(int(result["statusCode"]), content=(result.get("body") or "").encode())

    api = Client("http://memlane.test", "mlk_test", transport=httpx.MockTransport(handle))
    report = evaluate(api, json.loads(json.dumps(DATA)), timeout_s=30, poll_s=0)
    assert report["conversations"] == 1 and report["questions"] == 3 and report["extractions_failed"] == 0
    assert report["facts"] == {"new": 2} and report["facts_stored"] == 2
    # Berlin and pottery are in recalled facts; spiders in none
    assert report["answer_in_a_recalled_fact"] == round(2 / 3, 3)
    # the two facts were drawn from D1:1 and D1:2; nothing was drawn from D1:3
    assert report["recall@10_facts"] == round(2 / 3, 3)
    assert report["recall@10_turns"] == 1.0  # three turns, each recalled in the top 10
    (request,) = [r for r in world.llm.requests if r["response_format"]["json_schema"]["name"] == "extract_facts"]
    assert '"time": "2023-05-08T13:56:00+00:00"' in request["messages"][-1]["content"]


def test_the_evaluation_stops_when_the_server_has_no_llm(tmp_path) -> None:
    w = make_world(tmp_path, None)
    try:
        def handle(request: httpx.Request) -> httpx.Response:
            event = build_event(request.method, request.url.path, request.url.query.decode(),
                                {"Content-Type": "application/json"}, request.content, authorizer_context(w.who))
            result = w.api.handle(event, None)
            return httpx.Response(int(result["statusCode"]), content=(result.get("body") or "").encode())

        with pytest.raises(SystemExit, match="the server has no LLM"):
            evaluate(Client("http://memlane.test", "k", transport=httpx.MockTransport(handle)), DATA, 1, 0)
    finally:
        w.stack.close()
    assert session_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00+00:00" and session_time("soon") is None
