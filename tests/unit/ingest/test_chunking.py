from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlane.domain.models import ContentType
from memlane.ingest.chunking import (
    TextChunk,
    chunk_text,
    clean_heading,
    estimate_tokens,
    find_code_units,
    sentence_spans,
)


def assert_invariants(text: str, chunks: list[TextChunk], limit_chars: int) -> None:
    """The properties every chunking must have, whatever the input."""
    previous_start = -1
    covered_until = 0
    for chunk in chunks:
        assert chunk.text == text[chunk.start_offset : chunk.end_offset]
        assert chunk.text.strip(), "no whitespace-only chunks"
        assert chunk.start_offset > previous_start, "start offsets strictly increase"
        assert len(chunk.text) <= limit_chars
        # Everything between the previous chunk's end and this chunk's start is whitespace.
        if chunk.start_offset > covered_until:
            assert not text[covered_until : chunk.start_offset].strip()
        covered_until = max(covered_until, chunk.end_offset)
        previous_start = chunk.start_offset
    assert not text[covered_until:].strip(), "the tail is covered"


def sentence(i: int, words: int = 12) -> str:
    body = " ".join(f"word{i}x{j}" for j in range(words - 1))
    return f"Sentence{i} {body}."


# --------------------------------------------------------------------------- basics


def test_estimate_tokens_is_a_quarter_of_the_length_rounded_up():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 2048) == 512


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t \n"])
def test_empty_or_blank_text_has_no_chunks(text):
    assert chunk_text(text) == []


def test_short_text_is_one_stripped_chunk():
    text = "\n\n  Hello there. A short note.  \n"
    chunks = chunk_text(text)
    assert chunks == [TextChunk("Hello there. A short note.", 4, 30, ())]


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError):
        chunk_text("x", max_tokens=0)
    with pytest.raises(ValueError):
        chunk_text("x", overlap_tokens=-1)


# --------------------------------------------------------------------------- boundaries


def test_paragraphs_are_packed_and_split_at_paragraph_breaks():
    paragraphs = [" ".join(sentence(p * 10 + s, 10) for s in range(3)) for p in range(6)]
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, max_tokens=100, overlap_tokens=0)  # 400 chars per chunk
    assert_invariants(text, chunks, 400)
    # Each paragraph is ~260 chars: one fits, two do not, so every chunk is exactly one paragraph.
    assert [c.text for c in chunks] == paragraphs


def test_a_chunk_never_ends_mid_sentence():
    sentences = [sentence(i, 9) for i in range(40)]
    text = " ".join(sentences)
    chunks = chunk_text(text, max_tokens=64, overlap_tokens=0)
    assert len(chunks) > 5
    assert_invariants(text, chunks, 256)
    for chunk in chunks:
        assert re.match(r"Sentence\d+ ", chunk.text), chunk.text
        assert chunk.text.endswith(".")
    # Without overlap the chunks partition the sentences.
    assert " ".join(c.text for c in chunks) == text


def test_sentence_boundaries_need_an_uppercase_start_and_skip_abbreviations():
    text = "Use e.g. Python for this. version 3.12 is fine. Then stop! (Really.) Dr. Who said “Hi.” 42 is it."
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Use e.g. Python for this. version 3.12 is fine.", "Then stop!", "(Really.)", "Dr. Who said “Hi.”",
        "42 is it.",
    ]  # fmt: skip


def test_cjk_sentences_end_without_a_space():
    text = "今日は晴れ。明日は雨！"
    assert [text[start:end] for start, end in sentence_spans(text)] == ["今日は晴れ。", "明日は雨！"]


def test_list_items_are_separate_units():
    items = [f"- item number {i} with some words" for i in range(30)]
    text = "Shopping list:\n" + "\n".join(items)
    chunks = chunk_text(text, max_tokens=40, overlap_tokens=0)
    assert_invariants(text, chunks, 160)
    for chunk in chunks[1:]:
        assert chunk.text.startswith("- item number ")
        assert chunk.text.endswith("with some words")


def test_an_oversized_sentence_is_split_at_whitespace():
    words = [f"w{i:04d}" for i in range(600)]  # 3,599 chars, no sentence end
    text = " ".join(words)
    chunks = chunk_text(text, max_tokens=100, overlap_tokens=0)
    assert_invariants(text, chunks, 400)
    assert " ".join(c.text for c in chunks) == text  # cut only at spaces
    assert all(len(c.text) >= 300 for c in chunks[:-1])


def test_a_single_huge_word_is_cut_mid_word_as_a_last_resort():
    text = "x" * 1000
    chunks = chunk_text(text, max_tokens=100, overlap_tokens=0)
    assert [(c.start_offset, c.end_offset) for c in chunks] == [(0, 400), (400, 800), (800, 1000)]


# --------------------------------------------------------------------------- headings


DOC = """# Sorting HOW TO

Python lists have a built-in sort method. There is also a sorted function.

## Sorting Basics ¶

A simple ascending sort is very easy. Just call the sorted function.

## Key Functions

Both sort and sorted have a key parameter. It specifies a function to call on each element.

### Operator Module Functions

The operator module has itemgetter. It also has attrgetter.

## Odds and Ends

Sorts are stable. That is all.
"""


def test_heading_path_tracks_levels():
    chunks = chunk_text(DOC, max_tokens=25, overlap_tokens=0)  # 100 chars: one section per chunk
    assert_invariants(DOC, chunks, 100)
    paths = {c.text.splitlines()[0]: c.heading_path for c in chunks if c.text.startswith("#")}
    assert paths == {
        "# Sorting HOW TO": ("Sorting HOW TO",),
        "## Sorting Basics ¶": ("Sorting HOW TO", "Sorting Basics"),
        "## Key Functions": ("Sorting HOW TO", "Key Functions"),
        "### Operator Module Functions": ("Sorting HOW TO", "Key Functions", "Operator Module Functions"),
        "## Odds and Ends": ("Sorting HOW TO", "Odds and Ends"),
    }


def test_a_chunk_continuing_a_section_carries_its_path():
    chunks = chunk_text(DOC, max_tokens=25, overlap_tokens=0)
    continuation = next(c for c in chunks if c.text.startswith("It specifies"))
    assert continuation.heading_path == ("Sorting HOW TO", "Key Functions")


def test_small_sections_are_packed_together_and_headings_never_end_a_chunk():
    chunks = chunk_text(DOC, max_tokens=512)
    assert len(chunks) == 1
    assert chunks[0].text == DOC.strip()
    chunks = chunk_text(DOC, max_tokens=60, overlap_tokens=0)
    assert_invariants(DOC, chunks, 240)
    for chunk in chunks:
        assert not chunk.text.splitlines()[-1].startswith("#"), chunk.text


def test_a_new_heading_starts_a_new_chunk_once_the_chunk_is_half_full():
    intro = " ".join(sentence(i, 10) for i in range(5))  # ~440 chars
    text = f"# Title\n\n{intro}\n\n## Next\n\nShort section."
    chunks = chunk_text(text, max_tokens=200, overlap_tokens=20)  # 800 chars: everything would fit
    assert [c.text for c in chunks] == [f"# Title\n\n{intro}", "## Next\n\nShort section."]
    assert chunks[1].heading_path == ("Title", "Next")


def test_headings_inside_code_fences_are_not_headings():
    text = "# Real\n\n```python\n# just a comment\nx = 1\n```\n\nAfter."
    chunks = chunk_text(text, max_tokens=5, overlap_tokens=0)
    assert all(c.heading_path == ("Real",) for c in chunks)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Key Functions ¶", "Key Functions"),
        ("Key Functions 🔗", "Key Functions"),
        ("Closing hashes ##", "Closing hashes"),
        ("Learning C#", "Learning C#"),
        ("[Linked](#linked) title", "Linked title"),
        ("**Bold** title", "Bold title"),
    ],
)
def test_clean_heading(raw, clean):
    assert clean_heading(raw) == clean


# --------------------------------------------------------------------------- overlap


def test_adjacent_chunks_overlap_by_whole_sentences_of_about_the_overlap_size():
    sentences = [f"Short sentence number {i:03d} is here." for i in range(200)]  # 35 chars each
    text = " ".join(sentences)
    chunks = chunk_text(text, max_tokens=128, overlap_tokens=50)  # 512-char chunks, ~200-char overlap
    assert_invariants(text, chunks, 512)
    for previous, current in zip(chunks, chunks[1:], strict=False):
        overlap = previous.end_offset - current.start_offset
        assert 100 <= overlap <= 300, overlap
        assert current.text.startswith("Short sentence number ")
        # The overlap is the previous chunk's tail, verbatim.
        assert previous.text.endswith(text[current.start_offset : previous.end_offset])


def test_overlap_falls_back_to_a_word_boundary_when_sentences_are_long():
    sentences = [sentence(i, 60) for i in range(12)]  # ~600 chars each
    text = " ".join(sentences)
    chunks = chunk_text(text, max_tokens=256, overlap_tokens=50)
    assert_invariants(text, chunks, 1024)
    for previous, current in zip(chunks, chunks[1:], strict=False):
        overlap = previous.end_offset - current.start_offset
        assert 0 < overlap <= 300
        assert text[current.start_offset - 1].isspace()


def test_no_overlap_across_a_heading():
    body = " ".join(sentence(i, 10) for i in range(6))
    text = f"# A\n\n{body}\n\n# B\n\n{body}"
    chunks = chunk_text(text, max_tokens=200, overlap_tokens=50)
    b_start = text.index("# B")
    assert any(c.start_offset == b_start for c in chunks)
    assert all(not (c.start_offset < b_start < c.end_offset) for c in chunks if c.heading_path == ("B",))


# --------------------------------------------------------------------------- code

PYTHON = '''import os


@decorator
def alpha(a):
    """Alpha."""
    return a + 1


def beta(b):
    return b * 2


class Gamma:
    # A method with a comment above it.
    def method(self):
        return os.getcwd()
'''


def test_code_is_split_at_function_and_class_boundaries():
    chunks = chunk_text(PYTHON, content_type=ContentType.CODE, language="python", max_tokens=15)
    assert_invariants(PYTHON, chunks, 60)
    starts = [c.text.splitlines()[0] for c in chunks]
    assert "@decorator" in starts  # the decorator travels with its function
    assert "def beta(b):" in starts
    assert "class Gamma:" in starts
    by_start = {c.text.splitlines()[0]: c.heading_path for c in chunks}
    assert by_start["@decorator"] == ("alpha",)
    assert by_start["def beta(b):"] == ("beta",)


def test_small_code_units_are_packed_together():
    chunks = chunk_text(PYTHON, content_type=ContentType.CODE, language="python", max_tokens=512)
    assert len(chunks) == 1
    assert chunks[0].text == PYTHON.rstrip()


def test_oversized_function_splits_at_blank_lines_then_lines():
    body = "\n".join(f"    x{i} = {i}" for i in range(30))
    code = f"def big():\n{body}\n\n    return x0\n\n\ndef small():\n    pass\n"
    chunks = chunk_text(code, content_type=ContentType.CODE, language="python", max_tokens=50)
    assert_invariants(code, chunks, 200)
    assert chunks[-1].text == "def small():\n    pass"
    assert chunks[-1].heading_path == ("small",)
    assert all(c.heading_path == ("big",) for c in chunks[:-1])
    # Lines are never cut, and indentation is kept.
    assert all(line.startswith(("def", "    ")) for c in chunks for line in c.text.splitlines() if line)


@pytest.mark.parametrize(
    ("language", "code", "names"),
    [
        ("python", "async def fetch():\n    pass\n\nclass A(B):\n    def m(self): ...\n",
         [("fetch", "function", True), ("A", "class", True), ("m", "function", False)]),
        ("javascript",
         "export default function main() {}\nconst add = (a, b) => a + b;\nexport class Store {\n"
         "  get(key) {\n    return 1;\n  }\n}\nif (x) {\n}\n",
         [("main", "function", True), ("add", "function", True), ("Store", "class", True),
          ("get", "function", False)]),
        ("typescript",
         "export interface User {}\nexport type Id = string;\nexport const f = async (x: number) => x;\n",
         [("User", "type", True), ("Id", "type", True), ("f", "function", True)]),
        ("go",
         "package main\n\ntype Server struct {}\n\nfunc (s *Server) Run() error {\n}\n\nfunc main() {\n}\n",
         [("Server", "type", True), ("Run", "function", True), ("main", "function", True)]),
        ("rust",
         "pub struct Point {}\nimpl Display for Point {\n    fn fmt(&self) {}\n}\n"
         "pub(crate) async fn go() {}\n",
         [("Point", "type", True), ("Display for Point", "impl", True), ("fmt", "function", False),
          ("go", "function", True)]),
        ("java",
         "public class App {\n    public static void main(String[] args) {\n        run(args);\n    }\n}\n",
         [("App", "class", True), ("main", "function", False)]),
        ("ruby", "module Shop\n  class Cart\n    def total\n    end\n  end\nend\n",
         [("Shop", "module", True), ("Cart", "class", False), ("total", "function", False)]),
    ],
)  # fmt: skip
def test_code_units_for_common_languages(language, code, names):
    assert [(u.name, u.kind, u.top_level) for u in find_code_units(code, language)] == names


def test_statements_are_not_mistaken_for_definitions():
    code = "int main(void) {\n    return compute(x);\n    if (ready(x)) {\n    }\n    y = call(z);\n}\n"
    assert [u.name for u in find_code_units(code, "c")] == ["main"]


def test_json_is_chunked_by_lines():
    text = "title: Report\n\n{\n" + ",\n".join(f'  "key{i}": "value {i}"' for i in range(100)) + "\n}"
    chunks = chunk_text(text, content_type=ContentType.JSON, max_tokens=64)
    assert_invariants(text, chunks, 256)
    for chunk in chunks:
        assert all(
            line.strip().startswith(('"', "{", "}", "title")) for line in chunk.text.splitlines() if line
        )


# --------------------------------------------------------------------------- properties and speed

_prose_pieces = st.lists(
    st.sampled_from(
        list("abc XYZ.!?,\n#-*`|1 \t") + ["## ", "\n- ", "```\n", "e.g. ", "¶", "\n\n", "Word. "]
    ),
    max_size=1500,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_prose_pieces,
    max_tokens=st.integers(min_value=1, max_value=200),
    overlap_tokens=st.integers(min_value=0, max_value=80),
)
def test_prose_chunking_invariants(text, max_tokens, overlap_tokens):
    chunks = chunk_text(text, max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    assert_invariants(text, chunks, max_tokens * 4)
    assert (chunks == []) == (not text.strip())


_code_alphabet = st.sampled_from(
    [
        "def f():\n",
        "class C:\n",
        "    ",
        "\n",
        "\n\n",
        "x = 1",
        "@dec\n",
        "# c\n",
        "fn main() {",
        "}",
        " ",
        "y",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(_code_alphabet, max_size=300),
    max_tokens=st.integers(min_value=1, max_value=100),
    language=st.sampled_from(["python", "rust", None, "json"]),
)
def test_code_chunking_invariants(parts, max_tokens, language):
    text = "".join(parts)
    chunks = chunk_text(text, content_type=ContentType.CODE, language=language, max_tokens=max_tokens)
    assert_invariants(text, chunks, max_tokens * 4)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=2000), st.integers(min_value=1, max_value=64))
def test_arbitrary_unicode_keeps_the_invariants(text, max_tokens):
    assert_invariants(text, chunk_text(text, max_tokens=max_tokens, overlap_tokens=10), max_tokens * 4)


def test_half_a_million_characters_chunk_in_well_under_a_second():
    section = (
        "## Section\n\n" + " ".join(sentence(i, 14) for i in range(40)) + "\n\n- a list item\n- another\n\n"
    )
    text = (section * (500_000 // len(section) + 1))[:500_000]
    started = time.perf_counter()
    chunks = chunk_text(text)
    elapsed = time.perf_counter() - started
    assert_invariants(text, chunks, 2048)
    assert elapsed < 2.0, elapsed  # generous for slow CI machines; typically ~0.2 s
