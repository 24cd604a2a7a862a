"""The OpenAI `Summarizer` (spec §3.6 summary, §3.7 metadata) with gpt-4o-mini.

Summaries are a nice-to-have next to the content itself, so this adapter never fails a document:
when a call fails (after retries for transient errors) or returns something unusable, the
`LocalSummarizer`'s result is used instead, and the failure is logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import openai

from memlane.adapters.openai.embedder import (
    describe_openai_error,
    is_transient_openai_error,
    openai_client,
)
from memlane.domain.errors import MemlaneError
from memlane.domain.models import ContentType
from memlane.ingest.summarize import MAX_TAGS, LocalSummarizer, needs_summary
from memlane.ports import Summarizer, Summary
from memlane.retry import DEFAULT_DELAYS, call_with_retries

CHAT_MODEL = "gpt-4o-mini"
SUMMARY_MAX_TOKENS = 200
CONTENT_MAX_CHARS = 16_000  # spec: content truncated to ~4,000 tokens

SUMMARY_PROMPT = (
    "Summarize the following content in 2-3 sentences. Focus on the key information and main topic."
)
METADATA_PROMPT = """Extract metadata from the following content. Return a JSON object with these fields \
(include only fields that are clearly present):
- author: string (author name if mentioned)
- date: string (publication/creation date if mentioned, ISO 8601)
- tags: string[] (3-5 relevant topic tags)
- language: string (programming language if code, or content language)
- sentiment: 'positive' | 'negative' | 'neutral'
- category: string (e.g., 'article', 'documentation', 'tutorial', 'opinion', 'research', 'reference')
- entities: {"text": string, "kind": "person" | "place" | "organization" | "tool"}[] (the people, places, \
organizations and software tools the content names, at most 12)"""

SENTIMENTS = frozenset({"positive", "negative", "neutral"})
_SHORT_FIELD_MAX = 200
_TAG_MAX = 50
_ENTITIES_MAX = 12
ENTITY_KINDS = frozenset({"person", "place", "organization", "tool"})

logger = logging.getLogger(__name__)


class _UnusableResponse(MemlaneError):
    """The model answered, but not with something we can store."""


class OpenAISummarizer:
    """Implements the `Summarizer` port with two chat completions: a summary and JSON metadata."""

    def __init__(
        self,
        client: openai.OpenAI | None = None,
        *,
        api_key: str | None = None,
        model: str = CHAT_MODEL,
        fallback: Summarizer | None = None,
        retry_delays: Sequence[float] = DEFAULT_DELAYS,
        sleep: Callable[[float], None] = time.sleep,
        max_content_chars: int = CONTENT_MAX_CHARS,
    ) -> None:
        self._client = client
        self._api_key = api_key  # None: OPENAI_API_KEY, read when the first call is made
        self._model = model
        self._fallback = fallback or LocalSummarizer()
        self._retry_delays = tuple(retry_delays)
        self._sleep = sleep
        self._max_content_chars = max_content_chars

    def summarize(self, title: str, text: str, content_type: ContentType, language: str | None) -> Summary:
        content = truncate(text, self._max_content_chars)
        local: Summary | None = None

        def local_result() -> Summary:
            nonlocal local
            if local is None:
                local = self._fallback.summarize(title, text, content_type, language)
            return local

        try:
            # a note no longer than a summary is its own summary: no call, no summary
            summary = self._summary(content) if needs_summary(text, content_type) else ""
        except Exception as exc:  # any failure: fall back, never lose the document over a summary
            logger.warning("OpenAI summary failed, using the local summary: %s", describe_openai_error(exc))
            summary = local_result().summary

        try:
            metadata = self._metadata(title, content)
        except Exception as exc:
            logger.warning("OpenAI metadata failed, using local metadata: %s", describe_openai_error(exc))
            metadata = dict(local_result().metadata)
        else:
            # Tags and category drive filtering and display: fill in what the model left out.
            for key in ("keyphrases", "category", "language", "entities"):
                if key not in metadata and key in local_result().metadata:
                    metadata[key] = local_result().metadata[key]
        if content_type is ContentType.CODE and language:
            metadata["language"] = language  # the detector's spelling, shared with chunks and filters
        return Summary(summary=summary, metadata=metadata)

    # ------------------------------------------------------------------ calls

    def _client_or_default(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai_client(self._api_key)
        return self._client

    def _chat(self, operation: str, **request: Any) -> str:
        client = self._client_or_default()

        def call() -> Any:
            return client.chat.completions.create(model=self._model, temperature=0, **request)

        response = call_with_retries(
            call,
            delays=self._retry_delays,
            is_transient=is_transient_openai_error,
            sleep=self._sleep,
            operation=operation,
        )
        if not response.choices:
            raise _UnusableResponse(f"{operation}: no choices in the response")
        return (response.choices[0].message.content or "").strip()

    def _summary(self, content: str) -> str:
        summary = self._chat(
            "OpenAI summary",
            max_tokens=SUMMARY_MAX_TOKENS,
            messages=[
                {"role": "system", "content": SUMMARY_PROMPT},
                {"role": "user", "content": content},
            ],
        )
        if not summary:
            raise _UnusableResponse("OpenAI summary: empty answer")
        return summary

    def _metadata(self, title: str, content: str) -> dict[str, Any]:
        answer = self._chat(
            "OpenAI metadata",
            response_format={"type": "json_object"},
            messages=[
                {"role": "system", "content": METADATA_PROMPT},
                {"role": "user", "content": f"{title}\n\n{content}"},
            ],
        )
        try:
            data = json.loads(answer)
        except ValueError as exc:
            raise _UnusableResponse(f"OpenAI metadata: not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise _UnusableResponse("OpenAI metadata: not a JSON object")
        return parse_metadata(data)


def truncate(text: str, max_chars: int) -> str:
    """At most `max_chars`, cut at a whitespace near the end when there is one."""
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:space] if space >= max_chars * 0.9 else cut


def parse_metadata(data: dict[str, Any]) -> dict[str, Any]:
    """Keep only the spec §3.7 fields, each only if it has the right shape."""
    metadata = _short_fields(data)
    sentiment = data.get("sentiment")
    if isinstance(sentiment, str) and sentiment.strip().lower() in SENTIMENTS:
        metadata["sentiment"] = sentiment.strip().lower()
    if keyphrases := _tags(data.get("tags")):
        metadata["keyphrases"] = keyphrases
    if entities := _entities(data.get("entities")):
        metadata["entities"] = entities
    return metadata


def _short_fields(data: dict[str, Any]) -> dict[str, Any]:
    """author, date, language and category: short strings (a category in lower case)."""
    fields: dict[str, Any] = {}
    for key in ("author", "date", "language", "category"):
        value = data.get(key)
        if isinstance(value, str) and value.strip() and len(value.strip()) <= _SHORT_FIELD_MAX:
            fields[key] = value.strip()
    if "category" in fields:
        fields["category"] = fields["category"].lower()
    return fields


def _tags(tags: Any) -> list[str]:
    """At most MAX_TAGS distinct short tags, lower case, their spaces collapsed."""
    if not isinstance(tags, list):
        return []
    cleaned: list[str] = []
    for tag in (" ".join(t.split()).lower() for t in tags if isinstance(t, str)):
        if tag and len(tag) <= _TAG_MAX and tag not in cleaned:
            cleaned.append(tag)
    return cleaned[:MAX_TAGS]


def _entities(entities: Any) -> list[dict[str, str]]:
    """The first _ENTITIES_MAX entities of a known kind, each text once."""
    if not isinstance(entities, list):
        return []
    kept: list[dict[str, str]] = []
    for entity in entities[:_ENTITIES_MAX]:
        if not (isinstance(entity, dict) and isinstance(entity.get("text"), str) and entity.get("kind") in ENTITY_KINDS):
            continue
        text = " ".join(entity["text"].split())
        if text and len(text) <= _TAG_MAX * 2 and all(e["text"] != text for e in kept):
            kept.append({"text": text, "kind": entity["kind"]})
    return kept
