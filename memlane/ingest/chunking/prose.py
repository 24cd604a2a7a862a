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
    reader = _ProseReader(text)
    for line_start, line_end in lines(text):
        reader.read(line_start, line_end)
    reader.flush()
    return reader.atoms


class _ProseReader:
    """`prose_atoms` line by line: blank lines end a block, fenced code is one atom a line,
    headings set the path, and prose lines open or continue a paragraph or list item, whose
    sentences become atoms when it ends."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.atoms: list[Atom] = []
        self.headings: list[tuple[int, str]] = []
        self.path: tuple[str, ...] = ()
        self.pending = PARAGRAPH  # strength of the boundary before the next atom
        self.block_start = -1  # start of the open prose block (paragraph or list item), if any
        self.block_end = -1
        self.block_level = PARAGRAPH
        self.fence: str | None = None

    def read(self, line_start: int, line_end: int) -> None:
        start, end = strip_span(self.text, line_start, line_end)
        line = self.text[line_start:line_end]
        if start == end:  # blank line
            self.flush()
            self.pending = PARAGRAPH
        elif self.fence is not None:  # inside a fenced code block: one atom per line, no headings
            self._add(start, end, self.pending)
            if line.strip().startswith(self.fence):
                self.fence = None
        elif fence_match := _FENCE_LINE.match(line):
            self.flush()
            self.fence = fence_match.group(1)
            self._add(start, end, max(self.pending, PARAGRAPH))
        elif heading_match := _HEADING_LINE.match(line):
            self.flush()
            self._enter_heading(len(heading_match.group(1)), clean_heading(heading_match.group(2)))
            self._add(start, end, HEADING)
            self.pending = PARAGRAPH
        elif _ITEM_LINE.match(line) or self.block_start < 0:
            self.flush()
            self.block_start, self.block_end, self.block_level = start, end, self.pending
            self.pending = SENTENCE
        else:  # a wrapped line continues the open paragraph or list item
            self.block_end = end

    def _add(self, start: int, end: int, level: int) -> None:
        """One atom at the current path; the next one follows it at sentence strength."""
        self.atoms.append(Atom(start, end, level, self.path))
        self.pending = SENTENCE

    def _enter_heading(self, level: int, title: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        if title:
            self.headings.append((level, title))
        self.path = tuple(t for _, t in self.headings)

    def flush(self) -> None:
        """The open prose block's sentences as atoms (the first at the block's strength)."""
        if self.block_start >= 0:
            for i, (start, end) in enumerate(_sentences(self.text, self.block_start, self.block_end)):
                self.atoms.append(Atom(start, end, self.block_level if i == 0 else SENTENCE, self.path))
            self.block_start = -1


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
