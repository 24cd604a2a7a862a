"""Code atoms: one per line, with function/class/type definitions (found by per-language patterns)
as the strongest boundaries, so a chunk starts where a definition (or its decorators) starts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlane.ingest.chunking.atoms import BLOCK, LINE, NESTED_UNIT, UNIT, Atom, lines, strip_span
from memlane.ingest.languages import normalize_language

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


def unit_patterns(language: str | None) -> list[_UnitPattern]:
    key = normalize_language(language or "")
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
    patterns = unit_patterns(language)
    units: list[CodeUnit] = []
    if not patterns:
        return units
    for line_start, line_end in lines(text):
        line = text[line_start:line_end]
        indented = line[:1].isspace()
        found = _match_unit(line, indented, patterns)
        if found:
            units.append(CodeUnit(found[0], found[1], not indented, line_start))
    return units


def code_atoms(text: str, patterns: list[_UnitPattern]) -> list[Atom]:
    atoms: list[Atom] = []
    path: tuple[str, ...] = ()
    top_name: str | None = None
    pending = BLOCK
    attached: list[int] = []  # indices of the comment/decorator atoms right above the current line
    for line_start, line_end in lines(text):
        first_char, end = strip_span(text, line_start, line_end)
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
                atoms.append(Atom(line_start, end, LINE, path))
            else:
                atoms.append(Atom(line_start, end, max(level, pending), path))
            attached.clear()
        else:
            if not indented and not _ATTACHED_LINE.match(line) and not _CLOSER_LINE.match(line):
                path, top_name = (), None  # top-level code outside any definition
            atoms.append(Atom(line_start, end, pending, path))
            if _ATTACHED_LINE.match(line):
                attached.append(len(atoms) - 1)
            else:
                attached.clear()
        pending = LINE
    return atoms
