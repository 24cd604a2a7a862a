"""Source code summarised for a person: what it defines, and the first sentence of its first
docstring or meaningful comment (memlane.ingest.summarize)."""

from __future__ import annotations

import re

from memlane.ingest.chunking import find_code_units
from memlane.ingest.languages import DISPLAY_NAMES
from memlane.ingest.text import shorten

_KIND_WORDS = {
    "function": ("function", "functions"),
    "class": ("class", "classes"),
    "type": ("type", "types"),
    "module": ("module", "modules"),
}

_DOCSTRING = re.compile(r"^\s*[rRuU]?(\"\"\"|''')\s*(.+?)\1", re.MULTILINE | re.DOTALL)
_COMMENT_LINE = re.compile(r"^\s*(?:#(?![!\[])|//+!?|/\*+!?|\*(?!/)|--|;+)\s*(?P<text>.*?)\s*(?:\*/)?\s*$")
_BORING_COMMENT = re.compile(
    r"copyright|licen[sc]e|spdx|eslint|noqa|pylint|type:|-\*-|@ts-|prettier|rubocop|nolint|^\s*$|^[-=*#/]+$",
    re.IGNORECASE,
)


def summarize_code(code: str, language: str | None, limit: int = 400) -> str:
    """'Python source defining functions a, b and class C.' plus the first doc sentence."""
    units = [unit for unit in find_code_units(code, language) if unit.top_level and unit.kind in _KIND_WORDS]
    names: dict[str, list[str]] = {}
    for unit in units:
        if unit.name not in names.setdefault(unit.kind, []):
            names[unit.kind].append(unit.name)
    label = f"{DISPLAY_NAMES.get(language or '', (language or '').capitalize())} source".strip()
    label = label[0].upper() + label[1:] if label != "source" else "Source code"
    parts = []
    for kind in ("function", "class", "type", "module"):
        found = names.get(kind)
        if not found:
            continue
        singular, plural = _KIND_WORDS[kind]
        shown = ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
        parts.append(f"{plural if len(found) > 1 else singular} {shown}")
    if parts:
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        summary = f"{label} defining {joined}."
    else:
        lines = sum(1 for line in code.splitlines() if line.strip())
        summary = f"{label} ({lines} lines)."
    doc = first_doc_sentence(code)
    if doc:
        summary = f"{summary} {doc}"
    return shorten(summary, limit)


def first_doc_sentence(code: str) -> str | None:
    """The first sentence of the first docstring or meaningful comment, whichever comes first."""
    docstring = _DOCSTRING.search(code, 0, 20_000)
    candidates: list[tuple[int, str]] = []
    if docstring:
        candidates.append((docstring.start(), docstring.group(2)))
    offset = 0
    for line in code[:20_000].splitlines(keepends=True):
        match = _COMMENT_LINE.match(line.rstrip("\n"))
        if match and not _BORING_COMMENT.search(match.group("text")):
            candidates.append((offset, match.group("text")))
            break
        offset += len(line)
    if not candidates:
        return None
    text = " ".join(min(candidates)[1].split())
    sentence_end = re.search(r"[.!?](?:\s|$)", text)
    sentence = text[: sentence_end.end()].strip() if sentence_end else text
    if not sentence:
        return None
    sentence = sentence[0].upper() + sentence[1:]
    if sentence[-1] not in ".!?":
        sentence += "."
    return shorten(sentence, 200)
