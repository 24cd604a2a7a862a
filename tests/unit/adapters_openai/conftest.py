"""A real `openai.OpenAI` client whose HTTP transport is a scripted in-process fake: requests are
built and responses parsed by the SDK itself, with no network. Tests get it as `fake_openai`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

Handler = Callable[[dict[str, Any]], httpx.Response]


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (path, JSON body), in order
        self.script: list[httpx.Response | Exception | Handler] = []  # one step per request
        self.default: Handler | None = None  # once the script is used up

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(
            api_key="test",
            base_url="http://testserver/v1",
            http_client=httpx.Client(transport=httpx.MockTransport(self._handle)),
            max_retries=0,
        )

    def _handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append((request.url.path, body))
        step = self.script.pop(0) if self.script else self.default
        if step is None:
            raise AssertionError(f"unexpected request to {request.url.path}")
        if isinstance(step, Exception):
            raise step
        if isinstance(step, httpx.Response):
            return step
        return step(body)

    # ---- responses

    @staticmethod
    def error(status: int, message: str) -> httpx.Response:
        return httpx.Response(status, json={"error": {"message": message, "type": "error", "code": None}})

    @staticmethod
    def embeddings(body: dict[str, Any], dimension: int = 4) -> httpx.Response:
        """Vector i is [len(input i), i, 0, ...]: tests can tell which vector belongs to which input."""
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(text)), float(i)] + [0.0] * (dimension - 2),
            }
            for i, text in enumerate(body["input"])
        ]
        data.reverse()  # the API does not promise order; the adapter sorts by index
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        return httpx.Response(
            200, json={"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    @staticmethod
    def chat(content: str | None) -> httpx.Response:
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        return httpx.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-4o-mini",
                "choices": [choice],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )


@pytest.fixture
def fake_openai() -> FakeOpenAI:
    return FakeOpenAI()
