"""How a document may ask to be cut: `metadata[CHUNKING_KEY]`, "lines" (raged items) or
`{"max_tokens": n, "overlap_tokens": m}` (documentation pages, and any save that wants other sizes).

A client chooses it, and every chunk is embedded on the shared queue, so the plan is bounded by
what it costs: **each chunk must advance at least MIN_STEP_TOKENS (128) past the one before**
(max_tokens − overlap_tokens ≥ 128, with max_tokens from 128 to 4096 and the overlap at most half a
chunk). The default plan (512 with 50 of overlap) advances 462 tokens a chunk, so a plan cuts a
text into about 462 / 128 ≈ 3.6 times the default's chunks at most; chunks end at sentence, line
and heading boundaries short of full, which measures at most 4.4 times on prose, code and markdown
of 64,000 characters (tests/security/test_chunking_bounds.py holds 4.5). The lower bound was 32
tokens with any overlap: 35 default chunks of 64,000 characters became 1,043.

A save that asks for more (POST /v3/memory, /v3/memories) answers 400 naming the field; a plan
already stored outside these bounds (an import, a save from before) is not followed: the document
is cut with the host's sizes.
"""

from __future__ import annotations

from typing import Any, TypeGuard

CHUNKING_KEY = "chunking"
MIN_CHUNK_TOKENS, MAX_CHUNK_TOKENS = 128, 4096
MIN_STEP_TOKENS = 128


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def max_overlap(max_tokens: int) -> int:
    return max(0, min(max_tokens // 2, max_tokens - MIN_STEP_TOKENS))


def plan_problem(plan: Any) -> tuple[str, str] | None:
    """(the field under metadata.chunking, what is wrong) for a plan outside the bounds; None when
    it may be followed (or is not a sizes plan at all: "lines", nothing)."""
    if plan is None or plan == "lines":
        return None
    if not isinstance(plan, dict):
        return "", 'must be "lines" or {"max_tokens": n, "overlap_tokens": m}'
    size = plan.get("max_tokens")
    if size is not None and not (_whole(size) and MIN_CHUNK_TOKENS <= size <= MAX_CHUNK_TOKENS):
        return "max_tokens", f"must be a whole number from {MIN_CHUNK_TOKENS} to {MAX_CHUNK_TOKENS}"
    overlap = plan.get("overlap_tokens")
    if overlap is not None:
        bound = max_overlap(size if _whole(size) else 512)
        if not (_whole(overlap) and 0 <= overlap <= bound):
            return "overlap_tokens", (f"must be a whole number from 0 to {bound} (a chunk advances at least "
                                      f"{MIN_STEP_TOKENS} tokens and overlaps at most half its size)")
    return None


def planned_sizes(plan: Any, max_tokens: int, overlap_tokens: int) -> tuple[int, int]:
    """(max_tokens, overlap_tokens) to cut with: the plan's when they are within the bounds, the
    host's (`max_tokens`, `overlap_tokens`) for whatever is not."""
    if not isinstance(plan, dict):
        return max_tokens, overlap_tokens
    size = plan.get("max_tokens")
    if _whole(size) and MIN_CHUNK_TOKENS <= size <= MAX_CHUNK_TOKENS:
        max_tokens = size
    overlap = plan.get("overlap_tokens")
    if _whole(overlap) and 0 <= overlap <= max_overlap(max_tokens):
        overlap_tokens = overlap
    return max_tokens, min(overlap_tokens, max_overlap(max_tokens))
