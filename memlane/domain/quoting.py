"""Stored fields shown as data, never as lines of their own.

A title, a tag, a source URL, a project name is written by whoever saved the memory or by the page
that was crawled. Shown to an assistant (MCP tools, the context pack) or inside a seed API's text
format (Vidurai's context markdown, Mem-Oracle's snippets), such a field must not be able to start
a line: a line that starts with a stored field's text can pass for the tool's own words.

Python's `str.splitlines`, and most renderers, break lines at more than `\\n`: `\\r`, `\\v`, `\\f`,
the file/group/record separators `\\x1c`-`\\x1e`, NEL `\\x85`, and U+2028/U+2029. JSON escapes the
ASCII ones but leaves NEL, U+2028 and U+2029 as they are, so `json.dumps(title)` alone is not
enough. Every function here handles the whole class.

Quoting keeps stored text from passing for the tool's own lines; `for_assistant` keeps it from
doing anything else on its way to an assistant. Everything memlane hands an assistant (every MCP
tool's text and structured answer, the context pack, Vidurai's search_memories and
get_project_context, the memory graph, the profile) passes it last: ESC sequences (which erase the
`> ` before a line on a terminal MCP client, or hide a link behind OSC 8), every other C0 and C1
control but tab and newline, bidi embeddings, overrides and isolates (U+202A-U+202E,
U+2066-U+2069: RLO makes "txt.exe" read as "exe.txt"), Unicode tag characters (U+E0000-U+E007F:
text no one sees that a model still reads) and the zero-width space, word joiner and BOM are
removed. ZWJ and ZWNJ (U+200D, U+200C) stay: emoji sequences and many scripts need them. Removing
never creates a line break, so what was quoted stays quoted.
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


# ------------------------------------------------------------------------------- for an assistant

# ESC (and the 8-bit CSI/OSC/DCS introducers) with what follows as one sequence: CSI `ESC [ … final`,
# OSC `ESC ] … BEL|ST`, DCS/SOS/PM/APC `ESC P|X|^|_ … ST`, or a two-character escape.
# A string body (an OSC 8 link's URL) ends at its terminator, a line's end or 512 characters, so a
# sequence left open never swallows the lines after it (a quoted line's neighbour, the tool's own).
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]?"
    r"|\x1b\][^\x07\x1b\x9c\n]{0,512}(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[PX^_][^\x07\x1b\x9c\n]{0,512}(?:\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
    r"|\x9b[0-?]{0,64}[ -/]{0,8}[@-~]?"
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c\n]{0,512}(?:\x07|\x9c)?"
)
_NOT_FOR_AN_ASSISTANT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u200b\u2060-\u2064\ufeff"  # zero-width space, word joiner and invisible operators, BOM
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides, isolates
    "\U000e0000-\U000e007f]"  # tag characters
)


def for_assistant(text: str) -> str:
    """`text` without the characters that act rather than read (see the module's doc)."""
    return _NOT_FOR_AN_ASSISTANT.sub("", _ESCAPE_SEQUENCE.sub("", text))


def for_assistant_data(value: Any) -> Any:
    """`for_assistant` on every string of a JSON-like value, keys included (metadata keys are stored too)."""
    if isinstance(value, str):
        return for_assistant(value)
    if isinstance(value, dict):
        return {for_assistant(k) if isinstance(k, str) else k: for_assistant_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [for_assistant_data(v) for v in value]
    return value
