"""The OpenAI-compatible LLM adapter against the fake Chat Completions server on loopback: the
request it sends (model, schema as response_format, temperature 0), the usage it reads back,
retries with backoff on 503 and 429, a 4xx that is not retried, answers that are not JSON; and the
settings that choose it."""

from __future__ import annotations

from typing import Any

import pytest
from fake_chat_server import FakeChatServer

from memlane.adapters.openai.llm import OpenAICompatibleLLM, parse_json_answer
from memlane.config import Settings
from memlane.domain.errors import ConfigurationError, LLMOutputError, MemlaneError, TransientError

SCHEMA = {"type": "object", "properties": {"facts": {"type": "array"}}, "required": ["facts"]}


@pytest.fixture
def server():
    with FakeChatServer(lambda task, data: {"facts": [data["say"]]}) as s:
        yield s


def llm(server: FakeChatServer, sleeps: list[float] | None = None) -> OpenAICompatibleLLM:
    slept = sleeps if sleeps is not None else []
    return OpenAICompatibleLLM(base_url=server.base_url, model="llama3.1:8b", retry_delays=(1.0, 2.0, 4.0),
                               sleep=slept.append)


def ask(adapter: OpenAICompatibleLLM, say: str = "hello") -> Any:
    return adapter.complete_json(task="extract_facts", system="You extract.", user=f'{{"say": "{say}"}}',
                                 schema=SCHEMA, max_tokens=100)


def test_the_answer_and_its_tokens_come_back_and_the_request_names_the_schema(server) -> None:
    completion = ask(llm(server))
    assert completion.data == {"facts": ["hello"]}
    assert completion.input_tokens > 0 and completion.output_tokens > 0
    (request,) = server.requests
    assert request["model"] == "llama3.1:8b" and request["temperature"] == 0 and request["max_tokens"] == 100
    assert request["response_format"] == {"type": "json_schema", "json_schema": {"name": "extract_facts", "schema": SCHEMA}}
    assert '"required":["facts"]' in request["messages"][0]["content"]  # for servers that only do json_object


def test_503_and_429_are_retried_with_backoff_then_reported_transient(server) -> None:
    sleeps: list[float] = []
    server.fail_next(2, 503)
    assert ask(llm(server, sleeps)).data == {"facts": ["hello"]}
    assert sleeps == [1.0, 2.0]
    sleeps.clear()
    server.fail_next(4, 429)
    with pytest.raises(TransientError):
        ask(llm(server, sleeps))
    assert sleeps == [1.0, 2.0, 4.0]


def test_a_refused_request_is_not_retried(server) -> None:
    sleeps: list[float] = []
    server.fail_next(1, 404)
    with pytest.raises(MemlaneError) as refused:
        ask(llm(server, sleeps))
    assert not isinstance(refused.value, TransientError) and "404" in refused.value.message and sleeps == []


def test_answers_that_are_not_a_json_object_are_malformed(server) -> None:
    server.malformed_next("I cannot answer that.", "[1, 2]")
    with pytest.raises(LLMOutputError):
        ask(llm(server))
    with pytest.raises(LLMOutputError):
        ask(llm(server))
    assert parse_json_answer("t", '```json\n{"facts": []}\n```') == {"facts": []}


def test_settings_choose_the_llm_and_name_a_bad_value() -> None:
    assert Settings.from_env({}).llm_provider is None
    assert Settings.from_env({"MEMLANE_LLM_BASE_URL": "http://127.0.0.1:11434/v1"}).llm_provider == "openai"
    assert Settings.from_env({"OPENAI_API_KEY": "sk-x", "MEMLANE_LLM": "off"}).llm_provider is None
    assert Settings.from_env({"MEMLANE_LLM": "bedrock"}).llm_provider == "bedrock"
    assert Settings.from_env({"MEMLANE_LLM_TOKENS_PER_MONTH": "0"}).llm_tokens_per_month == 0
    with pytest.raises(ConfigurationError, match="MEMLANE_LLM"):
        Settings.from_env({"MEMLANE_LLM": "gpt"})
    with pytest.raises(ConfigurationError, match="MEMLANE_LLM_TOKENS_PER_MONTH"):
        Settings.from_env({"MEMLANE_LLM_TOKENS_PER_MONTH": "lots"})
