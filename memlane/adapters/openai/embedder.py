"""The OpenAI `Embedder` (spec §3.5): text-embedding-3-small at 1536 dimensions, 100 inputs a call.

The OpenAI client's own retries are switched off (max_retries=0): retrying is memlane's job
(memlane.retry), so that attempts, delays and the final error are the same for every dependency.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import openai

from memlane.domain.errors import DependencyUnavailableError, MemlaneError, TransientError
from memlane.retry import DEFAULT_DELAYS, call_with_retries

EMBEDDING_MODEL = "text-embedding-3-small"
EMBEDDING_DIMENSION = 1536
MAX_BATCH = 100  # spec §3.5: up to 100 chunks per call
REQUEST_TIMEOUT_S = 30.0  # a Lambda must not wait OpenAI's default 10 minutes

logger = logging.getLogger(__name__)

# 429 and 5xx, timeouts and connection failures are worth another attempt; 400/401/403/404 are not.
_TRANSIENT_OPENAI_ERRORS = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.APITimeoutError,
    openai.RateLimitError,
    openai.InternalServerError,
)


def is_transient_openai_error(exc: BaseException) -> bool:
    return isinstance(exc, _TRANSIENT_OPENAI_ERRORS)


def openai_client(api_key: str | None) -> openai.OpenAI:
    """A client for the real API, built on first use (never at import time), with the key the host
    read (Settings.openai_api_key; on AWS the secret's)."""
    if not api_key:
        raise MemlaneError("OpenAI is configured but OPENAI_API_KEY is not set")
    return openai.OpenAI(api_key=api_key, max_retries=0, timeout=REQUEST_TIMEOUT_S)


def describe_openai_error(exc: BaseException) -> str:
    """A readable one-line account of an OpenAI failure, without the request body."""
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = body.get("message") if isinstance(body.get("message"), str) else exc.message
        return f"HTTP {exc.status_code}: {detail}"
    return str(exc) or type(exc).__name__


class OpenAIEmbedder:
    """Implements the `Embedder` port with OpenAI's embeddings API."""

    def __init__(
        self,
        client: openai.OpenAI | None = None,
        *,
        api_key: str | None = None,
        model: str = EMBEDDING_MODEL,
        dimension: int = EMBEDDING_DIMENSION,
        batch_size: int = MAX_BATCH,
        retry_delays: Sequence[float] = DEFAULT_DELAYS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}")
        self._client = client
        self._api_key = api_key  # None: OPENAI_API_KEY, read when the first call is made
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._retry_delays = tuple(retry_delays)
        self._sleep = sleep

    @property
    def id(self) -> str:
        return f"openai/{self._model}/{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._embed_batch([text])[0]

    def _client_or_default(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai_client(self._api_key)
        return self._client

    def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        # The API rejects empty strings; a space embeds to "nothing in particular", which is right.
        inputs = [text if text else " " for text in texts]
        client = self._client_or_default()

        def call() -> openai.types.CreateEmbeddingResponse:
            return client.embeddings.create(model=self._model, input=inputs, dimensions=self._dimension)

        try:
            response = call_with_retries(
                call,
                delays=self._retry_delays,
                is_transient=is_transient_openai_error,
                sleep=self._sleep,
                operation="OpenAI embeddings",
            )
        except TransientError as exc:
            cause = exc.__cause__ or exc
            raise DependencyUnavailableError(
                f"OpenAI embeddings unavailable after {len(self._retry_delays) + 1} attempts: "
                f"{describe_openai_error(cause)}"
            ) from cause
        except openai.OpenAIError as exc:
            raise MemlaneError(f"OpenAI embeddings request failed: {describe_openai_error(exc)}") from exc
        except ValueError as exc:  # the SDK could not make sense of the response body
            raise MemlaneError(f"OpenAI embeddings response unusable: {exc}") from exc

        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(inputs):
            raise MemlaneError(f"OpenAI returned {len(data)} embeddings for {len(inputs)} inputs")
        vectors = [list(item.embedding) for item in data]
        for vector in vectors:
            if len(vector) != self._dimension:
                raise MemlaneError(
                    f"OpenAI returned a {len(vector)}-dimension vector, expected {self._dimension}"
                )
        return vectors
