"""Decoding bytes to text, and guessing the content type from clear signals when none was given."""

from __future__ import annotations

import json
import re

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.languages import CODE_EXTENSIONS, file_extension

_MARKDOWN_EXTENSIONS = frozenset({"md", "markdown", "mdx", "mkd"})
# A page served by one of these is HTML or text, not the script's source.
_SERVER_PAGE_EXTENSIONS = frozenset({"php", "pl", "cgi", "asp", "aspx", "jsp"})


def decode(raw: str | bytes) -> str:
    if isinstance(raw, str):
        return raw
    encoding = "utf-16" if raw.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InvalidInputError("content", f"is not UTF-8 text (bad byte at position {exc.start})") from exc
    sample = text[:10_000]
    controls = sum(1 for char in sample if char < " " and char not in "\t\n\r\f\v")
    if controls > len(sample) // 20:  # decodable, but binary all the same (an image, an archive)
        raise InvalidInputError("content", "looks like binary data, not text")
    return text


_BASE64_PDF_PREFIX = "JVBERi0"  # base64 of "%PDF-"
_DOCTYPE_OR_HTML = re.compile(
    r"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html[\s>])", re.IGNORECASE | re.DOTALL
)
_HTML_SKELETON = re.compile(r"<(?:html|head|body)[\s>]", re.IGNORECASE)
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|article|b|blockquote|body|br|code|dd|div|dl|dt|em|h[1-6]|head|hr|i|img|li|link|main|"
    r"meta|ol|p|pre|section|span|strong|table|tbody|td|th|thead|title|tr|u|ul)\b[^>]*>",
    re.IGNORECASE,
)
_MD_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_MD_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
_MD_LINK = re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")
_MD_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)


def detect(raw: str | bytes, *, title: str | None, source_url: str | None) -> tuple[ContentType, str | bytes]:
    """Guess the content type from clear signals only; anything unclear is plain text."""
    if isinstance(raw, bytes):
        if raw.lstrip()[:5] == b"%PDF-":
            return ContentType.PDF, raw
        raw = decode(raw)
    head = raw.lstrip()[:1024]
    if head.startswith(_BASE64_PDF_PREFIX):
        return ContentType.PDF, raw
    if _DOCTYPE_OR_HTML.match(head) or (head.startswith("<") and _HTML_SKELETON.search(head)):
        return ContentType.HTML, raw
    if head[:1] in ("{", "[") and _parses_as_json_container(raw):
        return ContentType.JSON, raw
    extension = file_extension(title, source_url)
    if raw.startswith("#!") or (extension in CODE_EXTENSIONS and not _is_web_page_url(source_url, title)):
        return ContentType.CODE, raw
    if extension in _MARKDOWN_EXTENSIONS:
        return ContentType.MARKDOWN, raw
    # Markdown first: READMEs often open with an HTML logo block but are markdown all the same.
    if _looks_like_markdown(raw):
        return ContentType.MARKDOWN, raw
    if _looks_like_html_fragment(raw):
        return ContentType.HTML, raw
    return ContentType.TEXT, raw


def _parses_as_json_container(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), dict | list)
    except ValueError:
        return False


def _looks_like_html_fragment(raw: str) -> bool:
    # Markdown may carry the odd inline tag; an HTML fragment is made of them.
    tags = len(_HTML_TAG.findall(raw, 0, 200_000))
    if tags < 3:
        return False
    return raw.lstrip().startswith("<") or tags * 120 >= min(len(raw), 200_000)


def _looks_like_markdown(raw: str) -> bool:
    sample = raw[:200_000]
    if _MD_HEADING.search(sample) or _MD_FENCE.search(sample) or _MD_LINK.search(sample):
        return True
    return len(_MD_LIST_ITEM.findall(sample)) >= 3


def _is_web_page_url(source_url: str | None, title: str | None) -> bool:
    return file_extension(title) is None and file_extension(source_url) in _SERVER_PAGE_EXTENSIONS
