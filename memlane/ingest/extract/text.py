"""Plain text and markdown: whitespace normalised, and a title derived from the text itself."""

from __future__ import annotations

import re

import regex

from memlane.domain.models import ContentType
from memlane.ingest.extract.result import Extracted
from memlane.ingest.text import plain_text, shorten

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
    """A label from the first line of an untitled text: its first sentence when that is short,
    else the line cut at a word boundary near LINE_TITLE_MAX_CHARS."""
    for line in text.splitlines():
        line = " ".join(_MD_INLINE_LINK.sub(r"\1", plain_text(line)).strip().lstrip("#>*-• \t").split())
        if _HAS_WORD.search(line):  # not "{", "```" or "---": a bracket names nothing
            end = _SENTENCE_END.search(line)
            if end and 12 <= end.start() + 1 <= LINE_TITLE_MAX_CHARS and end.end() < len(line):
                return line[: end.start() + 1].rstrip(".")
            return shorten(line, LINE_TITLE_MAX_CHARS)
    return None


_HAS_WORD = re.compile(r"[^\W_]")
_SENTENCE_END = regex.compile(r"(?<!\b\p{Lu})(?<!\b(?:Dr|Mr|Ms|St|vs))[.!?](?=\s)")
_FILE_NAME = re.compile(r"^[^\s/\\][^/\\]{0,200}\.[A-Za-z][A-Za-z0-9]{0,4}$")
_FILE_EXTENSIONS = frozenset(("md", "markdown", "txt", "text", "pdf", "html", "htm", "json", "eml", "rst", "org",
                              "csv", "doc", "docx", "odt", "rtf", "log", "note", "notes", "xml", "yaml", "yml"))


def looks_like_file_name(title: str | None) -> bool:
    """"notes.md", "lease.pdf": a name a client sent for want of a title, which the document's
    own heading beats."""
    if not title:
        return False
    title = title.strip()
    return bool(_FILE_NAME.match(title)) and title.rsplit(".", 1)[1].lower() in _FILE_EXTENSIONS




def clean_title(title: str) -> str | None:
    """A title as a client gave it: on one line, within TITLE_MAX_CHARS, otherwise as given."""
    cleaned = " ".join(title.split()).strip(" ¶§🔗")
    return shorten(cleaned, TITLE_MAX_CHARS) if cleaned else None


def derived_title(text: str) -> str | None:
    """A title memlane derives from the content (a heading, a subject, a key): plain text, no
    markup or character references ("Q3 budget &amp; spend" reads "Q3 budget & spend")."""
    cleaned = clean_title(plain_text(text))
    return cleaned if cleaned and _HAS_WORD.search(cleaned) else None


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
    return derived_title(_MD_INLINE_LINK.sub(r"\1", best[1]).replace("**", "").replace("`", ""))


_MD_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def extract_plain(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    text = normalize_whitespace(raw)
    derived = None
    if content_type is ContentType.MARKDOWN:
        derived = _markdown_title(text)
    elif _FIRST_LINE_HEADING.match(text):  # a plain note that opens with a markdown heading
        derived = _markdown_title(text[: text.find("\n") if "\n" in text else len(text)])
    return Extracted(text=text, content_type=content_type, title=derived or first_line_title(text),
                     title_from_heading=derived is not None)


_FIRST_LINE_HEADING = re.compile(r"^\s*#{1,6}[ \t]+\S")
