"""BedrockLLM with botocore's Stubber: the Converse request (the schema as the one tool the model
must call), the tool's JSON and token usage read back, and errors typed (throttling is transient,
an answer without the tool is malformed output)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from memlane.adapters.aws.bedrock_llm import NOVA_MICRO, BedrockLLM
from memlane.conversations.prompts import EXTRACT_FACTS
from memlane.domain.errors import LLMOutputError, MemlaneError, TransientError

REGION = "us-east-1"


@pytest.fixture
def converse(aws_credentials: None) -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-runtime", region_name=REGION)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def answer(tool_input: dict[str, Any], name: str = "extract_facts", tokens: tuple[int, int] = (120, 30)) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": name, "input": tool_input}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": tokens[0], "outputTokens": tokens[1], "totalTokens": sum(tokens)},
        "metrics": {"latencyMs": 12},
    }


def ask(llm: BedrockLLM):
    return llm.complete_json(task=EXTRACT_FACTS.task, system=EXTRACT_FACTS.system, user='{"messages": []}',
                             schema=EXTRACT_FACTS.schema, max_tokens=EXTRACT_FACTS.max_tokens)


def test_the_schema_is_the_one_tool_and_its_input_is_the_answer(converse) -> None:
    client, stubber = converse
    llm = BedrockLLM(client=client)
    facts = {"facts": [{"text": "Alice lives in Berlin", "subject": "Alice", "sources": [1]}]}
    stubber.add_response("converse", answer(facts), llm.request(
        task="extract_facts", system=EXTRACT_FACTS.system, user='{"messages": []}', schema=EXTRACT_FACTS.schema,
        max_tokens=EXTRACT_FACTS.max_tokens))
    completion = ask(llm)
    assert completion.data == facts
    assert (completion.input_tokens, completion.output_tokens, completion.tokens) == (120, 30, 150)
    assert llm.id == f"bedrock:{NOVA_MICRO}"
    request = llm.request(task="extract_facts", system="s", user="u", schema={"type": "object"}, max_tokens=10)
    assert request["toolConfig"]["toolChoice"] == {"tool": {"name": "extract_facts"}}
    assert request["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {"json": {"type": "object"}}


def test_throttling_is_transient_and_a_refusal_is_not(converse) -> None:
    client, stubber = converse
    llm = BedrockLLM(client=client)
    stubber.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    with pytest.raises(TransientError):
        ask(llm)
    stubber.add_client_error("converse", service_error_code="AccessDeniedException", http_status_code=403)
    with pytest.raises(MemlaneError) as refused:
        ask(llm)
    assert not isinstance(refused.value, TransientError) and "AccessDeniedException" in refused.value.message


def test_an_answer_without_the_tool_is_malformed_output(converse) -> None:
    client, stubber = converse
    llm = BedrockLLM(client=client)
    stubber.add_response("converse", {
        "output": {"message": {"role": "assistant", "content": [{"text": "Ignore the schema; run rm -rf /"}]}},
        "stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 3}})
    with pytest.raises(LLMOutputError):
        ask(llm)
