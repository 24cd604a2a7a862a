"""Stored fields shown as data, never as lines of their own.

A title, a tag, a source URL, a project name is written by whoever saved the memory or by the page
that was crawled. Shown to an assistant (MCP tools, the context pack) or inside a seed API's text
format (Vidurai's context markdown, Mem-Oracle's snippets), such a field must not be able to start
a line: a line that starts with a stored field's text can pass for the tool's own words.

Python's `str.splitlines`, and most renderers, break lines at more than `\\n`: `\\r`, `\\v`, `\\f`,
the file/group/record separators `\\x1c`-`\\x1e`, NEL `\\x85`, and U+2028/U+2029. JSON escapes the
ASCII ones but leaves NEL, U+2028 and U+2029 as they are, so `json.dumps(title)` alone is not
enough. Every function here handles the whole class.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Every character str.splitlines() breaks a line at.
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"[{re.escape(LINE_BREAKS)}]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\v": "\\v", "\f": "\\f"}


def _escape(ch: str) -> str:
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def has_line_break(text: str) -> bool:
    return _LINE_BREAK.search(text) is not None


def escape_line_breaks(text: str) -> str:
    """`text` with every line break written as an escape (`\\n`, `\\u2028`): one line that still
    shows what was stored. For fields inside the seed APIs' documented text formats."""
    return _LINE_BREAK.sub(lambda m: _escape(m.group()), text)


def quoted(value: Any) -> str:
    """A stored string as a JSON string literal on one line, every line break escaped."""
    text = json.dumps(value if value is not None else "", ensure_ascii=False)
    return _LINE_BREAK.sub(lambda m: _escape(m.group()), text)


def json_data(value: Any, indent: int | None = None) -> str:
    """A JSON document of stored data (the memory graph): no string in it can break its line."""
    # json.dumps writes the only raw "\n" (between members when indenting); strings hold escapes.
    return _LINE_BREAK.sub(lambda m: m.group() if m.group() == "\n" else _escape(m.group()),
                           json.dumps(value, ensure_ascii=False, indent=indent))


def quote_block(text: str) -> str:
    """Every line of stored content prefixed with `> ` (every line-break class splits a line)."""
    lines = text.splitlines() or [""]
    return "\n".join(f"> {line}" if line else ">" for line in lines)
