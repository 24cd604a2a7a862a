"""The `LLM` port on any OpenAI-compatible Chat Completions endpoint: OpenAI itself, or a local
server through its base URL (Ollama `http://127.0.0.1:11434/v1`, vLLM, LM Studio
`http://127.0.0.1:1234/v1`).

The answer is asked for as JSON of the prompt's schema (`response_format` `json_schema`, which
OpenAI, Ollama, vLLM and LM Studio accept; the schema is also in the system prompt, for servers
that only honour `json_object`). The client's own retries are off: memlane.retry retries 429, 5xx,
timeouts and connection failures with backoff (1 s, 2 s, 4 s), then raises TransientError.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import openai

from memlane.adapters.openai.embedder import (
    REQUEST_TIMEOUT_S,
    describe_openai_error,
    is_transient_openai_error,
)
from memlane.domain.errors import LLMOutputError, MemlaneError
from memlane.ports.llm import Completion
from memlane.retry import DEFAULT_DELAYS, call_with_retries

DEFAULT_MODEL = "gpt-4o-mini"
LLM_TIMEOUT_S = 60.0  # extraction runs off the request path; a local model on a laptop is slow

JsonMode = Literal["json_schema", "json_object"]


class OpenAICompatibleLLM:
    def __init__(self, client: openai.OpenAI | None = None, *, base_url: str | None = None,
                 api_key: str | None = None, model: str = DEFAULT_MODEL, json_mode: JsonMode = "json_schema",
                 retry_delays: Sequence[float] = DEFAULT_DELAYS, sleep: Callable[[float], None] = time.sleep,
                 timeout_s: float = LLM_TIMEOUT_S) -> None:
        self._client = client
        self._base_url = base_url
        self._api_key = api_key
        self._model = model
        self._json_mode = json_mode
        self._retry_delays = tuple(retry_delays)
        self._sleep = sleep
        self._timeout_s = timeout_s

    @property
    def id(self) -> str:
        return f"openai-compatible:{self._model}"

    def _client_or_default(self) -> openai.OpenAI:
        if self._client is None:
            if not self._api_key and not self._base_url:
                raise MemlaneError("an OpenAI-compatible LLM needs MEMLANE_LLM_BASE_URL or an API key")
            # A local server (Ollama, LM Studio) takes any key; the client insists on one.
            self._client = openai.OpenAI(api_key=self._api_key or "not-needed", base_url=self._base_url,
                                         max_retries=0, timeout=min(self._timeout_s, REQUEST_TIMEOUT_S * 4))
        return self._client

    def complete_json(self, *, task: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int) -> Completion:
        client = self._client_or_default()
        if self._json_mode == "json_schema":
            response_format: dict[str, Any] = {"type": "json_schema",
                                               "json_schema": {"name": task, "schema": schema}}
        else:
            response_format = {"type": "json_object"}
        messages = [
            {"role": "system", "content": f"{system}\n\nAnswer with one JSON object matching this JSON schema:\n"
                                          f"{json.dumps(schema, separators=(',', ':'))}"},
            {"role": "user", "content": user},
        ]

        def call() -> Any:
            return client.chat.completions.create(  # type: ignore[call-overload]
                model=self._model, temperature=0, max_tokens=max_tokens, messages=messages,
                response_format=response_format)

        try:
            response = call_with_retries(call, delays=self._retry_delays, is_transient=is_transient_openai_error,
                                         sleep=self._sleep, operation=f"LLM {task}")
        except openai.APIStatusError as exc:  # 4xx: the request itself is wrong (model name, key)
            raise MemlaneError(f"LLM {task}: {describe_openai_error(exc)}") from exc
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        if not response.choices:
            raise LLMOutputError(f"LLM {task}: no choices in the answer", tokens_in + tokens_out)
        try:
            data = parse_json_answer(task, response.choices[0].message.content or "")
        except LLMOutputError as exc:
            raise LLMOutputError(exc.message, tokens_in + tokens_out) from None
        return Completion(data=data, input_tokens=tokens_in, output_tokens=tokens_out, model=self._model)


def parse_json_answer(task: str, text: str) -> Any:
    """The JSON object a model answered; a ```json fence around it is tolerated (small local models
    add one), anything else is an LLMOutputError."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise LLMOutputError(f"LLM {task}: the answer is not JSON") from exc
    if not isinstance(data, dict):
        raise LLMOutputError(f"LLM {task}: the answer is not a JSON object")
    return data
