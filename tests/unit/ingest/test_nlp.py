"""Offline titles, summaries, keyphrase tags and entities (issue 23): the values a person would
keep — the heading as the title, the expiry date in the summary, phrases not filler words as
tags, people, places, organizations and tools named by kind."""

from __future__ import annotations

import json

import pytest

from bench.nlp import tiny_pdf
from memlane.domain.models import ContentType
from memlane.ingest.entities import extract_entities
from memlane.ingest.pipeline import prepare
from memlane.ingest.summarize import LocalSummarizer

PASSPORT = (
    "# Passport renewal\n\nMy passport expires on 14 March 2027. The renewal at the consulate takes about six "
    "weeks, so I should apply before the end of January. Bring two photos and the old passport. We compared "
    "the fees on Thursday, for example. The queue at the office was long and the coffee machine was broken, "
    "which made the morning feel even longer than it was. The consulate is open on weekdays from nine to noon, "
    "and appointments are booked online about two weeks ahead."
)
LEASE_LINES = [
    "Residential Lease Agreement", "Landlord: Harbour Homes Ltd", "Tenant: Jane Doe",
    "Property: 12 Baker Street, London", "Monthly rent: 1,450 GBP, due on the first day of each month.",
    "Notice period: three months", "Deposit: 2,900 GBP, returned within 30 days of the end of the tenancy.",
    "Pets are not allowed without written consent of the landlord.",
    "The tenant keeps the garden tidy and the hedges trimmed throughout the year.",
]


def _summary(content, content_type, title=None):
    prepared = prepare(content, content_type, title, None)
    result = LocalSummarizer().summarize(prepared.title, prepared.extracted.text, prepared.extracted.content_type,
                                         prepared.extracted.language)
    return prepared.title, result


# --------------------------------------------------------------------------- titles


@pytest.mark.parametrize(
    ("content", "content_type", "given", "expected"),
    [
        ("# Research notes: vector databases\n\nWe compared Qdrant and pgvector.", ContentType.MARKDOWN, "notes.md",
         "Research notes: vector databases"),
        ("<html><head><title>Blog</title></head><body><main><h1>Three days in Kyoto</h1><p>We arrived.</p>"
         "</main></body></html>", ContentType.HTML, "page.html", "Three days in Kyoto"),
        ("# Standup 12 May\n\n- Alice finished the module.", None, None, "Standup 12 May"),
        ("# Groceries\n\nmilk, eggs", ContentType.TEXT, None, "Groceries"),
        # a title a person typed is kept, heading or not
        ("# Research notes\n\nText.", ContentType.MARKDOWN, "My vector DB notes", "My vector DB notes"),
        # code is known by its file name
        ("def main():\n    return 1\n", ContentType.CODE, "main.py", "main.py"),
    ],
)
def test_title_is_the_heading_before_a_file_name(content, content_type, given, expected):
    assert prepare(content, content_type, given, None).title == expected


def test_pdf_title_is_its_first_heading_not_the_file_name():
    assert prepare(tiny_pdf(LEASE_LINES), ContentType.PDF, "lease.pdf", None).title == "Residential Lease Agreement"


def test_untitled_note_gets_its_first_sentence_or_80_characters_at_a_word():
    note = ("Call the plumber about the leak under the kitchen sink. He said Tuesday works, but confirm the "
            "price first: the quote was 180 EUR including parts.")
    assert prepare(note, ContentType.TEXT, None, None).title == "Call the plumber about the leak under the kitchen sink"
    ramble = ("remember that the spare key for the garden shed is hidden under the third flowerpot from the left "
              "next to the rain barrel and nobody else knows")
    title = prepare(ramble, ContentType.TEXT, None, None).title
    assert len(title) <= 80 and title.endswith("…")
    assert ramble.startswith(title[:-1]) and ramble[len(title) - 1] == " "  # cut between words


# --------------------------------------------------------------------------- summaries


def test_passport_summary_keeps_the_expiry_date():
    title, result = _summary(PASSPORT, ContentType.MARKDOWN, "passport.md")
    assert title == "Passport renewal"
    assert "14 March 2027" in result.summary
    assert "coffee machine" not in result.summary


def test_lease_pdf_summary_keeps_the_notice_period_and_rent():
    _, result = _summary(tiny_pdf(LEASE_LINES), ContentType.PDF, "lease.pdf")
    assert "Notice period: three months" in result.summary
    assert "1,450 GBP" in result.summary


def test_json_note_summary_reads_as_keys_and_values():
    data = {"team": "payments", "oncall": "Marcus Lee", "slo": {"availability": "99.9%", "latency_p95_ms": 300},
            "escalation": ["Marcus Lee", "Sofia Rossi"]}
    _, result = _summary(json.dumps(data), ContentType.JSON, "oncall.json")
    assert result.summary.startswith("Keys: team, oncall, slo, escalation.")
    assert "oncall: Marcus Lee" in result.summary and "availability 99.9%" in result.summary
    assert '"' not in result.summary and "{" not in result.summary


# --------------------------------------------------------------------------- tags


def test_tags_are_phrases_not_filler_words():
    _, result = _summary(PASSPORT, ContentType.MARKDOWN, "passport.md")
    tags = result.metadata["keyphrases"]
    assert tags[0] == "passport renewal"
    assert not {"compared", "thursday", "example", "init", "passport"} & set(tags)


def test_code_keeps_identifier_tags_and_its_language():
    code = "def parse_config(path):\n    '''Read the config file.'''\n    return load_yaml(path)\n"
    result = LocalSummarizer().summarize("config.py", code, ContentType.CODE, "python")
    assert result.metadata["keyphrases"][0] == "python" and "entities" not in result.metadata


class _FailingEmbedder:
    id = "failing/1"
    dimension = 3

    def embed_documents(self, texts):
        raise RuntimeError("model went away")

    def embed_query(self, text):
        raise RuntimeError("model went away")


def test_an_embedder_that_fails_leaves_the_statistical_tags():
    result = LocalSummarizer(_FailingEmbedder()).summarize("Passport renewal", PASSPORT, ContentType.MARKDOWN, None)
    assert result.metadata["keyphrases"][0] == "passport renewal"
    assert "14 March 2027" in result.summary


# --------------------------------------------------------------------------- entities


def _kinds(text, embedder=None, kind_vectors=None):
    return {(e.text, e.kind) for e in extract_entities(text, embedder, kind_vectors)}


def test_entity_patterns_carry_their_kind():
    found = _kinds("Lunch with Dr. Ana Ruiz from Harbour Homes Ltd near Baker Street. She moved our billing to "
                   "PostgreSQL and asked @lchen to review the TypeScript client.")
    assert {("Ana Ruiz", "person"), ("Harbour Homes Ltd", "organization"), ("Baker Street", "place"),
            ("PostgreSQL", "tool"), ("@lchen", "person"), ("TypeScript", "tool")} <= found


def test_a_capital_that_only_opens_a_sentence_is_not_a_name():
    found = {text for text, _ in _kinds("Renew the car insurance. Remember the forms. Caroline said Lisbon is "
                                        "lovely in June.")}
    assert "Renew" not in found and "Remember" not in found
    assert {"Caroline", "Lisbon"} <= found


def test_summarizer_stores_entities_with_kind():
    result = LocalSummarizer().summarize(
        "Job offer", "Senior engineer role at Northwind Labs in Amsterdam. Reply to Hannah Vos by 15 December.",
        ContentType.NOTE, None)
    assert {"text": "Northwind Labs", "kind": "organization"} in result.metadata["entities"]
    assert {"text": "Amsterdam", "kind": "place"} in result.metadata["entities"]
    assert {"text": "Hannah Vos", "kind": "person"} in result.metadata["entities"]
    assert result.summary == ""  # a note no longer than a summary is its own summary


@pytest.mark.slow
def test_minilm_decides_the_kind_no_pattern_decided(minilm):
    summarizer = LocalSummarizer(minilm)
    result = summarizer.summarize(
        "Moving day", "The van from Oakline Removals arrives at 8 am and Marguerite will look after the kids in "
        "Tromsø while we unpack.", ContentType.NOTE, None)
    kinds = {e["text"]: e["kind"] for e in result.metadata["entities"]}
    assert kinds.get("Oakline Removals") == "organization"
    assert kinds.get("Marguerite") == "person"
    assert kinds.get("Tromsø") == "place"
