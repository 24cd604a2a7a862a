"""What the embedder reads for a chunk: its text under a head naming where it sits (the document's
title, then its section path), each name once and none the chunk already opens with.

The head gives a chunk its topic when its own text never names it: a paragraph under "Sorting HOW TO ›
Key functions", a turn of a conversation under "Caroline, 8 May 2023". It adds nothing when the chunk
opens with that name, and then it costs: a note saved without a title is titled by its own first
line or its markdown heading (memlane.ingest.pipeline.derive_title), and the chunking gives a chunk
under a heading that heading as its section path, so "# Flat – Weserstraße 58" was embedded as
"Flat – Weserstraße 58 › Flat – Weserstraße 58\\n# Flat – Weserstraße 58\\n…": one line three times,
pulling the note's vector towards its opening words and away from the rest of what it says (the
notes of one person: a paraphrase's note first by the vector leg alone 0.633 with the repeated head,
0.700 without, as plain MiniLM over the note's own text; BENCHMARKS.md, issue 35).

Names are compared by their words (lower case, punctuation and markup aside), so "# Flat – Weserstraße
58" opens with "Flat – Weserstraße 58", and a derived title cut short with "…" still matches the line it
was cut from. The same on every host: the write path (memlane.documents.writer) is the only caller.
"""

from __future__ import annotations

import re

from memlane.domain.models import Chunk

HEAD_SEPARATOR = " › "
_WORD = re.compile(r"\w+", re.UNICODE)
# How much of a chunk's text is read for its opening words: longer than any title (500 characters).
_OPENING_CHARS = 1000


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def head_parts(title: str, heading_path: list[str], content: str) -> list[str]:
    """The names above a chunk that its text does not already give: the title and the section path,
    a name equal to the one before it left out (a title derived from the heading the path starts
    with), then trailing names the chunk opens with left out (its own heading, its first line)."""
    parts: list[str] = []
    for name in (title, *heading_path):
        name = name.strip()
        if name and (not parts or _words(name) != _words(parts[-1])):
            parts.append(name)
    opening = _words(content[:_OPENING_CHARS])
    while parts:
        words = _words(parts[-1])
        if opening[: len(words)] != words:
            break
        parts.pop()
    return parts


def embedding_text(chunk: Chunk) -> str:
    """The text whose embedding is the chunk's vector."""
    head = HEAD_SEPARATOR.join(head_parts(chunk.title, chunk.heading_path, chunk.content))
    return f"{head}\n{chunk.content}" if head else chunk.content
