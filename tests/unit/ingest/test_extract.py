from __future__ import annotations

import base64
import json

import pytest

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.extract import detect_language, extract, normalize_whitespace


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A minimal valid PDF with one Helvetica text line per string, one page per list."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    contents = []
    for lines in pages:
        shown = b" ".join(b"(" + line.encode("latin-1") + b") '" for line in lines)
        stream = b"BT /F1 12 Tf 72 720 Td 14 TL " + shown + b" ET"
        contents.append(add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"))
    pages_id = len(objects) + len(pages) + 1
    page_ids = [
        add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> "
            b"/Contents %d 0 R >>" % (pages_id, font, content)
        )
        for content in contents
    ]
    kids = b" ".join(b"%d 0 R" % page for page in page_ids)
    assert add(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % len(page_ids)) == pages_id
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    info = add(b"<< /Title (" + title.encode("latin-1") + b") >>") if title else None
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


# --------------------------------------------------------------------------- plain text


def test_text_whitespace_is_normalised():
    raw = "Title line   \r\n\r\n\r\n\r\nSecond paragraph\t \r\nstill second\n\n\n"
    result = extract(raw, ContentType.TEXT)
    assert result.text == "Title line\n\nSecond paragraph\nstill second"
    assert result.title == "Title line"
    assert result.content_type is ContentType.TEXT


def test_long_first_line_title_is_shortened_at_a_word():
    line = "word " * 40
    result = extract(line + "\nmore", ContentType.NOTE)
    assert result.title is not None
    assert len(result.title) <= 80
    assert result.title.endswith("…")
    assert result.title.startswith("word word")


def test_explicit_title_wins():
    assert extract("# Heading\n\nBody", ContentType.MARKDOWN, title="  Mine  ").title == "Mine"


def test_markdown_title_is_the_top_heading():
    raw = "Intro line\n\n## Second level\n\n# Top Level Title #\n\nBody"
    assert extract(raw, ContentType.MARKDOWN).title == "Top Level Title"


@pytest.mark.parametrize("content_type", [ContentType.IMAGE, ContentType.VIDEO, ContentType.TWEET])
def test_image_video_and_tweet_text_passes_through(content_type):
    result = extract("Text   \n\n\n\nfrom OCR", content_type)
    assert result.text == "Text\n\nfrom OCR"
    assert result.content_type is content_type


def test_normalize_whitespace_removes_nul_and_lone_carriage_returns():
    assert normalize_whitespace("a\x00b\rc  \n\n\n\nd") == "ab\nc\n\nd"


@pytest.mark.parametrize("raw", ["", "   \n\t  "])
def test_empty_content_is_rejected(raw):
    with pytest.raises(InvalidInputError) as info:
        extract(raw, ContentType.TEXT)
    assert info.value.field == "content"


def test_undecodable_bytes_are_rejected_naming_content():
    with pytest.raises(InvalidInputError) as info:
        extract(b"\xff\xfe\xfa\x80 not utf8" + bytes(range(128, 160)))
    assert info.value.field == "content"
    with pytest.raises(InvalidInputError, match="not UTF-8"):
        extract(b"abc \x80\x81", ContentType.TEXT)


def test_binary_that_happens_to_decode_is_rejected():
    with pytest.raises(InvalidInputError, match="binary"):
        extract(bytes(range(0, 32)) * 10 + b"abc")


def test_utf8_bytes_with_bom_are_decoded():
    assert extract("\ufeffcafé".encode(), ContentType.TEXT).text == "café"


def test_trimmed_to_max_chars_at_a_word_and_flagged():
    result = extract("alpha beta gamma delta", ContentType.TEXT, max_chars=13)
    assert result.text == "alpha beta"
    assert result.metadata == {"truncated": True}


# --------------------------------------------------------------------------- HTML

ARTICLE_PAGE = """<!DOCTYPE html>
<html><head><title>Sorting HOW TO — Python docs</title>
<script>var tracking = "SCRIPT_TEXT";</script><style>.x { color: red }</style></head>
<body>
<header><a href="/">Home</a> HEADER_TEXT</header>
<nav><ul><li><a href="/a">NAV_TEXT</a></li></ul></nav>
<div role="navigation">ROLE_NAV_TEXT</div>
<main>
  <article>
    <h1>Sorting HOW TO<a class="headerlink" href="#sorting" title="Permalink">¶</a></h1>
    <p>Python lists have a <strong>built-in</strong>
       <a href="../library/stdtypes.html#list.sort">list.sort()</a> method that sorts <em>in place</em>.</p>
    <h2 id="key">Key Functions<a class="headerlink" href="#key">#</a></h2>
    <ul><li>first item</li><li>second item</li></ul>
    <div class="highlight-python3"><div class="highlight">
<pre><span class="n">sorted</span>(data, key=str.lower)
</pre></div></div>
    <table><tr><th>name</th><th>value</th></tr><tr><td>a</td><td>1</td></tr></table>
    <p>See <a href="https://example.com/guide">the guide</a>.<img src="data:image/png;base64,AAAA" alt=""></p>
  </article>
  <aside>ASIDE_TEXT</aside>
  <form><input name="email"><button>SUBSCRIBE_TEXT</button></form>
</main>
<footer>FOOTER_TEXT</footer>
<noscript>NOSCRIPT_TEXT</noscript>
</body></html>"""


def test_html_main_content_becomes_markdown():
    result = extract(ARTICLE_PAGE, source_url="https://docs.python.org/3/howto/sorting.html")
    assert result.content_type is ContentType.HTML
    assert result.title == "Sorting HOW TO"
    text = result.text
    assert text.startswith("# Sorting HOW TO\n\n")
    assert "## Key Functions\n" in text
    assert "**built-in**" in text and "*in place*" in text
    # Relative links are resolved against the page; absolute ones kept.
    assert "[list.sort()](https://docs.python.org/3/library/stdtypes.html#list.sort)" in text
    assert "[the guide](https://example.com/guide)" in text
    assert "- first item\n- second item" in text
    assert "```python\nsorted(data, key=str.lower)\n```" in text
    assert "| name | value |\n| --- | --- |\n| a | 1 |" in text
    for chrome in ("SCRIPT_TEXT", "HEADER_TEXT", "NAV_TEXT", "ROLE_NAV_TEXT", "ASIDE_TEXT", "SUBSCRIBE_TEXT",
                   "FOOTER_TEXT", "NOSCRIPT_TEXT", "color: red"):  # fmt: skip
        assert chrome not in text
    assert "¶" not in text and "](#" not in text
    assert "base64" not in text
    assert "\n\n\n" not in text


def test_html_without_main_uses_the_body_and_title_tag():
    html = (
        "<html><head><title>Page Title</title></head>"
        "<body><p>Just a paragraph.</p><footer>F</footer></body></html>"
    )
    result = extract(html)
    assert result.text == "Just a paragraph."
    assert result.title == "Page Title"


def test_an_article_header_is_kept_but_the_site_header_is_not():
    html = (
        "<html><body><header>SITE</header><article><header><h1>Post title</h1><p>By Ada</p></header>"
        "<p>Body text.</p></article></body></html>"
    )
    assert extract(html).text == "# Post title\n\nBy Ada\n\nBody text."


def test_docusaurus_zero_width_anchor_and_mkdocs_section_sign_are_dropped():
    html = (
        '<main><h2>Install<a href="#install" class="hash-link" aria-label="Direct link">\u200b</a></h2>'
        '<h3>Usage<a href="#usage">§</a></h3><p>Run it.</p></main>'
    )
    assert extract(html, ContentType.HTML).text == "## Install\n\n### Usage\n\nRun it."


def test_a_page_wrapped_in_a_form_keeps_its_content():
    html = "<html><body><form id='aspnet'><h1>Report</h1><p>Quarterly numbers.</p></form></body></html>"
    assert extract(html).text == "# Report\n\nQuarterly numbers."


def test_html_with_only_scripts_has_no_text():
    with pytest.raises(InvalidInputError, match="no text after extraction"):
        extract("<html><body><script>alert(1)</script><nav>menu</nav></body></html>")


def test_html_is_trimmed_to_max_chars():
    html = "<html><body><p>" + "word " * 1000 + "</p></body></html>"
    result = extract(html, max_chars=100)
    assert len(result.text) <= 100
    assert result.metadata["truncated"] is True


# --------------------------------------------------------------------------- code


@pytest.mark.parametrize(
    ("code", "title", "source_url", "language"),
    [
        ("x = 1\n", "script.py", None, "python"),
        ("x = 1\n", None, "https://raw.githubusercontent.com/o/r/main/src/app.ts?token=1", "typescript"),
        ("#!/usr/bin/env python3\nprint(1)\n", None, None, "python"),
        ("#!/bin/bash\necho hi\n", None, None, "bash"),
        ('package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n', None, None, "go"),
        ('use std::io;\n\nfn main() {\n    let mut s = String::new();\n    println!("{}", s);\n}\n',
         None, None, "rust"),
        ("const express = require('express');\nconst app = express();\napp.get('/', (req, res) => {\n"
         "  res.send('hi');\n});\n", None, None, "javascript"),
        ('import os\n\ndef main():\n    print(os.getcwd())\n\nif __name__ == "__main__":\n    main()\n', None,
         None, "python"),
    ],
)  # fmt: skip
def test_code_language_detection(code, title, source_url, language):
    result = extract(code, ContentType.CODE, title=title, source_url=source_url)
    assert result.language == language
    assert result.metadata == {"language": language}


def test_code_without_any_signal_has_no_language():
    result = extract("hello world this is not really code", ContentType.CODE)
    assert result.language is None
    assert result.metadata == {}


def test_code_is_kept_exactly_except_newlines():
    code = "def f():  \r\n    return 1   \r\n\r\n\r\n\r\n# end  "
    result = extract(code, ContentType.CODE, title="f.py", source_url="https://example.com/src/f.py")
    assert result.text == "def f():  \n    return 1   \n\n\n\n# end  "
    assert result.title == "f.py"


def test_code_is_detected_from_a_file_extension_or_shebang():
    assert extract("fn main() {}", source_url="https://example.com/main.rs").content_type is ContentType.CODE
    assert extract("fn main() {}", title="main.rs").language == "rust"
    assert extract("#!/usr/bin/env node\nconsole.log(1)").content_type is ContentType.CODE
    # A page served by PHP is not PHP source, and a title with words is not a file name.
    assert extract("Some text", source_url="https://example.com/index.php").content_type is ContentType.TEXT
    assert extract("Some text", title="My notes about main.py").content_type is ContentType.TEXT


def test_detect_language_is_public():
    assert detect_language("x", title="Dockerfile") == "docker"
    assert detect_language("<?php echo 1;") == "php"


# --------------------------------------------------------------------------- JSON


def test_json_readable_fields_come_first_then_pretty_json():
    data = {"id": 7, "title": "Launch plan", "meta": {"author": "Ada", "tags": ["x"]},
            "items": [{"name": "Step one", "description": "Do the thing"}]}  # fmt: skip
    result = extract(json.dumps(data))
    assert result.content_type is ContentType.JSON
    assert result.title == "Launch plan"
    header, pretty = result.text.split("\n\n", 1)
    assert header.splitlines() == [
        "title: Launch plan",
        "author: Ada",
        "name: Step one",
        "description: Do the thing",
    ]
    assert json.loads(pretty) == data
    assert pretty == json.dumps(data, indent=2, ensure_ascii=False)


def test_json_without_readable_fields_is_just_pretty_printed():
    result = extract('[1, 2, {"ü": true}]', ContentType.JSON)
    assert result.text == '[\n  1,\n  2,\n  {\n    "ü": true\n  }\n]'
    assert result.title == "JSON list of 3 items"  # what it holds, never its bracket


def test_invalid_json_names_the_problem():
    with pytest.raises(InvalidInputError, match=r"^content: is not valid JSON: Expecting") as info:
        extract('{"a": }', ContentType.JSON)
    assert info.value.field == "content"


def test_json_looking_text_that_does_not_parse_is_text():
    assert extract("[draft] my plan").content_type is ContentType.TEXT


# --------------------------------------------------------------------------- PDF


def test_pdf_pages_are_joined_with_offsets():
    pdf = make_pdf([["Quarterly Report", "Revenue grew."], [], ["Second page text."]], title="Q3 Report")
    result = extract(pdf)
    assert result.content_type is ContentType.PDF
    assert result.text == "Quarterly Report\nRevenue grew.\n\nSecond page text."
    assert result.page_offsets == [0, 30, 32]  # the empty page begins where the first one ended
    assert result.text[32:].startswith("Second page text.")
    assert result.metadata == {"pages": 3}
    assert result.title == "Q3 Report"


def test_pdf_as_base64_string_and_title_from_first_line():
    pdf = make_pdf([["First line is the title"], ["More"]])
    for raw in (
        base64.b64encode(pdf).decode(),
        "data:application/pdf;base64," + base64.b64encode(pdf).decode(),
    ):
        result = extract(raw, ContentType.PDF)
        assert result.text == "First line is the title\n\nMore"
        assert result.page_offsets == [0, 25]
        assert result.title == "First line is the title"
    assert extract(base64.b64encode(pdf).decode()).content_type is ContentType.PDF  # detected


@pytest.mark.parametrize(
    "raw", [b"%PDF-1.4 garbage", "not base64 at all!", base64.b64encode(b"hello").decode()]
)
def test_broken_pdf_is_invalid_input(raw):
    with pytest.raises(InvalidInputError) as info:
        extract(raw, ContentType.PDF)
    assert info.value.field == "content"


def test_pdf_without_text_is_rejected():
    with pytest.raises(InvalidInputError, match="no text after extraction"):
        extract(make_pdf([[]]), ContentType.PDF)


# --------------------------------------------------------------------------- email

EMAIL = """From: Ada Lovelace <ada@example.com>
To: team@example.com
Subject: Engine notes
Date: Tue, 05 Mar 2024 10:00:00 +0000
Content-Type: text/plain; charset=utf-8

Hi team,

The analytical engine is ready.
"""


def test_email_body_subject_and_headers():
    result = extract(EMAIL, ContentType.EMAIL)
    assert result.text == "Hi team,\n\nThe analytical engine is ready."
    assert result.title == "Engine notes"
    assert result.metadata == {
        "author": "Ada Lovelace <ada@example.com>",
        "date": "2024-03-05T10:00:00+00:00",
        "subject": "Engine notes",
    }


def test_multipart_email_prefers_plain_and_falls_back_to_html():
    html_only = (
        "From: bob@example.com\nSubject: Newsletter\nMIME-Version: 1.0\n"
        'Content-Type: multipart/alternative; boundary="b"\n\n'
        "--b\nContent-Type: text/html; charset=utf-8\n\n"
        "<html><body><h1>News</h1><p>Item one.</p></body></html>\n"
        "--b--\n"
    )
    result = extract(html_only, ContentType.EMAIL)
    assert result.text == "# News\n\nItem one."
    assert result.title == "Newsletter"


def test_email_that_is_not_rfc822_passes_through():
    result = extract("Just some text I forwarded.\n\n\n\nBye", ContentType.EMAIL)
    assert result.text == "Just some text I forwarded.\n\nBye"
    assert result.metadata == {}


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("<!doctype html><html><body><p>Hi</p></body></html>", ContentType.HTML),
        ("<!-- saved --><html><p>Hi</p></html>", ContentType.HTML),
        ("<div><p>One</p><p>Two</p><a href='x'>three</a></div>", ContentType.HTML),
        ('{"a": 1}', ContentType.JSON),
        ("[1, 2]", ContentType.JSON),
        ("# Heading\n\nSome text", ContentType.MARKDOWN),
        ("Text with a [link](https://example.com).", ContentType.MARKDOWN),
        ("Steps:\n- one\n- two\n- three", ContentType.MARKDOWN),
        ("```\ncode\n```", ContentType.MARKDOWN),
        ('<p align="center"><img src="logo.png"></p>\n\n# Project\n\nA **tool**.\n', ContentType.MARKDOWN),
        ("Plain words. #hashtag and a - dash.", ContentType.TEXT),
        ("Use <br> tags in HTML sparingly, I think.", ContentType.TEXT),
    ],
)
def test_content_type_detection(raw, expected):
    assert extract(raw).content_type is expected
