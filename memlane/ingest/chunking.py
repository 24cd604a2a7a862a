"""Chunking (spec §3.4): split extracted text into pieces of about `max_tokens` for embedding.

Every chunk is a slice of the source text (`text[start_offset:end_offset]`), so a search hit can
always be located in the document. The text is first cut into *atoms* — the smallest pieces that
are never split (a sentence, a list item, a heading line; for code, a line) — each tagged with the
strength of the boundary before it. Atoms are then packed greedily; when a chunk is full it ends at
the strongest boundary that still leaves it reasonably full (a heading before a paragraph break
before a sentence break). One pass over the text and a bounded look-back per chunk keep it linear.

Prose chunks overlap by about `overlap_tokens`: the next chunk starts at a sentence (or at least a
word) boundary near the end of the previous one, never across a heading. Code is split at
function/class boundaries and does not overlap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from memlane.domain.models import ContentType, Document

CHARS_PER_TOKEN = 4  # the spec's estimate; cheap and good enough to size chunks

# A document may say how it is cut, in metadata[CHUNKING_KEY], so that every path that writes it
# (the first write, a retry from the job queue, reindex) cuts it the same way: "lines" for raged
# items (their chunk ids name ~1800-character line slices), or {"max_tokens": n,
# "overlap_tokens": m} for documentation pages, whose chunk size is the docset's setting.
CHUNKING_KEY = "chunking"
MIN_CHUNK_TOKENS, MAX_CHUNK_TOKENS = 32, 4096


@dataclass(frozen=True)
class TextChunk:
    text: str
    start_offset: int
    end_offset: int
    heading_path: tuple[str, ...] = ()


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def chunk_document(doc: Document, max_tokens: int, overlap_tokens: int) -> list[TextChunk]:
    """Cut a document by its own chunking (CHUNKING_KEY), else by content type with the given
    sizes. A malformed plan is ignored: the metadata may come from a client."""
    plan = doc.metadata.get(CHUNKING_KEY)
    if plan == "lines":
        from memlane.collections.chunking import chunk_lines

        return chunk_lines(doc.content)
    if isinstance(plan, dict):
        max_tokens = _bounded(plan.get("max_tokens"), max_tokens, MIN_CHUNK_TOKENS, MAX_CHUNK_TOKENS)
        overlap_tokens = _bounded(plan.get("overlap_tokens"), overlap_tokens, 0, max_tokens // 2)
    language = doc.metadata.get("language") if doc.content_type == ContentType.CODE else None
    return chunk_text(doc.content, content_type=doc.content_type, language=language,
                      max_tokens=max_tokens, overlap_tokens=overlap_tokens)


def _bounded(value: object, default: int, low: int, high: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return default


def chunk_text(
    text: str,
    *,
    content_type: ContentType = ContentType.TEXT,
    language: str | None = None,
    max_tokens: int = 512,
    overlap_tokens: int = 50,
) -> list[TextChunk]:
    """Split `text` into chunks of at most `max_tokens` (estimated) that are slices of `text`."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if overlap_tokens < 0:
        raise ValueError("overlap_tokens must not be negative")
    if not text.strip():
        return []
    limit = max_tokens * CHARS_PER_TOKEN
    if content_type in (ContentType.CODE, ContentType.JSON):
        patterns = [] if content_type is ContentType.JSON else _unit_patterns(language)
        atoms = _split_oversized(text, _code_atoms(text, patterns), limit)
        return _pack(text, atoms, limit, _CODE_MIN_FILL, eager_level=None, overlap=0)
    # An overlap as long as the chunk would make no progress: at most half a chunk is repeated.
    overlap = min(overlap_tokens, max_tokens // 2) * CHARS_PER_TOKEN
    # Leave room for the overlap in front of a piece of an oversized sentence.
    piece_limit = max(limit - overlap, limit // 2) if overlap else limit
    atoms = _split_oversized(text, _prose_atoms(text), piece_limit)
    return _pack(text, atoms, limit, _PROSE_MIN_FILL, eager_level=HEADING, overlap=overlap)


# --------------------------------------------------------------------------- atoms

# Boundary strengths. Prose: a heading line, a new paragraph, a new sentence/list item/line, a word.
WORD, SENTENCE, PARAGRAPH, HEADING = 0, 1, 2, 3
# Code: a line, a line after a blank line, a nested definition (method), a top-level definition.
LINE, BLOCK, NESTED_UNIT, UNIT = 1, 2, 3, 4

# How full a chunk must be (fraction of the limit) before it may end at a boundary of this strength.
# Ending early at a strong boundary beats ending late at a weak one, but not if it wastes most of
# the chunk. Code units always win: a chunk that starts at a function is what code search wants.
_PROSE_MIN_FILL = {WORD: 0.0, SENTENCE: 0.0, PARAGRAPH: 0.5, HEADING: 0.25}
_CODE_MIN_FILL = {WORD: 0.0, LINE: 0.0, BLOCK: 0.5, NESTED_UNIT: 0.25, UNIT: 0.0}


@dataclass(slots=True)
class _Atom:
    start: int
    end: int
    level: int  # strength of the boundary before this atom
    path: tuple[str, ...]  # headings (or code unit names) in force at this atom


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line, without its newline."""
    pos = 0
    length = len(text)
    while pos <= length:
        newline = text.find("\n", pos)
        if newline == -1:
            yield pos, length
            return
        yield pos, newline
        pos = newline + 1


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# ---- prose

_HEADING_LINE = re.compile(r" {0,3}(#{1,6})[ \t]+(\S.*)")
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ITEM_LINE = re.compile(r"\s*(?:[-*+•]|\d{1,9}[.)])[ \t]+\S|\s*\|")  # list item or table row
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]*_]*(?=\s)|[。！？][」』）]*")
_OPENERS = frozenset("\"'“‘([*_`¿¡«")
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "no", "fig", "eq",
     "approx", "al", "inc", "ltd", "co", "dept"]
)  # fmt: skip
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_CLOSING_HASHES = re.compile(r"\s+#+\s*$")  # "## Title ##" (but not "C#")
_PERMALINK_TAIL = re.compile(r"[\s¶§🔗]+$")


def clean_heading(raw: str) -> str:
    """A heading line's text without markup: '## [Key Functions](#k) ¶' → 'Key Functions'."""
    text = _CLOSING_HASHES.sub("", _LINK.sub(r"\1", raw))
    text = _PERMALINK_TAIL.sub("", text).replace("**", "").replace("__", "")
    return " ".join(text.split())


def _prose_atoms(text: str) -> list[_Atom]:
    atoms: list[_Atom] = []
    headings: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    pending = PARAGRAPH  # strength of the boundary before the next atom
    block_start = -1  # start of the open prose block (paragraph or list item), if any
    block_end = -1
    block_level = PARAGRAPH
    fence: str | None = None

    def flush() -> None:
        nonlocal block_start
        if block_start >= 0:
            for i, (start, end) in enumerate(_sentences(text, block_start, block_end)):
                atoms.append(_Atom(start, end, block_level if i == 0 else SENTENCE, path))
            block_start = -1

    for line_start, line_end in _lines(text):
        start, end = _strip_span(text, line_start, line_end)
        if start == end:  # blank line
            flush()
            pending = PARAGRAPH
            continue
        line = text[line_start:line_end]
        if fence is not None:  # inside a fenced code block: one atom per line, no headings
            atoms.append(_Atom(start, end, pending, path))
            pending = SENTENCE
            if line.strip().startswith(fence):
                fence = None
            continue
        fence_match = _FENCE_LINE.match(line)
        if fence_match:
            flush()
            fence = fence_match.group(1)
            atoms.append(_Atom(start, end, max(pending, PARAGRAPH), path))
            pending = SENTENCE
            continue
        heading_match = _HEADING_LINE.match(line)
        if heading_match:
            flush()
            level = len(heading_match.group(1))
            title = clean_heading(heading_match.group(2))
            while headings and headings[-1][0] >= level:
                headings.pop()
            if title:
                headings.append((level, title))
            path = tuple(t for _, t in headings)
            atoms.append(_Atom(start, end, HEADING, path))
            pending = PARAGRAPH
            continue
        if _ITEM_LINE.match(line) or block_start < 0:
            flush()
            block_start, block_end, block_level = start, end, pending
            pending = SENTENCE
        else:  # a wrapped line continues the open paragraph or list item
            block_end = end
    flush()
    return atoms


def _sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Sentence spans in text[start:end] (which starts and ends with non-whitespace)."""
    for match in _SENTENCE_END.finditer(text, start, end):
        boundary = match.end()
        nxt = boundary
        while nxt < end and text[nxt].isspace():
            nxt += 1
        if nxt >= end:
            break
        if match.group()[0] in "。！？" or (
            _starts_sentence(text[nxt]) and not _is_abbreviation(text, match.start())
        ):
            yield start, boundary
            start = nxt
    yield start, end


def _starts_sentence(char: str) -> bool:
    return char.isupper() or char.isdigit() or char in _OPENERS


def _is_abbreviation(text: str, period: int) -> bool:
    if text[period] != ".":
        return False
    word_start = period
    while word_start > 0 and period - word_start < 8 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:period].lstrip("(\"'").lower()
    # "J. Smith": a single capital letter is an initial, not the end of a sentence.
    return word in _ABBREVIATIONS or (len(word) == 1 and text[period - 1].isupper())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, list item or heading line of prose, as chunking sees them."""
    return [(atom.start, atom.end) for atom in _prose_atoms(text)]


# ---- code

_MAX_SIGNATURE_LINE = 400  # longer lines are data, not definitions (and regexes stay linear)
_ID = r"[A-Za-z_$][\w$]*"
_MODIFIERS = (
    r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|partial|virtual|override|"
    r"async|extern|inline|synchronized|native|unsafe|readonly|open|data|suspend|export|default|"
    r"declare|const|mutating|fileprivate|required|convenience|lateinit|operator|infix)\s+)*"
)
# First words that make a line a statement, not a definition.
_CONTROL_WORDS = frozenset(
    ["if", "for", "while", "switch", "catch", "return", "else", "elif", "do", "try", "with", "new", "delete",
     "sizeof", "typeof", "throw", "case", "when", "until", "unless", "foreach", "using", "lock", "await",
     "yield", "match", "loop", "select", "print", "echo", "raise", "assert", "del", "not", "in", "is",
     "lambda", "go", "defer", "puts", "require", "include", "import", "from", "pass", "goto", "throws"]
)  # fmt: skip

_UnitPattern = tuple[re.Pattern[str], str]


def _unit(pattern: str, kind: str) -> _UnitPattern:
    return re.compile(pattern), kind


_PY = [
    _unit(rf"(?:async\s+)?def\s+(?P<name>{_ID})", "function"),
    _unit(rf"class\s+(?P<name>{_ID})", "class"),
]
_RUBY = [
    _unit(r"def\s+(?:self\.)?(?P<name>[A-Za-z_]\w*[?!=]?)", "function"),
    _unit(r"class\s+(?P<name>[A-Z]\w*(?:::\w+)*)", "class"),
    _unit(r"module\s+(?P<name>[A-Z]\w*(?:::\w+)*)", "module"),
]
_JS_EXPORT = r"(?:export\s+(?:default\s+)?)?(?:declare\s+)?"
_JS = [
    _unit(rf"{_JS_EXPORT}(?:async\s+)?function\s*\*?\s*(?P<name>{_ID})", "function"),
    _unit(rf"{_JS_EXPORT}(?:abstract\s+)?class\s+(?P<name>{_ID})", "class"),
    _unit(
        rf"(?:export\s+)?(?:const|let|var)\s+(?P<name>{_ID})\s*(?::[^=]+)?=\s*(?:async\s+)?"
        rf"(?:function\b|(?:\([^)]*\)|{_ID})\s*(?::\s*[^=]+)?=>)",
        "function",
    ),
    _unit(rf"{_JS_EXPORT}(?:interface|enum)\s+(?P<name>{_ID})", "type"),
    _unit(rf"{_JS_EXPORT}type\s+(?P<name>{_ID})\s*(?:<[^>]*>)?\s*=", "type"),
]
_JS_METHOD = [  # only when indented: `name(args) {` inside a class body
    _unit(
        rf"(?:(?:static|async|get|set|public|private|protected|readonly)\s+)*\*?(?P<name>{_ID})\s*"
        rf"\([^)]*\)\s*(?::\s*[^{{=]+)?\{{\s*$",
        "function",
    ),
]
_INDENTED_ONLY = frozenset(pattern for pattern, _ in _JS_METHOD)
_GO = [
    _unit(rf"func\s+(?:\([^)]*\)\s*)?(?P<name>{_ID})", "function"),
    _unit(rf"type\s+(?P<name>{_ID})\s+(?:struct|interface)\b", "type"),
]
_RUST_VIS = r"(?:pub(?:\([^)]*\))?\s+)?"
_RUST = [
    _unit(
        rf"{_RUST_VIS}(?:(?:const|async|unsafe|extern(?:\s+\"[^\"]*\")?)\s+)*fn\s+(?P<name>[A-Za-z_]\w*)",
        "function",
    ),
    _unit(rf"{_RUST_VIS}(?:struct|enum|trait|union)\s+(?P<name>[A-Za-z_]\w*)", "type"),
    _unit(rf"{_RUST_VIS}mod\s+(?P<name>[A-Za-z_]\w*)", "module"),
    _unit(r"(?:unsafe\s+)?impl\b(?:<[^>]*>)?\s*(?P<name>[^{]+?)\s*(?:where\b.*)?\{?\s*$", "impl"),
]
_C_FAMILY = [
    _unit(
        rf"{_MODIFIERS}(?:class|interface|enum|struct|record|object|protocol|extension|trait)\s+(?P<name>{_ID})",
        "class",
    ),
    _unit(rf"{_MODIFIERS}namespace\s+(?P<name>[\w.:]+)", "module"),
    _unit(rf"{_MODIFIERS}(?:fun|func)\s+(?:<[^>]*>\s*)?(?:{_ID}\.)?(?P<name>{_ID})", "function"),
    _unit(rf"{_MODIFIERS}function\s+&?(?P<name>{_ID})", "function"),  # PHP
    # A method-ish signature: a return type, a name, "(", and no ";" (which would make it a call
    # or a declaration).
    _unit(
        rf"{_MODIFIERS}(?P<type>[A-Za-z_][\w:<>,.\[\]*&?]*(?:\s*[*&]+)?)\s+[*&]*"
        rf"(?P<name>[A-Za-z_~]\w*(?:::~?[A-Za-z_]\w*)*)\s*\([^;]*$",
        "function",
    ),
]
_SHELL = [
    _unit(r"(?:function\s+)?(?P<name>[A-Za-z_][\w-]*)\s*\(\)\s*\{?\s*$", "function"),
    _unit(r"function\s+(?P<name>[A-Za-z_][\w-]*)", "function"),
]

# Patterns that only recognise a definition by its shape (a name before parentheses), not by a keyword.
_LOOSE = frozenset(pattern for pattern, _ in [*_JS_METHOD, _C_FAMILY[-1], *_SHELL])
_LANGUAGE_PATTERNS: dict[str, list[_UnitPattern]] = {
    "python": _PY,
    "ruby": _RUBY,
    "javascript": _JS + _JS_METHOD,
    "typescript": _JS + _JS_METHOD,
    "go": _GO,
    "rust": _RUST,
    "bash": _SHELL,
    **dict.fromkeys(
        ["java", "c", "cpp", "csharp", "kotlin", "scala", "swift", "objective-c", "php", "dart", "groovy"],
        _C_FAMILY,
    ),
}
_NO_UNITS = frozenset(
    {"json", "yaml", "toml", "ini", "xml", "csv", "markdown", "text", "css", "scss", "less"}
)
_ALL_PATTERNS = _PY + _RUBY + _JS + _GO + _RUST + _C_FAMILY + _JS_METHOD
_LANGUAGE_ALIASES = {
    "py": "python", "js": "javascript", "ts": "typescript", "golang": "go", "rs": "rust", "c++": "cpp",
    "c#": "csharp", "cs": "csharp", "rb": "ruby", "sh": "bash", "shell": "bash",
}  # fmt: skip

# Lines that belong to the definition below them: decorators, attributes, doc comments.
_ATTACHED_LINE = re.compile(r"\s*(?:@|#\[|#!\[|//|/\*|\*|--|#(?!include|define|if|else|endif|pragma|import))")
_CLOSER_LINE = re.compile(r"\s*(?:[}\])]+[;,)]*|end|fi|done|esac)\s*$")


@dataclass(frozen=True)
class CodeUnit:
    """A definition found in source code: its name, kind ('function', 'class', 'type', 'module',
    'impl') and whether it is top-level (not indented)."""

    name: str
    kind: str
    top_level: bool
    offset: int


def _unit_patterns(language: str | None) -> list[_UnitPattern]:
    key = (language or "").strip().lower()
    key = _LANGUAGE_ALIASES.get(key, key)
    if key in _NO_UNITS:
        return []
    return _LANGUAGE_PATTERNS.get(key, _ALL_PATTERNS)


def _match_unit(line: str, indented: bool, patterns: list[_UnitPattern]) -> tuple[str, str] | None:
    body = line.strip()
    if not body or len(body) > _MAX_SIGNATURE_LINE:
        return None
    for pattern, kind in patterns:
        if pattern in _INDENTED_ONLY and not indented:
            continue
        match = pattern.match(body)
        if match is None:
            continue
        name = " ".join(match.group("name").split())
        if pattern in _LOOSE and name in _CONTROL_WORDS:
            continue  # `if (x) {`, `while (y) {` look like a method to a loose pattern
        if "type" in pattern.groupindex:
            return_type = match.group("type")
            if return_type in _CONTROL_WORDS or "=" in body.split("(", 1)[0]:
                continue
        return name, kind
    return None


def find_code_units(text: str, language: str | None) -> list[CodeUnit]:
    """The function/class/type definitions in `text`, in order, as the code chunker sees them."""
    patterns = _unit_patterns(language)
    units: list[CodeUnit] = []
    if not patterns:
        return units
    for line_start, line_end in _lines(text):
        line = text[line_start:line_end]
        indented = line[:1].isspace()
        found = _match_unit(line, indented, patterns)
        if found:
            units.append(CodeUnit(found[0], found[1], not indented, line_start))
    return units


def _code_atoms(text: str, patterns: list[_UnitPattern]) -> list[_Atom]:
    atoms: list[_Atom] = []
    path: tuple[str, ...] = ()
    top_name: str | None = None
    pending = BLOCK
    attached: list[int] = []  # indices of the comment/decorator atoms right above the current line
    for line_start, line_end in _lines(text):
        first_char, end = _strip_span(text, line_start, line_end)
        if first_char == end:
            pending = BLOCK
            attached.clear()
            continue
        # Code atoms keep their indentation: a chunk that starts at a method shows it indented.
        line = text[line_start:end]
        indented = line[:1].isspace()
        unit = _match_unit(line, indented, patterns) if patterns else None
        if unit is not None:
            name = unit[0]
            if indented:
                level = NESTED_UNIT
                path = (top_name, name) if top_name else (name,)
            else:
                level = UNIT
                top_name = name
                path = (name,)
            if attached:  # the unit begins at its decorators / doc comment
                atoms[attached[0]].level = max(level, atoms[attached[0]].level)
                for index in attached:
                    atoms[index].path = path
                atoms.append(_Atom(line_start, end, LINE, path))
            else:
                atoms.append(_Atom(line_start, end, max(level, pending), path))
            attached.clear()
        else:
            if not indented and not _ATTACHED_LINE.match(line) and not _CLOSER_LINE.match(line):
                path, top_name = (), None  # top-level code outside any definition
            atoms.append(_Atom(line_start, end, pending, path))
            if _ATTACHED_LINE.match(line):
                attached.append(len(atoms) - 1)
            else:
                attached.clear()
        pending = LINE
    return atoms


# ---- oversized atoms


def _split_oversized(text: str, atoms: list[_Atom], limit: int) -> list[_Atom]:
    """Cut atoms longer than `limit` at newlines, else spaces, else (last resort) mid-word."""
    if all(atom.end - atom.start <= limit for atom in atoms):
        return atoms
    result: list[_Atom] = []
    for atom in atoms:
        if atom.end - atom.start <= limit:
            result.append(atom)
            continue
        # Pieces start at a non-space (a code line's indentation is not worth a piece of its own).
        start, level = _strip_span(text, atom.start, atom.end)[0], atom.level
        while atom.end - start > limit:
            window_end = start + limit
            cut = text.rfind("\n", start + limit // 2, window_end + 1)
            if cut == -1:
                cut = max(text.rfind(space, start + 1, window_end + 1) for space in " \t\u3000")
            if cut == -1:  # one word longer than the limit: cut it
                piece_end, next_start = window_end, window_end
            else:
                piece_end, next_start = _strip_span(text, start, cut)[1], cut
            while next_start < atom.end and text[next_start].isspace():
                next_start += 1
            result.append(_Atom(start, piece_end, level, atom.path))
            start, level = next_start, WORD
        result.append(_Atom(start, atom.end, level, atom.path))
    return result


# --------------------------------------------------------------------------- packing


def _pack(
    text: str,
    atoms: list[_Atom],
    limit: int,
    min_fill: dict[int, float],
    *,
    eager_level: int | None,
    overlap: int,
) -> list[TextChunk]:
    chunks: list[TextChunk] = []
    first = 0  # index of the first atom that is new in the current chunk (not overlap)
    start = atoms[0].start
    path = atoms[0].path
    i = 1
    while i < len(atoms):
        atom = atoms[i]
        if eager_level is not None and atom.level >= eager_level and atom.start - start > limit // 2:
            cut = i  # a new section starts a new chunk once this one is half full
        elif atom.end - start > limit:
            cut = _best_cut(atoms, first + 1, i, start, limit, min_fill)
        else:
            i += 1
            continue
        if eager_level is not None:  # don't end a chunk on a heading: it belongs to what follows
            back = cut
            while back - 1 > first and atoms[back - 1].level >= eager_level:
                back -= 1
            if atoms[back - 1].level < eager_level:  # (unless the chunk is nothing but headings)
                cut = back
        end = atoms[cut - 1].end
        chunks.append(TextChunk(text[start:end], start, end, path))
        if overlap and (eager_level is None or atoms[cut].level < eager_level):
            start, path = _overlap_start(text, atoms, cut, start, limit, overlap, eager_level)
        else:
            start, path = atoms[cut].start, atoms[cut].path
        first = cut
        i = cut + 1
    end = atoms[-1].end
    chunks.append(TextChunk(text[start:end], start, end, path))
    return chunks


def _best_cut(
    atoms: list[_Atom], lo: int, hi: int, start: int, limit: int, min_fill: dict[int, float]
) -> int:
    """The atom to start the next chunk at: the strongest boundary in atoms[lo..hi] that leaves the
    current chunk full enough for its strength; the latest one among equals."""
    best = hi
    best_level = -1
    for k in range(lo, hi + 1):
        level = atoms[k].level
        if level >= best_level and atoms[k].start - start >= min_fill[level] * limit:
            best, best_level = k, level
    return best


def _overlap_start(
    text: str,
    atoms: list[_Atom],
    cut: int,
    prev_start: int,
    limit: int,
    overlap: int,
    heading_level: int | None,
) -> tuple[int, tuple[str, ...]]:
    """Where the chunk starting with atoms[cut] begins so that it repeats about `overlap` characters
    of the previous chunk (which spans prev_start..atoms[cut-1].end)."""
    prev_end = atoms[cut - 1].end
    next_end = atoms[cut].end
    # The new chunk spans [overlap start, next_end] and must stay within the limit.
    longest = min(overlap * 3 // 2, limit - (next_end - prev_end))
    # Prefer a sentence boundary whose overlap is closest to the target.
    best: tuple[int, tuple[str, ...]] | None = None
    best_distance = overlap
    j = cut - 1
    while j >= 0 and atoms[j].start > prev_start:
        atom = atoms[j]
        repeated = prev_end - atom.start
        if repeated > longest:
            break
        if repeated >= overlap // 2 and abs(repeated - overlap) <= best_distance:
            best, best_distance = (atom.start, atom.path), abs(repeated - overlap)
        if heading_level is not None and atom.level >= heading_level:
            break  # overlap may start at a heading but never reaches back across one
        j -= 1
    if best is not None:
        return best
    # No sentence boundary fits: start at a word boundary about `overlap` characters back.
    target = max(prev_end - min(overlap, longest), prev_start + 1)
    if target >= prev_end:
        return atoms[cut].start, atoms[cut].path
    if text[target - 1].isspace() and not text[target].isspace():
        word_start = target
    else:
        space = _WHITESPACE.search(text, target, prev_end)
        if space is None:
            return atoms[cut].start, atoms[cut].path
        word_start = space.end()
    j = cut - 1
    while atoms[j].start > word_start:
        if heading_level is not None and atoms[j].level >= heading_level:
            return atoms[j].start, atoms[j].path
        j -= 1
    return word_start, atoms[j].path


_WHITESPACE = re.compile(r"\s+")
