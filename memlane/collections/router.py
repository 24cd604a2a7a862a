"""The query router: picks semantic, metadata or hybrid retrieval for a raged `/query` and says why.

Rules, in order (first match wins; an explicit `strategy` in the request skips them):

| rule | when | strategy | confidence |
| --- | --- | --- | --- |
| filter_only | no query text, a filter | metadata | 1.0 |
| code_or_exact_terms | identifiers (snake_case, camelCase, a.b, a/b, `f()`) or "quotes" | hybrid | 0.9 |
| question | starts with a question word or ends with `?` | semantic | 0.9 |
| short_keywords | three words or fewer | hybrid | 0.8 |
| natural_language | four words or more | semantic | 0.7 |

Why: exact tokens (an identifier, an error code, a few keywords) are what BM25 is good at and
embeddings blur, so they go to the fused k-NN + BM25 ranking; a sentence or question is what
embeddings capture, so it goes to pure k-NN; with no text there is nothing to rank, so the filter
alone selects (metadata). raged's LLM tier is deliberately absent: routing stays deterministic,
free and explainable.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from enum import StrEnum


class Strategy(StrEnum):
    SEMANTIC = "semantic"
    METADATA = "metadata"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class RoutingDecision:
    strategy: Strategy
    method: str  # "explicit" or "rule"
    confidence: float
    rule: str
    duration_ms: float


QUESTION_WORDS = frozenset({
    "who", "what", "when", "where", "why", "how", "which", "whose", "whom", "is", "are", "was", "were", "do",
    "does", "did", "can", "could", "should", "would", "will", "shall", "may", "might", "explain", "describe",
})
# An identifier-like token: snake_case, camelCase/PascalCase inside a word, dotted.names, paths, calls.
_CODE_TOKEN = re.compile(
    r"""(?x)
    \w+_\w+                      # snake_case
    | [a-z]+[A-Z]\w*             # camelCase
    | [A-Z][a-z]+[A-Z]\w*        # PascalCase with a second capital
    | \w+\.\w+                   # dotted.name, file.ext
    | \w*/\w+                    # path/segment
    | \w+\(\)?                   # call(
    | ::
    | ["'`][^"'`]+["'`]          # a quoted exact phrase
    """
)
_WORDS = re.compile(r"\S+")


def classify(query: str | None, has_filter: bool) -> tuple[Strategy, float, str]:
    """The rule table above, as a pure function (strategy, confidence, rule name)."""
    text = (query or "").strip()
    if not text:
        if has_filter:
            return Strategy.METADATA, 1.0, "filter_only"
        raise ValueError("a query without text needs a filter")
    words = _WORDS.findall(text)
    if _CODE_TOKEN.search(text):
        return Strategy.HYBRID, 0.9, "code_or_exact_terms"
    if words[0].lower().strip("\"'") in QUESTION_WORDS or text.endswith("?"):
        return Strategy.SEMANTIC, 0.9, "question"
    if len(words) <= 3:
        return Strategy.HYBRID, 0.8, "short_keywords"
    return Strategy.SEMANTIC, 0.7, "natural_language"


def route(query: str | None, has_filter: bool, explicit: Strategy | None) -> RoutingDecision:
    started = time.perf_counter()
    if explicit is not None:
        strategy, method, confidence, rule = explicit, "explicit", 1.0, "explicit"
    else:
        strategy, confidence, rule = classify(query, has_filter)
        method = "rule"
    return RoutingDecision(strategy=strategy, method=method, confidence=confidence, rule=rule,
                           duration_ms=(time.perf_counter() - started) * 1000)
