"""Reranker on Amazon Bedrock: the `Rerank` operation of bedrock-agent-runtime, with Amazon Rerank 1.0
(`amazon.rerank-v1:0`) or Cohere Rerank 3.5 (`cohere.rerank-v3-5:0`).

One call per recall: the query and the candidates' texts inline, `numberOfResults` = all of them,
so every candidate gets a score (`relevanceScore`, in [0, 1]) and the response's `index` maps it
back to the text sent. boto3 is imported on first use, not when the adapter is composed.

No retry here: the stage runs on the request path, and a throttled reranker is better skipped (the
fused ranking is still a good answer) than waited for. botocore's own retries are off for this
client; a throttling or server error becomes TransientError, a refusal (access denied, model not
enabled in the account) MemlaneError; memlane.recall.rerank skips the stage on either and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlane.domain.errors import MemlaneError
from memlane.lazy import Lazy

AMAZON_RERANK_V1 = "amazon.rerank-v1:0"
COHERE_RERANK_V35 = "cohere.rerank-v3-5:0"
RERANK_MODELS = (AMAZON_RERANK_V1, COHERE_RERANK_V35)
MAX_SOURCES = 1000  # the API's limit on sources per call (memlane sends at most 100)


def model_arn(model_id: str, region: str) -> str:
    """The foundation model's ARN, which Rerank takes (not the bare id)."""
    return f"arn:aws:bedrock:{region}::foundation-model/{model_id}"


def _new_client(region: str) -> Any:
    import boto3
    from botocore.config import Config

    # One attempt (no botocore retry: see the module docstring), short timeouts: it is on the request path.
    config = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=10)
    return boto3.client("bedrock-agent-runtime", region_name=region or None, config=config)


class BedrockReranker:
    def __init__(self, model_id: str = AMAZON_RERANK_V1, region: str = "", client: Any | None = None) -> None:
        if model_id not in RERANK_MODELS:
            raise ValueError(f"rerank model {model_id!r}: choose one of {', '.join(RERANK_MODELS)}")
        self.model_id = model_id
        self.region = region
        self.client = client if client is not None else Lazy(lambda: _new_client(region), "bedrock-agent-runtime client")

    @property
    def id(self) -> str:
        return f"bedrock/{self.model_id}"

    def _arn(self) -> str:
        region = self.region or str(getattr(getattr(self.client, "meta", None), "region_name", "") or "")
        return model_arn(self.model_id, region)

    def request(self, query: str, texts: Sequence[str]) -> dict[str, Any]:
        """The Rerank request for a query and texts (the Stubber tests check it field by field)."""
        return {
            "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": [
                {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}}
                for t in texts
            ],
            "rerankingConfiguration": {
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": {
                    "numberOfResults": len(texts),
                    "modelConfiguration": {"modelArn": self._arn()},
                },
            },
        }

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        if len(texts) > MAX_SOURCES:
            raise MemlaneError(f"Bedrock Rerank takes at most {MAX_SOURCES} texts, not {len(texts)}")
        from memlane.adapters.aws._boto import call_model

        response = call_model(self.client, "rerank", f"Bedrock Rerank ({self.model_id})", **self.request(query, texts))
        scores: list[float | None] = [None] * len(texts)
        for result in response.get("results", []):
            index = int(result["index"])
            if 0 <= index < len(texts):
                scores[index] = float(result["relevanceScore"])
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            raise MemlaneError(f"Bedrock Rerank returned no score for {len(missing)} of {len(texts)} texts")
        return [float(s) for s in scores if s is not None]
