"""Small text helpers the pure steps share (extraction's titles, the summarizer's fallbacks).
No imports beyond the standard library: the summarizer loads it without the extractors."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """`text` on one line, within `limit` characters: cut at a word when one ends past half the
    limit, with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"
