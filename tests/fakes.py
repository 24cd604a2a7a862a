"""In-memory fakes for the core's unit tests (no model, no network)."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any


class HashEmbedder:
    """Bag of words hashed into 256 dimensions: texts sharing words are close, others are not.
    Deterministic and instant, for tests about plumbing rather than semantics."""

    dimension = 256

    def __init__(self, fail_times: int = 0) -> None:
        self.fail_times = fail_times
        self.calls = 0

    @property
    def id(self) -> str:
        return "test/hash/256"

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dimension
        for w in re.findall(r"\w+", text.lower()):
            h = int(hashlib.md5(w.encode()).hexdigest(), 16)
            v[h % self.dimension] += 1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / n for x in v]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.fail_times > 0:
            self.fail_times -= 1
            from memlane.domain.errors import TransientError

            raise TransientError("embedding service returned 503")
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.query_calls = getattr(self, "query_calls", 0) + 1
        return self._vec(text)


class FixedClock:
    def __init__(self, now: datetime | None = None) -> None:
        self.current = now or datetime.now(UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, **kwargs) -> None:
        self.current += timedelta(**kwargs)


class FixedLegs:
    """A search index that answers every search with the same legs (recall's pipeline tests)."""

    def __init__(self, legs: Any) -> None:
        self.legs = legs

    def search(self, scope: Any, text: str, vector: Any, k: int, *, complete: bool = True) -> Any:
        return self.legs


class ChunkRecords:
    """The metadata port's `get_chunks_by_id` over (title, content) by chunk id; a chunk not listed has
    `default`, and the ids in `code` are code."""

    def __init__(self, texts: dict[str, tuple[str, str]] | None = None, default: tuple[str, str] = ("", ""),
                 code: frozenset[str] = frozenset()) -> None:
        self.texts, self.default, self.code = texts or {}, default, code

    def get_chunks_by_id(self, org_id: str, chunk_ids: list[str]) -> list[Any]:
        from types import SimpleNamespace

        from memlane.domain.models import ContentType

        return [SimpleNamespace(id=c, document_id=f"d-{c}", tags=[], heading_path=[], title=self.texts.get(c, self.default)[0],
                                content=self.texts.get(c, self.default)[1],
                                content_type=ContentType.CODE if c in self.code else ContentType.TEXT)
                for c in chunk_ids]

    def conversation_messages(self, org_id: str, document_ids: list[str]) -> set[str]:
        """No document is a message of a conversation."""
        return set()
