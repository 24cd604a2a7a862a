"""What chunks are made of: the `TextChunk` a chunker returns, the token estimate that sizes it, and
the *atoms* (pieces never split, each tagged with the strength of the boundary before it) that the
prose and code splitters produce and the packer assembles."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

CHARS_PER_TOKEN = 4  # the spec's estimate; cheap and good enough to size chunks


@dataclass(frozen=True)
class TextChunk:
    text: str
    start_offset: int
    end_offset: int
    heading_path: tuple[str, ...] = ()


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


# Boundary strengths. Prose: a heading line, a new paragraph, a new sentence/list item/line, a word.
WORD, SENTENCE, PARAGRAPH, HEADING = 0, 1, 2, 3
# Code: a line, a line after a blank line, a nested definition (method), a top-level definition.
LINE, BLOCK, NESTED_UNIT, UNIT = 1, 2, 3, 4

# How full a chunk must be (fraction of the limit) before it may end at a boundary of this strength.
# Ending early at a strong boundary beats ending late at a weak one, but not if it wastes most of
# the chunk. Code units always win: a chunk that starts at a function is what code search wants.
PROSE_MIN_FILL = {WORD: 0.0, SENTENCE: 0.0, PARAGRAPH: 0.5, HEADING: 0.25}
CODE_MIN_FILL = {WORD: 0.0, LINE: 0.0, BLOCK: 0.5, NESTED_UNIT: 0.25, UNIT: 0.0}


@dataclass(slots=True)
class Atom:
    start: int
    end: int
    level: int  # strength of the boundary before this atom
    path: tuple[str, ...]  # headings (or code unit names) in force at this atom


def lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line, without its newline."""
    pos = 0
    length = len(text)
    while pos <= length:
        newline = text.find("\n", pos)
        if newline == -1:
            yield pos, length
            return
        yield pos, newline
        pos = newline + 1


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
