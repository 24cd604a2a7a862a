"""Bedrock's runtime for the trace: the requests are botocore's own (validated against the service
model and checked against the role like every call), only the answers come from here, because
moto answers InvokeModel with an empty body and implements neither Converse nor Rerank.

* InvokeModel (Titan Text Embeddings V2): a unit vector of the requested dimension, words hashed
  into it (texts sharing words are close, as the recall paths need).
* Converse: the tool's input the caller asked for, from `answers[task]` (a function of the request).
* Rerank: each text's share of the query's words as its relevance.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from botocore.response import StreamingBody

from aws_trace.recorder import Trace

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def hashed_vector(text: str, dimension: int) -> list[float]:
    vector = [0.0] * dimension
    for word in words(text):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dimension] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class FakeBedrock:
    def __init__(self, answers: dict[str, Answer] | None = None) -> None:
        self.answers = answers or {}
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def invoke_model(self, params: dict[str, Any]) -> dict[str, Any]:
        body = json.loads(params["body"])
        self.requests.append(("InvokeModel", body))
        text = str(body.get("inputText", ""))
        payload = json.dumps({"embedding": hashed_vector(text, int(body.get("dimensions", 1024))),
                              "inputTextTokenCount": len(words(text))}).encode()
        return {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"}

    def converse(self, params: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(("Converse", params))
        task = params["toolConfig"]["tools"][0]["toolSpec"]["name"]
        answer = self.answers[task](params)
        return {"output": {"message": {"role": "assistant", "content": [
                    {"toolUse": {"toolUseId": f"tool-{len(self.requests)}", "name": task, "input": answer}}]}},
                "stopReason": "tool_use", "usage": {"inputTokens": 120, "outputTokens": 40, "totalTokens": 160},
                "metrics": {"latencyMs": 5}}

    def rerank(self, params: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(("Rerank", params))
        query = set(words(params["queries"][0]["textQuery"]["text"]))
        texts = [s["inlineDocumentSource"]["textDocument"]["text"] for s in params["sources"]]
        scores = [len(query & set(words(t))) / (len(query) or 1) for t in texts]
        ranked = sorted(range(len(texts)), key=lambda i: -scores[i])
        return {"results": [{"index": i, "relevanceScore": scores[i]} for i in ranked]}

    @contextmanager
    def serving(self, trace: Trace) -> Iterator[FakeBedrock]:
        """The trace answers these operations from here, once it has checked them."""
        entries = {("bedrock-runtime", "InvokeModel"): self.invoke_model,
                   ("bedrock-runtime", "Converse"): self.converse,
                   ("bedrock-agent-runtime", "Rerank"): self.rerank}
        with trace.answering(entries):
            yield self
