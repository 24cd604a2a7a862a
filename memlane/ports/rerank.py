"""The reranker: a model that reads the query beside each candidate's text and says how relevant the
text is. Off unless a composition provides one (Amazon Bedrock's Rerank API on AWS,
memlane.adapters.aws.bedrock_reranker; locally none, since no reranker weights install here).

`Rerank` is the option a composition puts into Services: the model plus how many of the fused
candidates it reads and how its score mixes with the fused one (memlane.recall.rerank applies it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# Why 30 and 0.7: docs/deploy.md ("Rerank (optional)") and memlane.recall.rerank.
from memlane.domain.tuning import DEFAULT_RERANK_TOP_N, DEFAULT_RERANK_WEIGHT, MAX_RERANK_TOP_N


@runtime_checkable
class Reranker(Protocol):
    @property
    def id(self) -> str:
        """Names the model, e.g. 'bedrock/amazon.rerank-v1:0' (part of recall's cache key)."""
        ...

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score in [0, 1] per text, in the order given. Raises
        memlane.domain.errors.TransientError when the model is throttled or unavailable, and
        MemlaneError when it refuses the request: recall then skips the stage and says so."""
        ...


@dataclass(frozen=True)
class Rerank:
    reranker: Reranker
    top_n: int = DEFAULT_RERANK_TOP_N
    weight: float = DEFAULT_RERANK_WEIGHT  # 1.0 replaces the fused score; 0 would be no stage

    def __post_init__(self) -> None:
        if not 1 <= self.top_n <= MAX_RERANK_TOP_N:
            raise ValueError(f"rerank top_n must be between 1 and {MAX_RERANK_TOP_N}, not {self.top_n}")
        if not 0 < self.weight <= 1:
            raise ValueError(f"rerank weight must be in (0, 1], not {self.weight}")
