"""The line chunker: whole lines packed greedily into chunks of at most `max_chars` characters.

raged's granularity (~1800 characters on line boundaries): a raged client's chunk id
`<baseId>:<chunkIndex>` names the same text whoever ingests it, so documents that say
`metadata[CHUNKING_KEY] == "lines"` are cut this way. Every chunk is a slice of the text, so offsets
stay meaningful. Unlike raged, a single line longer than the limit is split too (at a space when
there is one), so no chunk exceeds it.
"""

from __future__ import annotations

from memlane.ingest.chunking.atoms import TextChunk

LINE_CHUNK_MAX_CHARS = 1800


def chunk_lines(text: str, max_chars: int = LINE_CHUNK_MAX_CHARS) -> list[TextChunk]:
    """Pack whole lines greedily into chunks of at most `max_chars`; `text` must be normalised."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    if not text.strip():
        return []
    spans: list[tuple[int, int]] = []
    start: int | None = None  # start of the chunk being filled
    end = 0
    pos = 0
    for line in text.split("\n"):
        line_start, line_end = pos, pos + len(line)
        pos = line_end + 1
        for piece_start, piece_end in _split_long_line(text, line_start, line_end, max_chars):
            if start is not None and piece_end - start > max_chars:
                spans.append((start, end))
                start = None
            if start is None:
                start = piece_start
            end = piece_end
    if start is not None:
        spans.append((start, end))
    return [chunk for s, e in spans if (chunk := _trimmed(text, s, e)) is not None]


def _split_long_line(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    while end - start > max_chars:
        cut = text.rfind(" ", start + 1, start + max_chars + 1)
        cut = cut if cut > start else start + max_chars
        pieces.append((start, cut))
        start = cut
    pieces.append((start, end))
    return pieces


def _trimmed(text: str, start: int, end: int) -> TextChunk | None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return None
    lead = len(piece) - len(piece.lstrip())
    return TextChunk(text=stripped, start_offset=start + lead, end_offset=start + lead + len(stripped))
