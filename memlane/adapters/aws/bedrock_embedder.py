"""Embedder on Amazon Bedrock: Titan Text Embeddings V2.

Titan V2 takes one text per InvokeModel call, so a batch is one call per text (a few at a time in
threads: boto3 clients are thread-safe). The vectors come back L2-normalised (`normalize: true`),
which is what the OpenSearch index's inner-product space expects.

Retries are done here, with memlane's documented schedule (1 s, 2 s, 4 s, then TransientError),
and botocore's own retries are switched off for this client so the two do not multiply.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.config import Config
from botocore.exceptions import ClientError

from memlane.adapters.aws._boto import CONNECTION_ERRORS, error_code, is_transient, lazy_client
from memlane.domain.errors import MemlaneError, TransientError

TITAN_V2_MODEL_ID = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMENSIONS = (256, 512, 1024)
# Titan V2 accepts up to 8,192 tokens (and 50,000 characters); ~30,000 characters stays under the
# token limit for English prose and code.
MAX_INPUT_CHARS = 30_000
RETRY_DELAYS = (1.0, 2.0, 4.0)
# total_max_attempts=1: one attempt, no botocore retry (`max_attempts` would count retries).
BEDROCK_CLIENT_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=5, read_timeout=60
)


class BedrockEmbedder:
    def __init__(
        self,
        client: Any | None = None,
        model_id: str = TITAN_V2_MODEL_ID,
        dimension: int = 1024,
        *,
        sleep: Callable[[float], None] = time.sleep,
        max_workers: int = 4,
        retry_delays: Sequence[float] = RETRY_DELAYS,
    ) -> None:
        if model_id == TITAN_V2_MODEL_ID and dimension not in TITAN_V2_DIMENSIONS:
            raise ValueError(f"Titan V2 supports dimensions {TITAN_V2_DIMENSIONS}, not {dimension}")
        self.client = lazy_client(client, "bedrock-runtime", BEDROCK_CLIENT_CONFIG)
        self.model_id = model_id
        self._dimension = dimension
        self._sleep = sleep
        self._max_workers = max(1, max_workers)
        self._retry_delays = tuple(retry_delays)

    @property
    def id(self) -> str:
        return f"bedrock/{self.model_id}/{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) <= 1 or self._max_workers == 1:
            return [self._embed(t) for t in texts]
        with ThreadPoolExecutor(max_workers=min(self._max_workers, len(texts))) as pool:
            return list(pool.map(self._embed, texts))

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)

    def _embed(self, text: str) -> list[float]:
        if not text.strip():
            # Titan rejects empty input; a zero vector matches nothing (cosine 0 with everything).
            return [0.0] * self._dimension
        body = json.dumps(
            {"inputText": text[:MAX_INPUT_CHARS], "dimensions": self._dimension, "normalize": True}
        )
        response = self._invoke(body)
        payload = json.loads(response["body"].read())
        vector = [float(v) for v in payload["embedding"]]
        if len(vector) != self._dimension:
            raise MemlaneError(
                f"{self.model_id} returned {len(vector)} dimensions, expected {self._dimension}"
            )
        return vector

    def _invoke(self, body: str) -> Any:
        delays = iter(self._retry_delays)
        while True:
            try:
                return self.client.invoke_model(
                    modelId=self.model_id,
                    body=body,
                    contentType="application/json",
                    accept="application/json",
                )
            except (ClientError, *CONNECTION_ERRORS) as exc:
                if not is_transient(exc):
                    code = error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
                    raise MemlaneError(f"Bedrock refused the embedding request ({code})") from exc
                delay = next(delays, None)
                if delay is None:
                    code = error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
                    raise TransientError(
                        f"Bedrock embedding failed after {len(self._retry_delays) + 1} attempts ({code})"
                    ) from exc
                self._sleep(delay)
