"""Source code: kept byte for byte, with its language (memlane.ingest.languages) and a title from
what the code carries: its file name, else a `name`/`title` key (configuration: YAML, TOML), else
its first definition; never its first line ("{", "import os")."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from memlane.domain.models import ContentType
from memlane.ingest.chunking import find_code_units
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import clean_title, derived_title
from memlane.ingest.languages import detect_language


def extract_code(raw: str, content_type: ContentType, title: str | None, source_url: str | None) -> Extracted:
    # Code is kept byte for byte (indentation and trailing spaces can matter); only newlines are unified.
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    language = detect_language(text, title=title, source_url=source_url)
    return Extracted(
        text=text,
        content_type=content_type,
        title=file_name(source_url) or _named_title(text, language),
        language=language,
        metadata={"language": language} if language else {},
    )


def file_name(source_url: str | None) -> str | None:
    """The last part of a URL's path ("config.json"), as a title."""
    if not source_url:
        return None
    basename = urlsplit(source_url).path.rstrip("/").rsplit("/", 1)[-1]
    return clean_title(basename) if basename else None


# A top-level `name:` / `title:` / `name =` line (YAML, TOML, INI, a package manifest).
_NAME_KEY = re.compile(r"""^["']?(?:name|title)["']?\s*[:=]\s*["']?([^"'\n#]{1,120})""", re.MULTILINE | re.IGNORECASE)


def _named_title(text: str, language: str | None) -> str | None:
    head = text[:20_000]
    key = _NAME_KEY.search(head)
    if key and derived_title(key.group(1)):
        return derived_title(key.group(1))
    units = [u for u in find_code_units(head, language) if u.top_level]
    return derived_title(units[0].name) if units else None
