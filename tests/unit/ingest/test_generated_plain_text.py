"""What memlane generates from a save (title, summary, keyphrases, entities) is plain text, and its
word splits know every script's letters (issue 36, items 2 and 3).

Given content of each format carrying markup and character references, When it goes through a save's
extraction and the local summarizer, Then no generated string holds a tag, a script, a `javascript:`
link or a character reference, while the title a client gives and the stored content stay as given.
"""

from __future__ import annotations

import pytest

from bench.nlp import tiny_pdf
from memlane.domain.models import ContentType
from memlane.ingest.pipeline import prepare
from memlane.ingest.summarize import LocalSummarizer

MARKUP = ("&amp;", "&copy;", "&lt;", "<script", "</", "<a ", "javascript:", "alert(")
# Every note here is longer than a summary, so that it gets one (a shorter note is its own summary).
MORE = (" The team reviews the figures every month with the finance department and adjusts the plan when the "
        "campaigns perform better or worse than expected. Any change above five percent needs a written note "
        "from the budget owner, and the finance department files it with the quarterly report.")

HTML_PAGE = (
    "<html><head><title>Budget</title></head><body><h1>Q3 marketing budget &amp; spend</h1>"
    "<p>The marketing budget &amp; spend for Q3 is 40,000 EUR, approved by Dana Whitfield in Lisbon.</p>"
    "<p>See <a href=\"javascript:alert(1)\">the sheet</a> before Friday.</p>"
    f"<p>{MORE}</p><script>alert('xss')</script><p>&copy; 2025 Acme Inc</p></body></html>"
)
MARKDOWN_NOTE = (
    "# Q3 marketing budget &amp; spend\n\n"
    "The marketing budget &amp; spend for Q3 is 40,000 EUR &copy; Acme Inc, approved by Dana Whitfield in "
    "Lisbon. <script>alert('xss')</script> See <a href=\"javascript:alert(1)\">the sheet</a> and "
    f"[the plan](javascript:alert(1)) before Friday. The marketing budget grows next year.{MORE}\n"
)
JSON_NOTE = (
    '{"description": "The marketing budget &amp; spend for Q3 is <b>40,000 EUR</b>, approved by Dana Whitfield '
    'in Lisbon. <script>alert(1)</script>", "owner": "Dana Whitfield", "region": "EMEA"}'
)
CODE_FILE = (
    '"""Budgets &amp; spend: <b>monthly</b> totals. <script>alert(1)</script>"""\n\n'
    "def monthly_budget(rows):\n    return sum(r.amount for r in rows)\n"
)
MAIL = (
    "From: Dana Whitfield <dana@example.org>\nSubject: Q3 budget &amp; spend\nContent-Type: text/plain\n\n"
    "The marketing budget &amp; spend for Q3 is 40,000 EUR &copy; Acme Inc. <script>alert('xss')</script>\n"
    f"Approved in Lisbon on Friday; see <a href=\"javascript:alert(1)\">the sheet</a>.{MORE}\n\nRegards,\n"
    "Dana Whitfield, head of marketing, who signs every budget change of the quarter herself.\n"
)
PDF = tiny_pdf(["Q3 marketing budget &amp; spend",
                "The marketing budget &amp; spend for Q3 is 40,000 EUR &copy; Acme Inc.",
                "Approved by Dana Whitfield in Lisbon. <script>alert(1)</script>",
                "The team reviews the figures every month with the finance department and adjusts the plan.",
                "Any change above five percent needs a written note from the budget owner and finance.",
                "The note is filed with the quarterly report and read at the next planning meeting.",
                "Questions about the budget go to the finance department before the end of the month."])


def generated(raw: str | bytes, content_type: ContentType | None, title: str | None = None) -> dict:
    prepared = prepare(raw, content_type, title, None)
    extracted = prepared.extracted
    summary = LocalSummarizer().summarize(prepared.title, extracted.text, extracted.content_type, extracted.language)
    meta = summary.metadata
    return {
        "title": prepared.title,
        "summary": summary.summary,
        "phrases": [*meta.get("keyphrases", []), *meta.get("tags", [])],
        "entities": [e["text"] for e in meta.get("entities", [])],
        "content": extracted.text,
    }


def markup_in(out: dict) -> list[str]:
    strings = [out["title"], out["summary"], *out["phrases"], *out["entities"]]
    return [f"{s!r} holds {m!r}" for s in strings for m in MARKUP if m in s]


@pytest.mark.parametrize(("raw", "content_type"), [
    (HTML_PAGE, ContentType.HTML),
    (MARKDOWN_NOTE, ContentType.MARKDOWN),
    (MARKDOWN_NOTE, None),
    (JSON_NOTE, ContentType.JSON),
    (CODE_FILE, ContentType.CODE),
    (MAIL, ContentType.EMAIL),
    (PDF, ContentType.PDF),
], ids=["html", "markdown", "detected", "json", "code", "mail", "pdf"])
def test_generated_title_summary_keyphrases_and_entities_are_plain_text(raw, content_type):
    out = generated(raw, content_type)
    assert markup_in(out) == []
    assert out["summary"]


def test_a_derived_title_decodes_character_references():
    assert generated(MARKDOWN_NOTE, ContentType.MARKDOWN)["title"] == "Q3 marketing budget & spend"
    assert generated(MAIL, ContentType.EMAIL)["title"] == "Q3 budget & spend"


def test_no_keyphrase_is_made_of_a_character_reference():
    phrases = generated(MARKDOWN_NOTE, ContentType.MARKDOWN)["phrases"]
    assert phrases and not [p for p in phrases if "amp" in p.split() or "copy" in p.split()]


def test_a_title_the_client_gives_and_the_content_stay_as_given():
    out = generated(MARKDOWN_NOTE, ContentType.MARKDOWN, title="Budget &amp; <b>spend</b>")
    assert out["title"] == "Budget &amp; <b>spend</b>"
    assert "<script>alert('xss')</script>" in out["content"] and "&amp;" in out["content"]


@pytest.mark.parametrize(("raw", "content_type", "source_url", "title"), [
    ('{"name": "billing-service", "port": 8080}', None, None, "billing-service"),
    ('{"service": {"title": "Billing &amp; invoices"}, "port": 8080}', None, None, "Billing & invoices"),
    ('{"host": "db.internal", "port": 6432, "user": "ro", "sslmode": "require", "pool": 4}', None, None,
     "JSON: host, port, user, sslmode…"),
    ('{"host": "db.internal"}', ContentType.JSON, "https://example.org/conf/staging.json", "staging.json"),
    ("name: billing-service\nreplicas: 3\n", ContentType.CODE, None, "billing-service"),
    ("{\n  key = 1\n}\n", ContentType.CODE, "https://example.org/infra/main.tf", "main.tf"),
    ("import os\n\n\ndef load_settings(path):\n    return os.environ\n", ContentType.CODE, None, "load_settings"),
], ids=["json-name", "json-nested-title", "json-keys", "json-file-name", "yaml-name", "file-name", "first-def"])
def test_a_title_for_json_yaml_and_code_comes_from_a_name_the_content_carries(raw, content_type, source_url, title):
    prepared = prepare(raw, content_type, None, source_url)
    assert prepared.title == title


def test_no_derived_title_is_a_bracket():
    for raw in ('{\n  "a": [1, 2]\n}', "[\n  1\n]", "{\n}\n"):
        title = prepare(raw, None, None, None).title
        assert title.strip("{}[]() \n") and title not in ("{", "[")


# --------------------------------------------------------------------------- item 3: every script's letters

NAMES = [
    ("German", "Appointment at the Bürgeramt Friedrichshain on Monday, then the flat on Weserstraße with Jürgen "
               "Weiß.", ["Bürgeramt Friedrichshain", "Weserstraße", "Jürgen Weiß"]),
    ("French", "Lunch with François Lefèvre near the Gare de Lyon, then a train to Orléans.",
     ["François Lefèvre", "Orléans"]),
    ("Portuguese", "João Gonçalves flies from São Paulo to see Inês in Lisbon.",
     ["João Gonçalves", "São Paulo", "Inês"]),
    ("Spanish", "The parcel is with Señora Muñoz in Málaga, next to the Peña bakery.", ["Muñoz", "Málaga"]),
    ("Polish", "Zofia Wójcik meets him in Łódź, and they drive on to Gdańsk.", ["Zofia Wójcik", "Łódź", "Gdańsk"]),
    ("Turkish", "Dinner with Şule Yıldız and Çağan Öztürk in Kadıköy.", ["Şule Yıldız", "Çağan Öztürk", "Kadıköy"]),
]


@pytest.mark.parametrize(("language", "text", "names"), NAMES, ids=[n[0] for n in NAMES])
def test_entities_keep_every_letter_of_a_name(language, text, names):
    out = generated(text, ContentType.TEXT)
    found = set(out["entities"])
    assert set(names) <= found, f"{language}: {sorted(found)}"
    # no name cut at a letter outside ASCII ("Weserstra", "Pozna", "Gda"): every word found is a word of the text
    text_words = {w.strip(".,;") for w in text.split()}
    assert {w for entity in found for w in entity.split()} <= text_words


@pytest.mark.parametrize(("language", "text", "names"), NAMES, ids=[n[0] for n in NAMES])
def test_keyphrases_keep_every_letter_of_a_word(language, text, names):
    phrases = generated(text, ContentType.TEXT)["phrases"]
    words = {w for phrase in phrases for w in phrase.split()}
    all_words = {w.lower().strip(".,") for w in text.split()}
    assert words <= all_words, f"{language}: {sorted(words - all_words)} are cut words"


def test_bürgeramt_is_one_keyphrase_word_not_rgeramt():
    phrases = generated("Bürgeramt Friedrichshain: the Bürgeramt Friedrichshain opens at 8. Bring the form "
                        "to the Bürgeramt Friedrichshain.", ContentType.TEXT)["phrases"]
    assert "bürgeramt friedrichshain" in phrases
    assert not [p for p in phrases if "rgeramt" in p and "bürgeramt" not in p]
