"""Source code: kept byte for byte, with its language (memlane.ingest.languages) and file name."""

from __future__ import annotations

from urllib.parse import urlsplit

from memlane.domain.models import ContentType
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import clean_title
from memlane.ingest.languages import detect_language


def extract_code(raw: str, content_type: ContentType, title: str | None, source_url: str | None) -> Extracted:
    # Code is kept byte for byte (indentation and trailing spaces can matter); only newlines are unified.
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    language = detect_language(text, title=title, source_url=source_url)
    filename = _file_name(source_url)
    return Extracted(
        text=text,
        content_type=content_type,
        title=filename,
        language=language,
        metadata={"language": language} if language else {},
    )


def _file_name(source_url: str | None) -> str | None:
    if not source_url:
        return None
    basename = urlsplit(source_url).path.rstrip("/").rsplit("/", 1)[-1]
    return clean_title(basename) if basename else None
