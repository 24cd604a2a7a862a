"""Prose atoms: sentences, list items, heading lines and fenced code lines, with the heading path in
force at each; a heading is the strongest boundary, then a paragraph break, then a sentence."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memlane.ingest.chunking.atoms import HEADING, PARAGRAPH, SENTENCE, Atom, lines, strip_span

_HEADING_LINE = re.compile(r" {0,3}(#{1,6})[ \t]+(\S.*)")
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ITEM_LINE = re.compile(r"\s*(?:[-*+•]|\d{1,9}[.)])[ \t]+\S|\s*\|")  # list item or table row
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]*_]*(?=\s)|[。！？][」』）]*")
_OPENERS = frozenset("\"'“‘([*_`¿¡«")
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "no", "fig", "eq",
     "approx", "al", "inc", "ltd", "co", "dept"]
)  # fmt: skip
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_CLOSING_HASHES = re.compile(r"\s+#+\s*$")  # "## Title ##" (but not "C#")
_PERMALINK_TAIL = re.compile(r"[\s¶§🔗]+$")


def clean_heading(raw: str) -> str:
    """A heading line's text without markup: '## [Key Functions](#k) ¶' → 'Key Functions'."""
    text = _CLOSING_HASHES.sub("", _LINK.sub(r"\1", raw))
    text = _PERMALINK_TAIL.sub("", text).replace("**", "").replace("__", "")
    return " ".join(text.split())


def prose_atoms(text: str) -> list[Atom]:
    atoms: list[Atom] = []
    headings: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    pending = PARAGRAPH  # strength of the boundary before the next atom
    block_start = -1  # start of the open prose block (paragraph or list item), if any
    block_end = -1
    block_level = PARAGRAPH
    fence: str | None = None

    def flush() -> None:
        nonlocal block_start
        if block_start >= 0:
            for i, (start, end) in enumerate(_sentences(text, block_start, block_end)):
                atoms.append(Atom(start, end, block_level if i == 0 else SENTENCE, path))
            block_start = -1

    for line_start, line_end in lines(text):
        start, end = strip_span(text, line_start, line_end)
        if start == end:  # blank line
            flush()
            pending = PARAGRAPH
            continue
        line = text[line_start:line_end]
        if fence is not None:  # inside a fenced code block: one atom per line, no headings
            atoms.append(Atom(start, end, pending, path))
            pending = SENTENCE
            if line.strip().startswith(fence):
                fence = None
            continue
        fence_match = _FENCE_LINE.match(line)
        if fence_match:
            flush()
            fence = fence_match.group(1)
            atoms.append(Atom(start, end, max(pending, PARAGRAPH), path))
            pending = SENTENCE
            continue
        heading_match = _HEADING_LINE.match(line)
        if heading_match:
            flush()
            level = len(heading_match.group(1))
            title = clean_heading(heading_match.group(2))
            while headings and headings[-1][0] >= level:
                headings.pop()
            if title:
                headings.append((level, title))
            path = tuple(t for _, t in headings)
            atoms.append(Atom(start, end, HEADING, path))
            pending = PARAGRAPH
            continue
        if _ITEM_LINE.match(line) or block_start < 0:
            flush()
            block_start, block_end, block_level = start, end, pending
            pending = SENTENCE
        else:  # a wrapped line continues the open paragraph or list item
            block_end = end
    flush()
    return atoms


def _sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Sentence spans in text[start:end] (which starts and ends with non-whitespace)."""
    for match in _SENTENCE_END.finditer(text, start, end):
        boundary = match.end()
        nxt = boundary
        while nxt < end and text[nxt].isspace():
            nxt += 1
        if nxt >= end:
            break
        if match.group()[0] in "。！？" or (
            _starts_sentence(text[nxt]) and not _is_abbreviation(text, match.start())
        ):
            yield start, boundary
            start = nxt
    yield start, end


def _starts_sentence(char: str) -> bool:
    return char.isupper() or char.isdigit() or char in _OPENERS


def _is_abbreviation(text: str, period: int) -> bool:
    if text[period] != ".":
        return False
    word_start = period
    while word_start > 0 and period - word_start < 8 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:period].lstrip("(\"'").lower()
    # "J. Smith": a single capital letter is an initial, not the end of a sentence.
    return word in _ABBREVIATIONS or (len(word) == 1 and text[period - 1].isupper())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, list item or heading line of prose, as chunking sees them."""
    return [(atom.start, atom.end) for atom in prose_atoms(text)]
