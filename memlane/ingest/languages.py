"""Programming languages: one spelling per language, the one table of names, extensions and
aliases that extraction, chunking and summaries share, and detection of a source file's language.

Light on purpose (no bs4, no lxml; pygments only when the signatures cannot tell), so a caller off
the extraction path (a repository sync naming its files' languages) can import it at no cost.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# File extension → language. Names follow pygments' first alias where one exists.
EXTENSION_LANGUAGES = {
    "py": "python", "pyi": "python", "pyw": "python", "ipynb": "python",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "javascript",
    "ts": "typescript", "tsx": "typescript", "mts": "typescript", "cts": "typescript",
    "go": "go", "rs": "rust", "java": "java", "kt": "kotlin", "kts": "kotlin", "scala": "scala",
    "c": "c", "h": "c", "cpp": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp",
    "cs": "csharp", "fs": "fsharp", "rb": "ruby", "php": "php", "swift": "swift", "m": "objective-c",
    "mm": "objective-c", "sh": "bash", "bash": "bash", "zsh": "bash", "fish": "fish", "ps1": "powershell",
    "sql": "sql", "r": "r", "lua": "lua", "pl": "perl", "pm": "perl", "dart": "dart", "ex": "elixir",
    "exs": "elixir", "erl": "erlang", "hs": "haskell", "clj": "clojure", "ml": "ocaml", "jl": "julia",
    "vue": "vue", "svelte": "svelte", "css": "css", "scss": "scss", "less": "less", "yaml": "yaml",
    "yml": "yaml", "toml": "toml", "ini": "ini", "tf": "terraform", "proto": "protobuf",
    "graphql": "graphql", "zig": "zig", "nim": "nim", "groovy": "groovy", "gradle": "groovy",
}  # fmt: skip
CODE_EXTENSIONS = frozenset(EXTENSION_LANGUAGES)
SPECIAL_FILENAMES = {"dockerfile": "docker", "makefile": "make", "cmakelists.txt": "cmake"}
_FILENAME = re.compile(r"^[\w.@+/\\-]*\.([A-Za-z0-9+]{1,10})$")
_SHEBANG = re.compile(r"^#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?([A-Za-z]+)")
_SHEBANG_LANGUAGES = {
    "python": "python", "node": "javascript", "deno": "typescript", "bun": "javascript", "bash": "bash",
    "sh": "bash", "zsh": "bash", "dash": "bash", "ksh": "bash", "ruby": "ruby", "perl": "perl", "php": "php",
    "lua": "lua", "rscript": "r", "fish": "fish", "pwsh": "powershell", "julia": "julia", "tclsh": "tcl",
}  # fmt: skip
LANGUAGE_ALIASES = {
    "py": "python", "python3": "python", "py3": "python", "python2": "python", "pycon": "python",
    "ipython": "python", "ipython3": "python", "js": "javascript", "node": "javascript",
    "nodejs": "javascript", "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "golang": "go",
    "rs": "rust", "c++": "cpp", "cxx": "cpp", "c#": "csharp", "cs": "csharp", "rb": "ruby", "sh": "bash",
    "shell": "bash", "zsh": "bash", "console": "bash", "shell-session": "bash", "kt": "kotlin",
    "objc": "objective-c", "yml": "yaml", "ps1": "powershell", "pwsh": "powershell", "html+jinja": "html",
}  # fmt: skip


# How a summary names a language ("a Python source"); others are capitalised.
DISPLAY_NAMES = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go", "rust": "Rust",
    "java": "Java", "kotlin": "Kotlin", "scala": "Scala", "c": "C", "cpp": "C++", "csharp": "C#",
    "ruby": "Ruby", "php": "PHP", "swift": "Swift", "bash": "Shell", "sql": "SQL",
    "objective-c": "Objective-C", "r": "R", "lua": "Lua", "perl": "Perl", "dart": "Dart", "elixir": "Elixir",
    "haskell": "Haskell",
}  # fmt: skip


def normalize_language(name: str) -> str:
    """One spelling per language ('py', 'python3' → 'python'), lowercase."""
    key = name.strip().lower()
    return LANGUAGE_ALIASES.get(key, key)


def file_extension(*names: str | None) -> str | None:
    """The extension of the first name that has one (or a special file name: 'dockerfile')."""
    for name in names:
        if not name:
            continue
        path = urlsplit(name).path if "://" in name else name.strip()
        basename = path.rsplit("/", 1)[-1].lower()
        if basename in SPECIAL_FILENAMES:
            return basename
        match = _FILENAME.match(basename)
        if match:
            return match.group(1).lower()
    return None


def detect_language(code: str, *, title: str | None = None, source_url: str | None = None) -> str | None:
    """The programming language of `code`: file extension, then shebang, then the content itself."""
    extension = file_extension(title, source_url)
    if extension in EXTENSION_LANGUAGES:
        return EXTENSION_LANGUAGES[extension]
    if extension in SPECIAL_FILENAMES:
        return SPECIAL_FILENAMES[extension]
    shebang = _SHEBANG.match(code)
    if shebang:
        interpreter = re.sub(r"[\d.]+$", "", shebang.group(1).lower())
        if interpreter in _SHEBANG_LANGUAGES:
            return _SHEBANG_LANGUAGES[interpreter]
    return _language_from_signatures(code) or _guess_language(code)


def _sig(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


# Constructs that identify a language on sight. pygments' guess_lexer alone is unreliable on short
# snippets (it calls a Go file Python and Rust "css+lasso"), so these are consulted first.
_SIGNATURES: dict[str, list[tuple[re.Pattern[str], int]]] = {
    "python": [(_sig(r"^\s*def \w+\(.*\)( -> .+)?:\s*$"), 2), (_sig(r"^from [\w.]+ import \w"), 2),
               (_sig(r"^import \w+(\.\w+)*\s*$"), 1), (_sig(r"^\s*class \w+(\(.*\))?:\s*$"), 2),
               (_sig(r"^\s*(elif .*|else|try|except.*|finally):\s*$"), 2), (_sig(r"\bself\.\w+"), 1),
               (_sig(r"^if __name__ == ['\"]__main__['\"]:"), 3)],
    "javascript": [(_sig(r"\b(const|let|var) \w+ = require\("), 3), (_sig(r"\bconsole\.log\("), 2),
                   (_sig(r"=>\s*[{(]?"), 1), (_sig(r"^\s*(export )?(async )?function\*? ?\w*\s*\("), 2),
                   (_sig(r"^(import .* from ['\"]|export (default|const|function|class) )"), 2),
                   (_sig(r"\b(document|window)\.\w+"), 1), (_sig(r"^\s*(const|let) \w+\s*="), 1)],
    "typescript": [(_sig(r"^\s*(export )?(interface|type) \w+(<.*>)?\s*(=|\{)"), 3),
                   (_sig(r"\w\??: (string|number|boolean|any|void|unknown)\b"), 3)],
    "go": [(_sig(r"^package \w+\s*$"), 3), (_sig(r"^func (\(\w+ \*?\w+\) )?\w+\("), 3),
           (_sig(r":= "), 1), (_sig(r"\bfmt\.\w+\("), 2), (_sig(r"^import \($"), 2)],
    "rust": [(_sig(r"^\s*(pub(\(\w+\))? )?(async )?fn \w+(<.*>)?\("), 3), (_sig(r"\blet mut \w+"), 3),
             (_sig(r"\bprintln!\("), 3), (_sig(r"^use (std|crate|super)::"), 3),
             (_sig(r"^\s*impl(<.*>)? \w+"), 2), (_sig(r"#\[derive\("), 3)],
    "java": [(_sig(r"^\s*public (final )?class \w+"), 2), (_sig(r"\bSystem\.out\.print"), 3),
             (_sig(r"^import java\."), 3), (_sig(r"public static void main\(String"), 3)],
    "csharp": [(_sig(r"^using System(\.\w+)*;"), 3), (_sig(r"\bConsole\.Write(Line)?\("), 3),
               (_sig(r"^\s*namespace [\w.]+"), 2)],
    "cpp": [(_sig(r"^#include <(iostream|vector|string|map|memory)>"), 3), (_sig(r"\bstd::\w+"), 3)],
    "c": [(_sig(r"^#include <\w+\.h>"), 3), (_sig(r"\bprintf\("), 1), (_sig(r"^int main\("), 1)],
    "php": [(_sig(r"^<\?php"), 5), (_sig(r"\$\w+->\w+"), 2)],
    "ruby": [(_sig(r"^\s*def \w+[?!]?(\(.*\))?\s*$"), 2), (_sig(r"^\s*end\s*$"), 1),
             (_sig(r"^require ['\"]"), 2), (_sig(r"\bputs "), 2), (_sig(r"\.each do \|"), 3)],
    "sql": [(_sig(r"^\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE (TABLE|INDEX|VIEW))\b"), 3),
            (_sig(r"\b(FROM|WHERE|JOIN|GROUP BY|ORDER BY)\b"), 1)],
    "bash": [(_sig(r"^\s*(if \[|fi$|then$|done$|esac$)"), 2), (_sig(r"^\s*(export \w+=|echo )"), 2),
             (_sig(r"\$\{?\w+\}?"), 1)],
}  # fmt: skip
_SIGNATURE_MIN_SCORE = 3
_SIGNATURE_SAMPLE = 20_000


def _language_from_signatures(code: str) -> str | None:
    sample = code[:_SIGNATURE_SAMPLE]
    scores = {
        language: sum(weight for pattern, weight in patterns if pattern.search(sample))
        for language, patterns in _SIGNATURES.items()
    }
    if scores["typescript"] and scores["javascript"]:
        scores["typescript"] += scores["javascript"]  # TypeScript is JavaScript with types
    if scores["cpp"] and scores["c"]:
        scores["cpp"] += scores["c"]
    language, score = max(scores.items(), key=lambda item: item[1])
    return language if score >= _SIGNATURE_MIN_SCORE else None


# pygments knows hundreds of lexers and will pick an exotic one for a short snippet; only its
# answers among common languages are believed.
_GUESSABLE = frozenset(EXTENSION_LANGUAGES.values()) | {"html", "xml", "json", "docker", "make"}


def _guess_language(code: str) -> str | None:
    from pygments.lexers import guess_lexer  # imported lazily: loading lexers is slow
    from pygments.util import ClassNotFound

    try:
        lexer = guess_lexer(code[:_SIGNATURE_SAMPLE])
    except ClassNotFound:
        return None
    aliases = getattr(lexer, "aliases", None) or []
    language = normalize_language(aliases[0]) if aliases else None
    return language if language in _GUESSABLE else None
