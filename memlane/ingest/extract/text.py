"""Plain text and markdown: whitespace normalised, and a title derived from the text itself."""

from __future__ import annotations

import re

from memlane.domain.models import ContentType
from memlane.ingest.extract.result import Extracted
from memlane.ingest.text import shorten

TITLE_MAX_CHARS = 200  # a derived title is a label, not content
LINE_TITLE_MAX_CHARS = 80  # a title made from the first line of plain text

_TRAILING_SPACE = re.compile(r"[ \t\f\v]+$", re.MULTILINE)
_MANY_NEWLINES = re.compile(r"\n{3,}")


def normalize_whitespace(text: str) -> str:
    """Unify newlines, drop trailing spaces, keep at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _TRAILING_SPACE.sub("", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip("\n")


def first_line_title(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().lstrip("#>*-• \t").strip()
        if line:
            return shorten(line, LINE_TITLE_MAX_CHARS)
    return None




def clean_title(title: str) -> str | None:
    cleaned = " ".join(title.split()).strip(" ¶§🔗")
    return shorten(cleaned, TITLE_MAX_CHARS) if cleaned else None


_MD_TITLE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


def _markdown_title(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for match in _MD_TITLE.finditer(text, 0, 50_000):
        level = len(match.group(1))
        if best is None or level < best[0]:
            best = (level, match.group(2))
        if level == 1:
            break
    if best is None:
        return None
    return clean_title(_MD_INLINE_LINK.sub(r"\1", best[1]).replace("**", "").replace("`", ""))


_MD_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def extract_plain(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    text = normalize_whitespace(raw)
    derived = _markdown_title(text) if content_type is ContentType.MARKDOWN else None
    return Extracted(text=text, content_type=content_type, title=derived or first_line_title(text))
