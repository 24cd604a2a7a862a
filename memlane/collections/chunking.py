"""raged's item text: how an item is normalised before it is stored and cut by the core's line
chunker (`memlane.ingest.chunking.lines`, ~1800-character chunks on line boundaries), which raged
clients rely on: a chunk id `<baseId>:<chunkIndex>` names the same text whoever ingests it.
"""

from __future__ import annotations

from memlane.ingest.chunking import LINE_CHUNK_MAX_CHARS, chunk_lines

MAX_CHUNK_CHARS = LINE_CHUNK_MAX_CHARS

__all__ = ["MAX_CHUNK_CHARS", "chunk_lines", "normalize_item_text"]


def normalize_item_text(text: str) -> str:
    """What is stored and chunked: CRLF folded to LF, surrounding whitespace trimmed (as raged)."""
    return text.replace("\r\n", "\n").strip()
