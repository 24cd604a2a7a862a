"""Small text helpers the pure steps share (extraction's titles, the summarizer's fallbacks).
No imports beyond the standard library: the summarizer loads it without the extractors."""

from __future__ import annotations

import html
import re


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


# What generation reads (titles, summaries, keyphrases, entities): text with no markup. A note may
# carry HTML (pasted from a page, a mail's signature) and character references ("&amp;"); what is
# generated from it is shown as plain text in the web app, the graph, MCP and context packs, so the
# markup must not travel into it. The content itself is stored and shown as the client sent it.
_SCRIPT_OR_STYLE = re.compile(r"<(script|style|noscript|template)\b[^>]*>.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
# Links a page can run (`javascript:`), or that carry a page inside them, say nothing a person reads.
_SCRIPT_LINK = re.compile(r"\b(?:javascript|vbscript|data):[^\s()\]\"'>]*(?:\([^)\s]*\))?", re.IGNORECASE)
_MD_SCRIPT_LINK = re.compile(r"\]\(\s*(?:javascript|vbscript|data):[^\s()]*(?:\([^)\s]*\))?[^)]*\)", re.IGNORECASE)


def plain_text(text: str) -> str:
    """`text` without HTML: scripts and styles dropped with their content, comments and tags
    removed, character references decoded (once: "&amp;lt;" reads "&lt;"), script links dropped.
    Markdown stays markdown; whitespace is left as it was except where a tag stood."""
    if "<" in text:
        text = _strip_tags(text)
    if "&" in text:
        text = html.unescape(text)
        if "<" in text:  # "&lt;script&gt;" decoded is markup too
            text = _strip_tags(text)
    if ":" in text:
        text = _MD_SCRIPT_LINK.sub("]()", text)
        text = _SCRIPT_LINK.sub("", text)
    return text


def _strip_tags(text: str) -> str:
    text = _SCRIPT_OR_STYLE.sub(" ", text)
    text = _COMMENT.sub(" ", text)
    return _TAG.sub(" ", text)
