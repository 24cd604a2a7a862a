"""A JSON document summarised for a person: its top-level keys and what they hold, and its keys and
string values as words for tags and entities (memlane.ingest.summarize)."""

from __future__ import annotations

import json
from typing import Any

from memlane.ingest.text import shorten


def json_data(text: str) -> Any:
    """The JSON document inside extracted JSON text (its readable lines come first)."""
    for start in (0, text.find("\n\n{") + 2, text.find("\n\n[") + 2):
        if start < 0 or (start == 1 and text[:1] not in "{["):
            continue
        try:
            return json.loads(text[start:])
        except ValueError:
            continue
    return None


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | str) and str(value).strip():
        return " ".join(str(value).split())
    return None


def _describe(value: Any, depth: int = 0) -> str:
    scalar = _scalar(value)
    if scalar is not None:
        return shorten(scalar, 80)
    if isinstance(value, dict):
        if depth >= 1:
            return "{" + ", ".join(str(k) for k in list(value)[:5]) + ("…" if len(value) > 5 else "") + "}"
        parts = [f"{k} {_describe(v, depth + 1)}" for k, v in list(value.items())[:4]]
        return "(" + ", ".join(parts) + ("…" if len(value) > 4 else "") + ")"
    if isinstance(value, list):
        items = [s for s in (_scalar(v) for v in value[:4]) if s is not None]
        if items and len(items) == min(len(value), 4):
            return ", ".join(items) + (f" and {len(value) - 4} more" if len(value) > 4 else "")
        return f"{len(value)} item{'s' if len(value) != 1 else ''}"
    return "empty"


def summarize_json(text: str, limit: int = 400) -> str:
    """'Keys: a, b, c. a: 1; b: x (y 2, z 3); c: 4 items.': top-level keys and what they hold."""
    data = json_data(text)
    if isinstance(data, list):
        kinds = {type(v).__name__ for v in data}
        head = f"A list of {len(data)} item{'s' if len(data) != 1 else ''}"
        if data and isinstance(data[0], dict):
            head += " with keys " + ", ".join(str(k) for k in list(data[0])[:8])
        elif kinds and data:
            head += ": " + _describe(data)
        return shorten(head + ".", limit)
    if not isinstance(data, dict) or not data:
        return ""
    keys = list(data)
    parts = [f"{k}: {_describe(data[k])}" for k in keys]
    summary = "Keys: " + ", ".join(str(k) for k in keys[:12]) + ("…" if len(keys) > 12 else "") + ". "
    summary += "; ".join(parts) + "."
    return shorten(summary, limit)


def json_prose(text: str) -> str:
    """JSON as words for tags and entities: keys and string values, no braces and quotes."""
    data = json_data(text)
    if data is None:
        return text
    out: list[str] = []

    def walk(node: Any) -> None:
        if len(out) > 2000:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                out.append(str(k).replace("_", " ") + ".")
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str):
            out.append(node if node.rstrip().endswith((".", "!", "?")) else node + ".")

    walk(data)
    return "\n".join(out)
