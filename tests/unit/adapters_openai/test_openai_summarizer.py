from __future__ import annotations

import json

import httpx
import pytest

from memlane.adapters.openai.summarizer import (
    METADATA_PROMPT,
    SUMMARY_PROMPT,
    OpenAISummarizer,
    parse_metadata,
)
from memlane.domain.models import ContentType
from memlane.ingest.summarize import LocalSummarizer

TEXT = (
    "Sourdough bread needs only flour, water and salt, plus a lively starter. "
    "A sourdough starter is a culture of wild yeast and bacteria. Feed the starter every day. "
    # longer than a summary: a shorter note is its own summary and never asks for one
    "Keep it in a glass jar at room temperature, and discard half of it before each feeding so that it stays "
    "lively. A loaf takes about a day from mixing the dough to baking it in a hot Dutch oven, most of it "
    "spent waiting while the dough rises slowly in a cool kitchen."
)
METADATA = {
    "author": "Ada Baker",
    "date": "2024-03-05",
    "tags": ["Sourdough", "baking", "bread", "fermentation", "yeast", "extra-tag"],
    "language": "en",
    "sentiment": "Positive",
    "category": "Tutorial",
    "rating": 5,
}


def make_summarizer(fake, sleeps: list[float], **kwargs) -> OpenAISummarizer:
    return OpenAISummarizer(client=fake.client(), sleep=sleeps.append, **kwargs)


def route(fake, summary: str | None = "A summary.", metadata: str | None = None):
    """Answer summary requests with `summary` and metadata requests (JSON mode) with `metadata`."""

    def handler(body):
        if "response_format" in body:
            return fake.chat(metadata if metadata is not None else json.dumps(METADATA))
        return fake.chat(summary)

    return handler


def test_requests_follow_the_spec(fake_openai):
    fake_openai.default = route(fake_openai, summary="  Sourdough needs a starter.  ")
    result = make_summarizer(fake_openai, []).summarize("Sourdough", TEXT, ContentType.TEXT, None)
    assert [path for path, _ in fake_openai.requests] == ["/v1/chat/completions"] * 2
    summary_request, metadata_request = (body for _, body in fake_openai.requests)
    assert summary_request["model"] == "gpt-4o-mini"
    assert summary_request["temperature"] == 0
    assert summary_request["max_tokens"] == 200
    assert summary_request["messages"] == [
        {"role": "system", "content": SUMMARY_PROMPT},
        {"role": "user", "content": TEXT},
    ]
    assert "response_format" not in summary_request
    assert metadata_request["model"] == "gpt-4o-mini"
    assert metadata_request["temperature"] == 0
    assert metadata_request["response_format"] == {"type": "json_object"}
    assert metadata_request["messages"] == [
        {"role": "system", "content": METADATA_PROMPT},
        {"role": "user", "content": f"Sourdough\n\n{TEXT}"},
    ]
    assert result.summary == "Sourdough needs a starter."
    assert result.metadata == {
        "author": "Ada Baker",
        "date": "2024-03-05",
        "keyphrases": ["sourdough", "baking", "bread", "fermentation", "yeast"],  # the LLM's "tags": generated
        "language": "en",
        "sentiment": "positive",
        "category": "tutorial",
    }


def test_long_content_is_truncated_to_about_16000_characters(fake_openai):
    fake_openai.default = route(fake_openai)
    text = "word " * 10_000
    make_summarizer(fake_openai, []).summarize("T", text, ContentType.TEXT, None)
    sent = fake_openai.requests[0][1]["messages"][1]["content"]
    assert 15_000 <= len(sent) <= 16_000
    assert text.startswith(sent)


def test_transient_failures_are_retried(fake_openai):
    handler = route(fake_openai)
    fake_openai.script = [fake_openai.error(500, "boom"), fake_openai.error(429, "slow"), handler]
    fake_openai.default = handler
    sleeps: list[float] = []
    result = make_summarizer(fake_openai, sleeps).summarize("T", TEXT, ContentType.TEXT, None)
    assert result.summary == "A summary."
    assert sleeps == [1.0, 2.0]
    assert len(fake_openai.requests) == 4  # three summary attempts, one metadata call


def test_summary_falls_back_to_local_after_retries(fake_openai):
    def handler(body):
        if "response_format" in body:
            return fake_openai.chat(json.dumps(METADATA))
        return fake_openai.error(503, "unavailable")

    fake_openai.default = handler
    sleeps: list[float] = []
    result = make_summarizer(fake_openai, sleeps).summarize("T", TEXT, ContentType.TEXT, None)
    local = LocalSummarizer().summarize("T", TEXT, ContentType.TEXT, None)
    assert result.summary == local.summary
    assert result.summary
    assert sleeps == [1.0, 2.0, 4.0]
    assert result.metadata["author"] == "Ada Baker"  # the metadata call still counted


@pytest.mark.parametrize("answer", [None, "   "])
def test_an_empty_summary_answer_falls_back(fake_openai, answer):
    fake_openai.default = route(fake_openai, summary=answer)
    result = make_summarizer(fake_openai, []).summarize("T", TEXT, ContentType.TEXT, None)
    assert result.summary == LocalSummarizer().summarize("T", TEXT, ContentType.TEXT, None).summary


def test_a_non_transient_error_falls_back_without_retrying(fake_openai):
    fake_openai.default = lambda body: fake_openai.error(401, "bad key")
    sleeps: list[float] = []
    result = make_summarizer(fake_openai, sleeps).summarize("T", TEXT, ContentType.TEXT, None)
    local = LocalSummarizer().summarize("T", TEXT, ContentType.TEXT, None)
    assert result.summary == local.summary
    assert result.metadata == local.metadata
    assert sleeps == []
    assert len(fake_openai.requests) == 2


@pytest.mark.parametrize("metadata", ["not json", "[1, 2]", '"just a string"'])
def test_unusable_metadata_falls_back_to_local_metadata(fake_openai, metadata):
    fake_openai.default = route(fake_openai, metadata=metadata)
    result = make_summarizer(fake_openai, []).summarize("Sourdough", TEXT, ContentType.TEXT, None)
    assert result.summary == "A summary."
    assert result.metadata == LocalSummarizer().summarize("Sourdough", TEXT, ContentType.TEXT, None).metadata


def test_missing_tags_and_category_are_filled_in_locally(fake_openai):
    fake_openai.default = route(fake_openai, metadata='{"author": "Ada", "sentiment": "angry"}')
    result = make_summarizer(fake_openai, []).summarize("Sourdough", TEXT, ContentType.TEXT, None)
    local = LocalSummarizer().summarize("Sourdough", TEXT, ContentType.TEXT, None).metadata
    assert result.metadata == {
        "author": "Ada",
        "keyphrases": local["keyphrases"],
        "category": local["category"],
        "language": "en",
    }


def test_code_keeps_the_detected_language(fake_openai):
    fake_openai.default = route(fake_openai, metadata='{"language": "Python 3", "tags": ["cli"]}')
    result = make_summarizer(fake_openai, []).summarize(
        "a.py", "def f():\n    pass\n", ContentType.CODE, "python"
    )
    assert result.metadata["language"] == "python"
    assert result.metadata["keyphrases"] == ["cli"]


def test_connection_failures_fall_back_too(fake_openai):
    def refuse(body):
        raise httpx.ConnectError("refused")

    fake_openai.default = refuse
    sleeps: list[float] = []
    result = make_summarizer(fake_openai, sleeps, retry_delays=(0.5,)).summarize(
        "T", TEXT, ContentType.TEXT, None
    )
    assert result.summary
    assert sleeps == [0.5, 0.5]  # one retry for each of the two calls
    assert len(fake_openai.requests) == 4


def test_parse_metadata_keeps_only_well_formed_fields():
    assert parse_metadata(
        {"author": "  ", "date": 2024, "tags": ["A", "a", 3, "", "x" * 80, "B  c"], "sentiment": "mixed",
         "category": "Reference", "language": "en", "extra": "dropped"}
    ) == {"keyphrases": ["a", "b c"], "category": "reference", "language": "en"}  # fmt: skip


def test_parse_metadata_keeps_the_llms_entities_of_the_four_kinds():
    parsed = parse_metadata({"entities": [
        {"text": "Ana  Ruiz", "kind": "person"}, {"text": "Lisbon", "kind": "place"},
        {"text": "Ana Ruiz", "kind": "person"}, {"text": "blue", "kind": "colour"}, "Acme", {"kind": "tool"}]})
    assert parsed["entities"] == [{"text": "Ana Ruiz", "kind": "person"}, {"text": "Lisbon", "kind": "place"}]


def test_a_note_no_longer_than_a_summary_asks_for_no_summary(fake_openai):
    """Issue 36: a short note's summary repeated it whole; now it has none, and no call is paid for."""
    fake_openai.default = route(fake_openai)
    result = make_summarizer(fake_openai, []).summarize(
        "Sizes", "Aylin: shoe size 39, ring size 54 (measured at the jeweller in Nov).", ContentType.TEXT, None)
    assert result.summary == ""
    assert [("response_format" in body) for _, body in fake_openai.requests] == [True]  # the metadata call only
