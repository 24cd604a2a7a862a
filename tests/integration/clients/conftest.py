"""A local server on loopback whose LLM is the fake OpenAI-compatible server on loopback
(tests/fake_chat_server.py), scripted to draw one fact from each of three sentences and to
reconcile every later fact as an update: what the clients' conversation tests run against."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest_helpers import free_port
from fake_chat_server import FakeChatServer
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.server import LocalServer

FACTS = {"I live in Lisbon.": "Sam lives in Lisbon", "We moved to Porto!": "Sam lives in Porto",
         "I play the cello.": "Ana plays the cello"}


def brain(task: str, data: dict[str, Any]) -> dict[str, Any]:
    if task == "extract_facts":
        return {"facts": [{"text": FACTS[m["text"]], "subject": FACTS[m["text"]].split()[0], "sources": [m["n"]]}
                          for m in data["messages"] if m["text"] in FACTS]}
    return {"outcome": "update", "target": 1, "reason": "Sam moved"}


@pytest.fixture
def llm_server(tmp_path) -> Iterator[tuple[str, str, FakeChatServer]]:
    with FakeChatServer(brain) as llm:
        settings = Settings.from_env({"MEMLANE_LLM_BASE_URL": llm.base_url, "MEMLANE_LLM_MODEL": "fake-1"},
                                     data_dir=tmp_path / "data")
        srv = LocalServer(settings, host="127.0.0.1", port=free_port(), embedder=HashEmbedder())
        key = srv.prepare()
        srv.start_in_thread()
        try:
            yield f"http://127.0.0.1:{srv.port}", key, llm
        finally:
            srv.shutdown()
