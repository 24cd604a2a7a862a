"""The LLM port: one structured completion, JSON that must match a schema, tokens counted.

memlane asks an LLM for data, never for actions: every prompt (memlane.conversations.prompts) comes
with the JSON schema of its answer, the adapter asks the model for JSON of that schema (an
OpenAI-compatible server's `response_format`, Bedrock's Converse tool), and the caller validates
what comes back with pydantic before it uses any of it. An answer is never executed and never
becomes an instruction: it is stored as quoted data, like any memory.

Adapters: memlane.adapters.openai.llm (any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM,
LM Studio) and memlane.adapters.aws.bedrock_llm (Amazon Bedrock's Converse API). Both retry
transient failures with backoff and then raise TransientError; an answer that is not JSON is an
LLMOutputError (the caller may ask once more, then gives up on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Completion:
    data: Any  # the parsed JSON the model answered (not yet schema-checked: the caller does that)
    input_tokens: int
    output_tokens: int
    model: str

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class LLM(Protocol):
    @property
    def id(self) -> str:
        """provider:model, e.g. `openai-compatible:llama3.1:8b` or `bedrock:amazon.nova-micro-v1:0`."""
        ...

    def complete_json(self, *, task: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int) -> Completion:
        """Ask for one JSON object matching `schema` (named `task`). Raises TransientError when the
        model cannot be reached after retries, LLMOutputError when it answered something that is
        not a JSON object."""
        ...
