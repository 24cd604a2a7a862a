"""Content extraction (spec §3.2): turn what a client saved into the clean text that is chunked and
indexed, plus what can be learned on the way (title, programming language, page offsets, ...).

Pure functions: no network, no files. Everything a client can get wrong raises
`InvalidInputError` naming the `content` field, so the API answers 400 instead of 500.

One module per format family: `text` (plain text, markdown, titles), `html`, `code`, `json_data`,
`pdf`, `mail`; `detect` decodes bytes and guesses the content type; the language table and
detection live in `memlane.ingest.languages`.
"""

from __future__ import annotations

from collections.abc import Callable

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.extract.code import extract_code
from memlane.ingest.extract.detect import decode, detect
from memlane.ingest.extract.html import extract_html, html_to_markdown
from memlane.ingest.extract.json_data import extract_json
from memlane.ingest.extract.mail import extract_email
from memlane.ingest.extract.pdf import ScannedPdfError, extract_pdf
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import (
    LINE_TITLE_MAX_CHARS,
    TITLE_MAX_CHARS,
    clean_title,
    extract_plain,
    looks_like_file_name,
    normalize_whitespace,
)
from memlane.ingest.languages import detect_language, normalize_language

__all__ = [
    "DEFAULT_MAX_CHARS",
    "LINE_TITLE_MAX_CHARS",
    "TITLE_MAX_CHARS",
    "Extracted",
    "ScannedPdfError",
    "detect_language",
    "extract",
    "html_to_markdown",
    "looks_like_file_name",
    "normalize_language",
    "normalize_whitespace",
]

DEFAULT_MAX_CHARS = 500_000


def extract(
    raw: str | bytes,
    content_type: ContentType | None = None,
    *,
    title: str | None = None,
    source_url: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    title_is_name: bool = False,
) -> Extracted:
    """Extract clean text from `raw`. `content_type` None means: detect it from the content.

    An explicit, non-blank `title` wins over a derived one; it (and `source_url`) also serve as file
    names for detecting code and its language.
    """
    given_title = clean_title(title) if title else None
    if content_type is None:
        content_type, raw = detect(raw, title=title, source_url=source_url)

    if content_type is ContentType.PDF:
        result = extract_pdf(raw)
    else:
        text = decode(raw)  # already a str unless bytes came with an explicit type
        if not text.strip():
            raise InvalidInputError("content", "is empty")
        result = _EXTRACTORS[content_type](text, content_type, title, source_url)

    text, truncated = _trim(result.text, max_chars)
    if not text.strip():
        raise InvalidInputError("content", "has no text after extraction")
    metadata = dict(result.metadata)
    if truncated:
        metadata["truncated"] = True
    page_offsets = result.page_offsets
    if page_offsets is not None and truncated:
        page_offsets = [offset for offset in page_offsets if offset < len(text)] or [0]
    # A file name ("notes.md") is what a client sends for want of a title: the document's own
    # heading beats it. Code keeps its file name (that is how code is known).
    keep_given = given_title and (title_is_name or not (
        result.title_from_heading and content_type is not ContentType.CODE and looks_like_file_name(given_title)))
    return Extracted(
        text=text,
        content_type=content_type,
        title=given_title if keep_given else result.title,
        title_from_heading=result.title_from_heading and not keep_given,
        language=result.language,
        metadata=metadata,
        page_offsets=page_offsets,
    )


def _trim(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut to `max_chars`, at a whitespace near the limit when there is one."""
    if len(text) <= max_chars:
        return text, False
    cut = text[:max_chars]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= max_chars - 1000 and space > 0:
        cut = cut[:space]
    return cut.rstrip(), True


_EXTRACTORS: dict[ContentType, Callable[[str, ContentType, str | None, str | None], Extracted]] = {
    ContentType.TEXT: extract_plain,
    ContentType.MARKDOWN: extract_plain,
    ContentType.NOTE: extract_plain,
    ContentType.TWEET: extract_plain,
    ContentType.IMAGE: extract_plain,  # locally, the client sends the already-extracted text
    ContentType.AUDIO: extract_plain,  # likewise: the transcript
    ContentType.VIDEO: extract_plain,
    ContentType.HTML: extract_html,
    ContentType.CODE: extract_code,
    ContentType.JSON: extract_json,
    ContentType.EMAIL: extract_email,
}
