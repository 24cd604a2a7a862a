"""A local stack whose LLM is the fake OpenAI-compatible server on loopback (tests/fake_chat_server.py),
driven through the one resolver in-process; the ingestion worker drains extraction jobs on demand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from fake_chat_server import FakeChatServer
from fakes import FixedClock, HashEmbedder

from memlane.adapters.openai.llm import OpenAICompatibleLLM
from memlane.api.app import MemlaneApi
from memlane.api.auth import authorizer_context
from memlane.api.events import build_event
from memlane.config import Settings
from memlane.domain.principal import Principal
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import LocalStack, build_local
from memlane.local.worker import IngestWorker
from memlane.ports import LanguageModel
from memlane.services.keys import ensure_organization

# What each scripted message says, as the facts a careful model would draw from it.
FACTS_OF_MESSAGE = {
    "I live in Paris, near the canal.": ["Alice lives in Paris"],
    "I love hiking on weekends.": ["Alice likes hiking"],
    "We adopted a dog, his name is Rex!": ["Alice has a dog named Rex"],
    "I moved to Berlin last month.": ["Alice lives in Berlin"],
    "Berlin is home now, I love it.": ["Alice's home is Berlin"],
    "Honestly I hate hiking now, my knees.": ["Alice does not like hiking"],
    "Rex still chews my shoes.": ["Alice has a dog named Rex"],
}
# What each fact means: (topic, value). Same topic and value: duplicate; same topic, another value:
# update (hiking: contradiction); another topic: new.
MEANING = {
    "Alice lives in Paris": ("home", "Paris"),
    "Alice lives in Berlin": ("home", "Berlin"),
    "Alice's home is Berlin": ("home", "Berlin"),
    "Alice likes hiking": ("hiking", "yes"),
    "Alice does not like hiking": ("hiking", "no"),
    "Alice has a dog named Rex": ("dog", "Rex"),
}


def scripted_brain(task: str, data: dict[str, Any]) -> dict[str, Any]:
    if task == "extract_facts":
        facts = []
        for m in data["messages"]:
            for text in FACTS_OF_MESSAGE.get(m["text"], []):
                facts.append({"text": text, "subject": m["speaker"], "sources": [m["n"]]})
        return {"facts": facts}
    if task == "reconcile_fact":
        topic, value = MEANING[data["new_fact"]["text"]]
        for known in data["existing_facts"]:
            k_topic, k_value = MEANING.get(known["text"], (None, None))
            if k_topic != topic:
                continue
            if k_value == value:
                return {"outcome": "duplicate", "target": known["n"], "reason": f"both say {topic} is {value}"}
            outcome = "contradiction" if topic == "hiking" else "update"
            return {"outcome": outcome, "target": known["n"], "reason": f"{topic} changed from {k_value} to {value}"}
        return {"outcome": "new", "reason": f"nothing known about {topic}"}
    raise AssertionError(f"unexpected task {task}")


@dataclass
class World:
    stack: LocalStack
    api: MemlaneApi
    who: Principal
    clock: FixedClock
    llm: FakeChatServer | None
    worker: IngestWorker

    def call(self, method: str, path: str, body: Any = None, query: str = "") -> tuple[int, Any]:
        raw = json.dumps(body).encode() if body is not None else b""
        event = build_event(method, path, query, {"Content-Type": "application/json"}, raw,
                            authorizer_context(self.who))
        result = self.api.handle(event, None)
        text = result.get("body") or ""
        return int(result["statusCode"]), json.loads(text) if text else None

    def converse(self, conversation_id: str, *texts: str, speaker: str = "Alice", **extra: Any) -> dict[str, Any]:
        status, body = self.call("POST", "/v3/conversations", {
            "conversation_id": conversation_id,
            "messages": [{"speaker": speaker, "role": "user", "content": t} for t in texts], **extra})
        assert status == 201, body
        return body

    def recall(self, query: str, **extra: Any) -> list[dict[str, Any]]:
        status, body = self.call("POST", "/v3/recall", {"query": query, "min_relevance": 0, **extra})
        assert status == 200, body
        return body["results"]


def make_world(tmp_path, llm: FakeChatServer | None, **settings: Any) -> World:
    adapter = (OpenAICompatibleLLM(base_url=llm.base_url, model="fake-1", retry_delays=(0.0, 0.0), sleep=lambda s: None)
               if llm is not None else None)
    stack = build_local(Settings(data_dir=tmp_path / "d", **settings), embedder=HashEmbedder(),
                        summarizer=LocalSummarizer(), media_readers=(None, None), llm=adapter)
    clock = FixedClock()
    stack.services = replace(stack.services, clock=clock, llm=LanguageModel(adapter) if adapter is not None else None)
    org, _ = ensure_organization(stack.metadata, "acme")
    who = Principal(organization_id=org.id, key_id="key-a", rate_limit_per_minute=1000)
    return World(stack, MemlaneApi(stack.services), who, clock, llm, IngestWorker(stack.services, stack.queue))


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    with FakeChatServer(scripted_brain) as server:
        yield server


@pytest.fixture
def world(tmp_path, chat_server) -> Iterator[World]:
    w = make_world(tmp_path, chat_server)
    yield w
    w.stack.close()


@pytest.fixture
def offline(tmp_path) -> Iterator[World]:
    w = make_world(tmp_path, None)
    yield w
    w.stack.close()


@pytest.fixture
def world_with(tmp_path, chat_server):
    made: list[World] = []

    def make(**settings: Any) -> World:
        w = make_world(tmp_path / str(len(made)), chat_server, **settings)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stack.close()
