"""The `LLM` port on Amazon Bedrock through the Converse API (bedrock-runtime `converse`).

The answer's JSON schema is given as the one tool the model must call (`toolConfig` with
`toolChoice: {"tool": ...}`), so the model answers with the tool's input: a JSON object, which the
caller still checks with pydantic (memlane.conversations.budget.ask). The default model is Amazon
Nova Micro, the smallest text model on Bedrock; MEMLANE_LLM_MODEL picks another (the deployment's
IAM policy allows only the model it was deployed with). botocore's standard retry mode retries
throttling, 5xx and timeouts with exponential backoff; what still fails is TransientError.
Token usage comes from the response's `usage`. boto3 loads on first use.
"""

from __future__ import annotations

from typing import Any

from botocore.config import Config

from memlane.domain.errors import LLMOutputError
from memlane.ports.llm import Completion

NOVA_MICRO = "amazon.nova-micro-v1:0"
DEFAULT_MODEL = NOVA_MICRO
# Extraction runs off the request path: longer reads than the request-path clients, the same retries.
LLM_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=5, read_timeout=60)


class BedrockLLM:
    def __init__(self, model_id: str = DEFAULT_MODEL, client: Any | None = None) -> None:
        from memlane.adapters.aws._boto import lazy_client

        self.model_id = model_id
        self.client = lazy_client(client, "bedrock-runtime", LLM_CLIENT_CONFIG)

    @property
    def id(self) -> str:
        return f"bedrock:{self.model_id}"

    def request(self, *, task: str, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
        """The Converse request (the Stubber tests check it field by field)."""
        return {
            "modelId": self.model_id,
            "system": [{"text": system}],
            "messages": [{"role": "user", "content": [{"text": user}]}],
            "inferenceConfig": {"maxTokens": max_tokens, "temperature": 0.0},
            "toolConfig": {
                "tools": [{"toolSpec": {"name": task, "description": f"Record the answer ({task}).",
                                        "inputSchema": {"json": schema}}}],
                "toolChoice": {"tool": {"name": task}},
            },
        }

    def complete_json(self, *, task: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int) -> Completion:
        from memlane.adapters.aws._boto import call_model

        response = call_model(self.client, "converse", f"Bedrock {self.model_id}",
                              **self.request(task=task, system=system, user=user, schema=schema, max_tokens=max_tokens))
        usage = response.get("usage") or {}
        content = ((response.get("output") or {}).get("message") or {}).get("content") or []
        answer = next((c["toolUse"].get("input") for c in content
                       if isinstance(c, dict) and isinstance(c.get("toolUse"), dict)
                       and c["toolUse"].get("name") == task), None)
        if not isinstance(answer, dict):
            raise LLMOutputError(f"LLM {task}: Bedrock answered without the {task} tool's JSON",
                                 int(usage.get("inputTokens") or 0) + int(usage.get("outputTokens") or 0))
        return Completion(data=answer, input_tokens=int(usage.get("inputTokens") or 0),
                          output_tokens=int(usage.get("outputTokens") or 0), model=self.model_id)
