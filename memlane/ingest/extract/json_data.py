"""JSON: the readable fields first (title, description, text, ...), then the whole document pretty-printed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.extract.code import file_name
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import TITLE_MAX_CHARS, derived_title
from memlane.ingest.text import shorten

_READABLE_KEYS = (
    "title", "name", "description", "summary", "text", "full_text", "body", "content", "message", "author",
)  # fmt: skip
_READABLE_LINES_MAX = 20
_READABLE_VALUE_MAX = 500
_TITLE_KEYS = 4


def extract_json(raw: str, content_type: ContentType, title: str | None, source_url: str | None) -> Extracted:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            "content", f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    lines: list[str] = []
    seen: set[str] = set()
    for key, value in _readable_fields(data):
        line = f"{key}: {shorten(value, _READABLE_VALUE_MAX)}"
        if line not in seen:
            seen.add(line)
            lines.append(line)
        if len(lines) >= _READABLE_LINES_MAX:
            break
    pretty = json.dumps(data, indent=2, ensure_ascii=False)
    text = "\n".join(lines) + "\n\n" + pretty if lines else pretty
    named = _json_title(data)
    title = named or file_name(source_url) or _keys_title(data)
    return Extracted(text=text, content_type=content_type, title=title, title_from_heading=named is not None)


def _readable_fields(data: Any) -> Iterator[tuple[str, str]]:
    """(key, string value) pairs with human-readable keys, anywhere in the structure, in order."""
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str) and str(key).lower() in _READABLE_KEYS and value.strip():
                    yield str(key), value.strip()
            stack.extend(reversed([v for v in node.values() if isinstance(v, dict | list)]))
        elif isinstance(node, list):
            stack.extend(reversed([v for v in node if isinstance(v, dict | list)]))


def _json_title(data: Any) -> str | None:
    """The name the document carries: a top-level title, name or subject, else the first title or
    name anywhere in it."""
    if isinstance(data, dict):
        for key in ("title", "name", "subject"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return derived_title(value)
    for wanted in ("title", "name"):
        for key, value in _readable_fields(data):
            if key.lower() == wanted:
                return derived_title(value)
    return None


def _keys_title(data: Any) -> str:
    """A JSON document that names itself nowhere is labelled by what it holds, never by a bracket:
    "JSON: host, port, dbname…", "JSON list of 3 items"."""
    if isinstance(data, dict) and data:
        keys = [str(k) for k in data][:_TITLE_KEYS]
        return shorten("JSON: " + ", ".join(keys) + ("…" if len(data) > _TITLE_KEYS else ""), TITLE_MAX_CHARS)
    if isinstance(data, list):
        return f"JSON list of {len(data)} item{'' if len(data) == 1 else 's'}"
    return "JSON value"
