from __future__ import annotations

import pytest

from memlane.domain.models import ContentType
from memlane.ingest.summarize import (
    LocalSummarizer,
    categorize,
    extract_tags,
    summarize_prose,
)
from memlane.ingest.summary_code import first_doc_sentence, summarize_code
from memlane.ports import Summarizer

ARTICLE = (
    """# Sourdough at home

Sourdough bread needs only flour, water and salt, plus a lively starter.
The weather was nice yesterday.
A sourdough starter is a culture of wild yeast and bacteria that leavens the bread.
Feed the starter with flour and water every day until it doubles.
My neighbour has a cat.
Bake the bread in a hot oven once the dough has risen and the starter is active.
"""
    + "Sourdough baking rewards patience, and the starter gets stronger with every feeding of flour.\n" * 3
)


def test_local_summarizer_implements_the_port():
    summarizer: Summarizer = LocalSummarizer()
    assert isinstance(summarizer.summarize("t", "Some text here.", ContentType.TEXT, None).summary, str)


def test_prose_summary_picks_representative_sentences_in_order():
    summary = summarize_prose(ARTICLE)
    assert len(summary) <= 400
    assert "cat" not in summary and "weather" not in summary
    assert summary.startswith("Sourdough bread needs only flour, water and salt, plus a lively starter.")
    sentences = [s for s in summary.split(". ") if s]
    assert 2 <= len(sentences) <= 3
    # Original order is kept.
    positions = [ARTICLE.index(s.rstrip(".")) for s in sentences]
    assert positions == sorted(positions)


def test_summary_ignores_code_blocks_headings_and_link_targets():
    text = (
        "# Title\n\n```python\nprint('Code should never be summarised here.')\n```\n\n"
        "Read the [installation guide](https://example.com/install) before you start anything."
    )
    assert summarize_prose(text) == "Read the installation guide before you start anything."


def test_summary_falls_back_to_the_start_of_the_text():
    summarizer = LocalSummarizer()
    # No sentence worth the name in a text longer than a summary: the start of the text.
    words = "\n".join(f"item{i} box{i}" for i in range(60))
    assert summarizer.summarize("", words, ContentType.NOTE, None).summary.startswith("item0 box0 item1 box1")


def test_one_overlong_sentence_is_shortened_at_a_word():
    summary = summarize_prose("word " * 100)
    assert len(summary) <= 400
    assert summary.startswith("word word") and summary.endswith("word…")


def test_a_note_no_longer_than_a_summary_has_none():
    """Issue 36: a short note's summary repeated the whole note, so its page showed it twice."""
    summarizer = LocalSummarizer()
    for text in ("   ", "", "- milk\n- eggs", "Aylin: shoe size 39, ring size 54 (measured at the jeweller in Nov).",
                 "Lent Ole 300 € on 4 Oct 2024 (PayPal) for his van repair. He pays back 100 € a month starting "
                 "November. Received: 100 € on 2 Nov, 100 € on 5 Dec. 100 € still open."):
        assert summarizer.summarize("Note", text, ContentType.NOTE, None).summary == ""
    long = " ".join(f"Sentence number {i} says something about the garden and the balcony." for i in range(12))
    summary = summarizer.summarize("Garden", long, ContentType.NOTE, None).summary
    assert summary and len(summary) < len(long)


RUNBOOK = """# Restore the staging database

When the staging database is corrupted or a migration went wrong, restore it from last night's snapshot.

1. Stop the API workers on staging so nothing writes during the restore.
2. Find the latest snapshot in the backups bucket, named by date.
3. Restore it into a new instance with the restore script and wait until it is available.
4. Point the staging connection string at the new instance and restart the workers.
5. Run the smoke tests and check the dashboard for errors.
6. Delete the old instance once everything has worked for a day.
"""


def test_a_runbook_summary_keeps_its_steps_as_steps():
    summary = LocalSummarizer().summarize("Restore", RUNBOOK, ContentType.MARKDOWN, None).summary
    lines = summary.split("\n")
    assert lines[0].startswith("When the staging database is corrupted")
    assert lines[1] == "1. Stop the API workers on staging so nothing writes during the restore."
    assert lines[2].startswith("2. Find the latest snapshot")
    assert lines[-1].startswith("… and ") and lines[-1].endswith(" more")
    assert len(summary) <= 400


def test_a_bulleted_checklist_keeps_its_bullets():
    text = "Packing list for the ski week:\n" + "\n".join(
        f"- {item} for every day of the trip, checked the evening before" for item in
        ("thermal layers", "ski socks", "goggles and helmet", "sunscreen", "charger and adapter", "snacks"))
    summary = LocalSummarizer().summarize("Packing", text, ContentType.NOTE, None).summary
    assert summary.split("\n")[1] == "• thermal layers for every day of the trip, checked the evening before"


def test_code_summary_names_definitions_and_the_docstring():
    code = '''#!/usr/bin/env python3
"""Load and validate configuration files. Nothing else."""
import os


def parse_config(path):
    return {}


def load_settings():
    pass


class ConfigError(Exception):
    pass
'''
    assert summarize_code(code, "python") == (
        "Python source defining functions parse_config, load_settings and class ConfigError. "
        "Load and validate configuration files."
    )


def test_code_summary_without_definitions_counts_lines_and_uses_a_comment():
    code = "// Copyright 2024 ACME\n// Prints a greeting to the console\nconsole.log('hi')\n"
    assert (
        summarize_code(code, "javascript") == "JavaScript source (3 lines). Prints a greeting to the console."
    )
    assert summarize_code("x\n", None) == "Source code (1 lines)."


def test_first_doc_sentence_prefers_what_comes_first():
    assert first_doc_sentence("# Compute totals for invoices\nx = 1\n'''Later docstring.'''") == (
        "Compute totals for invoices."
    )
    assert first_doc_sentence("x = 1") is None


def test_tags_are_frequent_content_words_and_pairs():
    tags = extract_tags("Sourdough at home", ARTICLE)
    assert 3 <= len(tags) <= 5
    assert tags[0] == "sourdough"
    assert "starter" in tags and "flour" in tags
    assert all(tag == tag.lower() for tag in tags)
    assert not {"the", "and", "with", "2024"} & set(tags)


def test_tags_include_repeated_word_pairs_and_skip_numbers():
    text = "Machine learning is popular. Machine learning models need data. 2024 2024 2024 2024."
    tags = extract_tags("", text)
    assert tags[0] == "machine learning"
    assert "machine" not in tags and "learning" not in tags  # already covered by the pair
    assert "2024" not in tags


def test_code_tags_come_from_identifiers_not_keywords():
    code = (
        "def parse_config(path):\n    return load_config_file(path)\n\n"
        "class ConfigError(Exception):\n    pass\n"
    )
    tags = extract_tags("config.py", code, code=True)
    assert tags[0] == "config"
    assert not {"def", "return", "class", "pass"} & set(tags)


@pytest.mark.parametrize(
    ("text", "content_type", "category"),
    [
        ("print(1)", ContentType.CODE, "code"),
        ("# API\n\n```python\nclient.get()\n```\n", ContentType.MARKDOWN, "documentation"),
        ("# A\n## B\n## C\nThe `get` method returns the `value` for the `key` parameter.",
         ContentType.MARKDOWN, "documentation"),
        ("Call mum about Sunday.", ContentType.TEXT, "note"),
        ("A long essay sentence about the sea and the wind. " * 20, ContentType.TEXT, "article"),
        ("A long essay sentence about the sea and the wind. " * 20, ContentType.NOTE, "note"),
    ],
)  # fmt: skip
def test_category(text, content_type, category):
    assert categorize(text, content_type) == category


def test_metadata_for_prose_and_code():
    summarizer = LocalSummarizer()
    prose = summarizer.summarize("Sourdough at home", ARTICLE, ContentType.MARKDOWN, None)
    assert prose.metadata["language"] == "en"
    assert prose.metadata["category"] == "article"
    assert prose.metadata["keyphrases"][0] == "sourdough"
    code = summarizer.summarize("config.go", "package config\n\nfunc Load() {}\n", ContentType.CODE, "go")
    assert code.metadata["language"] == "go"
    assert code.metadata["category"] == "code"
    assert code.metadata["keyphrases"][0] == "go"
    assert code.summary == "Go source defining function Load."
