"""Chunking (spec §3.4): split extracted text into pieces of about `max_tokens` for embedding.

Every chunk is a slice of the source text (`text[start_offset:end_offset]`), so a search hit can
always be located in the document. The text is first cut into *atoms* — the smallest pieces that
are never split (a sentence, a list item, a heading line; for code, a line) — each tagged with the
strength of the boundary before it. Atoms are then packed greedily; when a chunk is full it ends at
the strongest boundary that still leaves it reasonably full (a heading before a paragraph break
before a sentence break). One pass over the text and a bounded look-back per chunk keep it linear.

Prose chunks overlap by about `overlap_tokens`: the next chunk starts at a sentence (or at least a
word) boundary near the end of the previous one, never across a heading. Code is split at
function/class boundaries and does not overlap.

Modules: `atoms` (chunks, atoms, token estimate), `prose` and `code` (the two atom splitters),
`packing` (atoms into chunks), `lines` (raged's line chunker).
"""

from __future__ import annotations

from memlane.domain.chunking_plan import CHUNKING_KEY, MAX_CHUNK_TOKENS, MIN_CHUNK_TOKENS, planned_sizes
from memlane.domain.models import ContentType, Document
from memlane.ingest.chunking.atoms import (
    CHARS_PER_TOKEN,
    CODE_MIN_FILL,
    HEADING,
    PROSE_MIN_FILL,
    TextChunk,
    estimate_tokens,
)
from memlane.ingest.chunking.code import CodeUnit, code_atoms, find_code_units, unit_patterns
from memlane.ingest.chunking.lines import LINE_CHUNK_MAX_CHARS, chunk_lines
from memlane.ingest.chunking.packing import pack, split_oversized
from memlane.ingest.chunking.prose import clean_heading, prose_atoms, sentence_spans

__all__ = [
    "CHARS_PER_TOKEN",
    "CHUNKING_KEY",
    "LINE_CHUNK_MAX_CHARS",
    "MAX_CHUNK_TOKENS",
    "MIN_CHUNK_TOKENS",
    "CodeUnit",
    "TextChunk",
    "chunk_document",
    "chunk_lines",
    "chunk_text",
    "clean_heading",
    "estimate_tokens",
    "find_code_units",
    "sentence_spans",
]

# A document may say how it is cut, in metadata[CHUNKING_KEY], so that every path that writes it
# (the first write, a retry from the job queue, reindex) cuts it the same way: "lines" for raged
# items (their chunk ids name ~1800-character line slices), or {"max_tokens": n,
# "overlap_tokens": m} for documentation pages (the docset's setting) and saves that ask for other
# sizes, within the bounds of memlane.domain.chunking_plan (at most ~3.6 times the default's chunks).


def chunk_document(doc: Document, max_tokens: int, overlap_tokens: int) -> list[TextChunk]:
    """Cut a document by its own chunking (CHUNKING_KEY), else by content type with the given
    sizes. A plan outside the bounds is not followed: the metadata may come from a client."""
    plan = doc.metadata.get(CHUNKING_KEY)
    if plan == "lines":
        return chunk_lines(doc.content)
    max_tokens, overlap_tokens = planned_sizes(plan, max_tokens, overlap_tokens)
    language = doc.language if doc.content_type == ContentType.CODE else None
    return chunk_text(
        doc.content,
        content_type=doc.content_type,
        language=language,
        max_tokens=max_tokens,
        overlap_tokens=overlap_tokens,
    )


def chunk_text(
    text: str,
    *,
    content_type: ContentType = ContentType.TEXT,
    language: str | None = None,
    max_tokens: int = 512,
    overlap_tokens: int = 50,
) -> list[TextChunk]:
    """Split `text` into chunks of at most `max_tokens` (estimated) that are slices of `text`."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if overlap_tokens < 0:
        raise ValueError("overlap_tokens must not be negative")
    if not text.strip():
        return []
    limit = max_tokens * CHARS_PER_TOKEN
    if content_type in (ContentType.CODE, ContentType.JSON):
        patterns = [] if content_type is ContentType.JSON else unit_patterns(language)
        atoms = split_oversized(text, code_atoms(text, patterns), limit)
        return pack(text, atoms, limit, CODE_MIN_FILL, eager_level=None, overlap=0)
    # An overlap as long as the chunk would make no progress: at most half a chunk is repeated.
    overlap = min(overlap_tokens, max_tokens // 2) * CHARS_PER_TOKEN
    # Leave room for the overlap in front of a piece of an oversized sentence.
    piece_limit = max(limit - overlap, limit // 2) if overlap else limit
    atoms = split_oversized(text, prose_atoms(text), piece_limit)
    return pack(text, atoms, limit, PROSE_MIN_FILL, eager_level=HEADING, overlap=overlap)
