"""Content extraction (spec §3.2): turn what a client saved into the clean text that is chunked and
indexed, plus what can be learned on the way (title, programming language, page offsets, ...).

Pure functions: no network, no files. Everything a client can get wrong raises
`InvalidInputError` naming the `content` field, so the API answers 400 instead of 500.
"""

from __future__ import annotations

import base64
import binascii
import email
import email.policy
import email.utils
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.html_parser import HTML_PARSER

DEFAULT_MAX_CHARS = 500_000
TITLE_MAX_CHARS = 200  # a derived title is a label, not content
LINE_TITLE_MAX_CHARS = 80  # a title made from the first line of plain text

@dataclass(frozen=True)
class Extracted:
    """The result of extraction. `text` is what gets chunked, embedded and indexed."""

    text: str
    content_type: ContentType
    title: str | None = None
    language: str | None = None  # programming language, for code
    metadata: dict[str, Any] = field(default_factory=dict)
    page_offsets: list[int] | None = None  # PDF: where each page begins in `text`


# --------------------------------------------------------------------------- public entry point


def extract(
    raw: str | bytes,
    content_type: ContentType | None = None,
    *,
    title: str | None = None,
    source_url: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Extracted:
    """Extract clean text from `raw`. `content_type` None means: detect it from the content.

    An explicit, non-blank `title` wins over a derived one; it (and `source_url`) also serve as file
    names for detecting code and its language.
    """
    given_title = _clean_title(title) if title else None
    if content_type is None:
        content_type, raw = _detect(raw, title=title, source_url=source_url)

    if content_type is ContentType.PDF:
        result = _extract_pdf(raw)
    else:
        text = _decode(raw)  # already a str unless bytes came with an explicit type
        if not text.strip():
            raise InvalidInputError("content", "is empty")
        result = _EXTRACTORS[content_type](text, content_type, title, source_url)

    text, truncated = _trim(result.text, max_chars)
    if not text.strip():
        raise InvalidInputError("content", "has no text after extraction")
    metadata = dict(result.metadata)
    if truncated:
        metadata["truncated"] = True
    page_offsets = result.page_offsets
    if page_offsets is not None and truncated:
        page_offsets = [offset for offset in page_offsets if offset < len(text)] or [0]
    return Extracted(
        text=text,
        content_type=content_type,
        title=given_title or result.title,
        language=result.language,
        metadata=metadata,
        page_offsets=page_offsets,
    )


# --------------------------------------------------------------------------- decoding and detection


def _decode(raw: str | bytes) -> str:
    if isinstance(raw, str):
        return raw
    encoding = "utf-16" if raw.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InvalidInputError("content", f"is not UTF-8 text (bad byte at position {exc.start})") from exc
    sample = text[:10_000]
    controls = sum(1 for char in sample if char < " " and char not in "\t\n\r\f\v")
    if controls > len(sample) // 20:  # decodable, but binary all the same (an image, an archive)
        raise InvalidInputError("content", "looks like binary data, not text")
    return text


_BASE64_PDF_PREFIX = "JVBERi0"  # base64 of "%PDF-"
_DOCTYPE_OR_HTML = re.compile(
    r"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html[\s>])", re.IGNORECASE | re.DOTALL
)
_HTML_SKELETON = re.compile(r"<(?:html|head|body)[\s>]", re.IGNORECASE)
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|article|b|blockquote|body|br|code|dd|div|dl|dt|em|h[1-6]|head|hr|i|img|li|link|main|"
    r"meta|ol|p|pre|section|span|strong|table|tbody|td|th|thead|title|tr|u|ul)\b[^>]*>",
    re.IGNORECASE,
)
_MD_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_MD_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
_MD_LINK = re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")
_MD_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)


def _detect(
    raw: str | bytes, *, title: str | None, source_url: str | None
) -> tuple[ContentType, str | bytes]:
    """Guess the content type from clear signals only; anything unclear is plain text."""
    if isinstance(raw, bytes):
        if raw.lstrip()[:5] == b"%PDF-":
            return ContentType.PDF, raw
        raw = _decode(raw)
    head = raw.lstrip()[:1024]
    if head.startswith(_BASE64_PDF_PREFIX):
        return ContentType.PDF, raw
    if _DOCTYPE_OR_HTML.match(head) or (head.startswith("<") and _HTML_SKELETON.search(head)):
        return ContentType.HTML, raw
    if head[:1] in ("{", "[") and _parses_as_json_container(raw):
        return ContentType.JSON, raw
    extension = _file_extension(title, source_url)
    if raw.startswith("#!") or (extension in _CODE_EXTENSIONS and not _is_web_page_url(source_url, title)):
        return ContentType.CODE, raw
    if extension in _MARKDOWN_EXTENSIONS:
        return ContentType.MARKDOWN, raw
    # Markdown first: READMEs often open with an HTML logo block but are markdown all the same.
    if _looks_like_markdown(raw):
        return ContentType.MARKDOWN, raw
    if _looks_like_html_fragment(raw):
        return ContentType.HTML, raw
    return ContentType.TEXT, raw


def _parses_as_json_container(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), dict | list)
    except ValueError:
        return False


def _looks_like_html_fragment(raw: str) -> bool:
    # Markdown may carry the odd inline tag; an HTML fragment is made of them.
    tags = len(_HTML_TAG.findall(raw, 0, 200_000))
    if tags < 3:
        return False
    return raw.lstrip().startswith("<") or tags * 120 >= min(len(raw), 200_000)


def _looks_like_markdown(raw: str) -> bool:
    sample = raw[:200_000]
    if _MD_HEADING.search(sample) or _MD_FENCE.search(sample) or _MD_LINK.search(sample):
        return True
    return len(_MD_LIST_ITEM.findall(sample)) >= 3


# --------------------------------------------------------------------------- plain text


_TRAILING_SPACE = re.compile(r"[ \t\f\v]+$", re.MULTILINE)
_MANY_NEWLINES = re.compile(r"\n{3,}")


def normalize_whitespace(text: str) -> str:
    """Unify newlines, drop trailing spaces, keep at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _TRAILING_SPACE.sub("", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip("\n")


def _first_line_title(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().lstrip("#>*-• \t").strip()
        if line:
            return _shorten(line, LINE_TITLE_MAX_CHARS)
    return None


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _clean_title(title: str) -> str | None:
    cleaned = " ".join(title.split()).strip(" ¶§🔗")
    return _shorten(cleaned, TITLE_MAX_CHARS) if cleaned else None


_MD_TITLE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


def _markdown_title(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for match in _MD_TITLE.finditer(text, 0, 50_000):
        level = len(match.group(1))
        if best is None or level < best[0]:
            best = (level, match.group(2))
        if level == 1:
            break
    if best is None:
        return None
    return _clean_title(_MD_INLINE_LINK.sub(r"\1", best[1]).replace("**", "").replace("`", ""))


_MD_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _extract_plain(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    text = normalize_whitespace(raw)
    derived = _markdown_title(text) if content_type is ContentType.MARKDOWN else None
    return Extracted(text=text, content_type=content_type, title=derived or _first_line_title(text))


# --------------------------------------------------------------------------- HTML

# Page chrome that never belongs to the content being saved.
_CHROME_TAGS = [
    "script", "style", "noscript", "template", "svg", "iframe", "nav", "aside", "button",
    "input", "select", "textarea", "dialog", "object", "embed", "canvas", "link", "meta",
]  # fmt: skip
# Elements that are chrome by their attributes: [role=navigation|banner|contentinfo|search],
# [aria-hidden="true"], [hidden]. Matched by a predicate in one pass of bs4's find_all: a CSS
# selector through soupsieve did the same at several times the cost (a fifth of the extraction
# time on the Python docs' large pages).
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "search"})


def _is_chrome_by_attributes(tag: Tag) -> bool:
    attrs = tag.attrs
    return bool(attrs) and (
        attrs.get("role") in _CHROME_ROLES or attrs.get("aria-hidden") == "true" or "hidden" in attrs
    )


def _is_main_role(tag: Tag) -> bool:
    return tag.attrs.get("role") == "main"

# Heading anchors inserted by Sphinx, MkDocs, Docusaurus, GitHub and friends.
_PERMALINK_SYMBOLS = {"¶", "#", "§", "🔗"}
_PERMALINK_WORDS = {"link", "permalink", "direct link", "anchor"}
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)
_LANGUAGE_CLASS = re.compile(
    r"^(?:(?:language|lang|highlight)-(?:source-)?|brush:\s*)([\w+#-]+)$", re.IGNORECASE
)
_NOT_A_LANGUAGE = {"default", "none", "text", "plain", "plaintext", "nohighlight", "notranslate", "source"}


def _extract_html(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    text, derived = html_to_markdown(raw, source_url=source_url)
    return Extracted(text=text, content_type=content_type, title=derived or _first_line_title(text))


def html_to_markdown(html: str, *, source_url: str | None = None) -> tuple[str, str | None]:
    """Spec §3.2's cleaning algorithm: the page's main content as markdown, and its title."""
    soup = BeautifulSoup(html, HTML_PARSER)
    page_title = soup.title.get_text(" ", strip=True) if soup.title else None
    _remove_chrome(soup)
    root = _main_content(soup)
    _remove_permalinks(root)
    _simplify_links_and_images(root, source_url)
    h1 = root.find("h1") or soup.find("h1")
    heading = h1.get_text(" ", strip=True) if isinstance(h1, Tag) else None
    text = normalize_whitespace(_MARKDOWN.convert_soup(root).replace("\u00a0", " "))
    return text, _clean_title(heading or "") or _clean_title(page_title or "")


def _remove_chrome(soup: BeautifulSoup) -> None:
    for tag in soup.find_all(_CHROME_TAGS):
        tag.decompose()
    for tag in soup.find_all(_is_chrome_by_attributes):
        tag.decompose()
    # A <header> inside the article is the article's own title block (h1, byline): keep it.
    # Site-wide headers and footers go.
    for tag in soup.find_all(["header", "footer"]):
        if tag.name == "footer" or tag.find_parent(["article", "main"]) is None:
            tag.decompose()
    # Small forms (search boxes, newsletter sign-ups) are chrome; some frameworks wrap the whole
    # page in a <form>, which must then be kept.
    for form in soup.find_all("form"):
        if form.find(["main", "article", "h1", "h2"]) is None:
            form.decompose()
        else:
            form.unwrap()


def _main_content(soup: BeautifulSoup) -> Tag:
    body = soup.body or soup
    candidates: list[Tag] = [tag for tag in soup.find_all("main")]
    candidates += [tag for tag in soup.find_all(_is_main_role) if tag not in candidates]
    if not candidates:
        # Several sibling articles make an index page: keep them all (the body).
        articles = [a for a in soup.find_all("article") if a.find_parent("article") is None]
        if len(articles) == 1:
            candidates = articles
    candidates = [tag for tag in candidates if tag.get_text(strip=True)]
    if not candidates:
        return body
    return max(candidates, key=lambda tag: len(tag.get_text()))


def _remove_permalinks(root: Tag) -> None:
    for anchor in root.find_all("a"):
        label = anchor.get_text().translate(_ZERO_WIDTH).strip().lower()
        in_page = str(anchor.get("href") or "").startswith("#")
        if (
            label in _PERMALINK_SYMBOLS
            or (not label and anchor.find("img") is None)  # an icon link whose <svg> is gone
            or (label in _PERMALINK_WORDS and in_page)
        ):
            anchor.decompose()


def _simplify_links_and_images(root: Tag, base_url: str | None) -> None:
    """Links become absolute (relative ones mean nothing once the page is gone); in-page and script
    links become plain text; images become their alt text (their URLs are noise to both search legs)."""
    for anchor in root.find_all("a"):
        href = str(anchor.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:")):
            anchor.unwrap()
        elif base_url and not urlsplit(href).scheme:
            anchor["href"] = urljoin(base_url, href)
    for image in root.find_all("img"):
        alt = str(image.get("alt") or "").strip()
        if alt:
            image.replace_with(alt)
        else:
            image.decompose()


def _code_block_language(pre: Tag) -> str | None:
    """The language of a <pre> code block from the class names docs generators put on it."""
    nodes: list[Tag] = [pre]
    code = pre.find("code")
    if isinstance(code, Tag):
        nodes.append(code)
    parent = pre.parent
    for _ in range(2):  # Sphinx: <div class="highlight-python3"><div class="highlight"><pre>
        if isinstance(parent, Tag):
            nodes.append(parent)
            parent = parent.parent
    for node in nodes:
        classes: list[str] = list(node.get_attribute_list("class") or [])
        for cls in classes:
            match = _LANGUAGE_CLASS.match(cls)
            if match:
                language = normalize_language(match.group(1))
                if language and language not in _NOT_A_LANGUAGE:
                    return language
        lang = node.get("data-lang") or node.get("data-language")
        if lang:
            return normalize_language(str(lang))
    return None


# markdownify tuned for indexing: ATX headings, "-" bullets, fenced code with its language, and no
# backslash escapes (text is indexed and read, not re-rendered; `snake\_case` would hurt search).
_MARKDOWN = MarkdownConverter(
    heading_style="ATX",
    bullets="-",
    escape_asterisks=False,
    escape_underscores=False,
    escape_misc=False,
    code_language_callback=_code_block_language,
    table_infer_header=True,
)


# --------------------------------------------------------------------------- code

# File extension → language. Names follow pygments' first alias where one exists.
_EXTENSION_LANGUAGES = {
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
_CODE_EXTENSIONS = frozenset(_EXTENSION_LANGUAGES)
_MARKDOWN_EXTENSIONS = frozenset({"md", "markdown", "mdx", "mkd"})
_SPECIAL_FILENAMES = {"dockerfile": "docker", "makefile": "make", "cmakelists.txt": "cmake"}
# A page served by one of these is HTML or text, not the script's source.
_SERVER_PAGE_EXTENSIONS = frozenset({"php", "pl", "cgi", "asp", "aspx", "jsp"})
_FILENAME = re.compile(r"^[\w.@+/\\-]*\.([A-Za-z0-9+]{1,10})$")
_SHEBANG = re.compile(r"^#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?([A-Za-z]+)")
_SHEBANG_LANGUAGES = {
    "python": "python", "node": "javascript", "deno": "typescript", "bun": "javascript", "bash": "bash",
    "sh": "bash", "zsh": "bash", "dash": "bash", "ksh": "bash", "ruby": "ruby", "perl": "perl", "php": "php",
    "lua": "lua", "rscript": "r", "fish": "fish", "pwsh": "powershell", "julia": "julia", "tclsh": "tcl",
}  # fmt: skip
_LANGUAGE_ALIASES = {
    "py": "python", "python3": "python", "py3": "python", "python2": "python", "pycon": "python",
    "ipython": "python", "ipython3": "python", "js": "javascript", "node": "javascript",
    "nodejs": "javascript", "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "golang": "go",
    "rs": "rust", "c++": "cpp", "cxx": "cpp", "c#": "csharp", "cs": "csharp", "rb": "ruby", "sh": "bash",
    "shell": "bash", "zsh": "bash", "console": "bash", "shell-session": "bash", "kt": "kotlin",
    "objc": "objective-c", "yml": "yaml", "ps1": "powershell", "pwsh": "powershell", "html+jinja": "html",
}  # fmt: skip


def normalize_language(name: str) -> str:
    """One spelling per language ('py', 'python3' → 'python'), lowercase."""
    key = name.strip().lower()
    return _LANGUAGE_ALIASES.get(key, key)


def _file_extension(*names: str | None) -> str | None:
    for name in names:
        if not name:
            continue
        path = urlsplit(name).path if "://" in name else name.strip()
        basename = path.rsplit("/", 1)[-1].lower()
        if basename in _SPECIAL_FILENAMES:
            return basename
        match = _FILENAME.match(basename)
        if match:
            return match.group(1).lower()
    return None


def _is_web_page_url(source_url: str | None, title: str | None) -> bool:
    return _file_extension(title) is None and _file_extension(source_url) in _SERVER_PAGE_EXTENSIONS


def detect_language(code: str, *, title: str | None = None, source_url: str | None = None) -> str | None:
    """The programming language of `code`: file extension, then shebang, then the content itself."""
    extension = _file_extension(title, source_url)
    if extension in _EXTENSION_LANGUAGES:
        return _EXTENSION_LANGUAGES[extension]
    if extension in _SPECIAL_FILENAMES:
        return _SPECIAL_FILENAMES[extension]
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
_GUESSABLE = frozenset(_EXTENSION_LANGUAGES.values()) | {"html", "xml", "json", "docker", "make"}


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


def _extract_code(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
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
    return _clean_title(basename) if basename else None


# --------------------------------------------------------------------------- JSON

_READABLE_KEYS = (
    "title", "name", "description", "summary", "text", "full_text", "body", "content", "message", "author",
)  # fmt: skip
_READABLE_LINES_MAX = 20
_READABLE_VALUE_MAX = 500


def _extract_json(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            "content", f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    lines: list[str] = []
    seen: set[str] = set()
    for key, value in _readable_fields(data):
        line = f"{key}: {_shorten(value, _READABLE_VALUE_MAX)}"
        if line not in seen:
            seen.add(line)
            lines.append(line)
        if len(lines) >= _READABLE_LINES_MAX:
            break
    pretty = json.dumps(data, indent=2, ensure_ascii=False)
    text = "\n".join(lines) + "\n\n" + pretty if lines else pretty
    return Extracted(text=text, content_type=content_type, title=_json_title(data))


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
    if isinstance(data, dict):
        for key in ("title", "name", "subject"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return _clean_title(value)
    for wanted in ("title", "name"):
        for key, value in _readable_fields(data):
            if key.lower() == wanted:
                return _clean_title(value)
    return None


# --------------------------------------------------------------------------- PDF

_DATA_URL_PREFIX = re.compile(r"^data:[\w/+.-]*;base64,", re.IGNORECASE)
_JUNK_PDF_TITLES = re.compile(
    r"^(?:untitled|microsoft word - .*|.*\.(?:docx?|pdf|tex|odt|rtf|pptx?))$", re.IGNORECASE
)


def _pdf_bytes(raw: str | bytes) -> bytes:
    if isinstance(raw, bytes):
        data = raw
    elif raw.lstrip().startswith("%PDF-"):
        data = raw.encode("latin-1", errors="replace")
    else:
        encoded = "".join(_DATA_URL_PREFIX.sub("", raw.strip()).split())
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidInputError("content", "is not a PDF (expected PDF bytes or base64)") from exc
    if data.lstrip()[:5] != b"%PDF-":
        raise InvalidInputError("content", "is not a PDF (no %PDF- header)")
    return data


class ScannedPdfError(InvalidInputError):
    """A PDF with pages that are pictures of text (no text layer): those pages need OCR, which is
    not extraction's job (memlane.documents.media reads them). Carries what extraction found."""

    def __init__(self, data: bytes, page_texts: list[str], scanned: list[int], title: str | None,
                 metadata: dict[str, Any]) -> None:
        super().__init__("content", "has no text after extraction (a scanned PDF needs OCR)")
        self.data = data
        self.page_texts = page_texts
        self.scanned = scanned
        self.title = title
        self.metadata = metadata


def _extract_pdf(raw: str | bytes) -> Extracted:
    from pypdf import PdfReader  # imported lazily: only PDFs need it

    data = _pdf_bytes(raw)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InvalidInputError("content", "is an encrypted PDF")
        pages = [normalize_whitespace(page.extract_text() or "") for page in reader.pages]
        info = reader.metadata
        pdf_title = str(info.title).strip() if info and info.title else ""
        pdf_author = str(info.author).strip() if info and info.author else ""
        # Pages without a text layer that carry a picture are scans of text.
        scanned = [i for i, text in enumerate(pages) if not text and _has_images(reader.pages[i])]
    except InvalidInputError:
        raise
    except Exception as exc:  # pypdf raises many unrelated types for damaged files
        raise InvalidInputError("content", f"is not a readable PDF: {exc}") from exc

    metadata: dict[str, Any] = {"pages": len(pages)}
    if pdf_author:
        metadata["author"] = pdf_author
    title = pdf_title if pdf_title and not _JUNK_PDF_TITLES.match(pdf_title) else None
    if scanned:
        raise ScannedPdfError(data, pages, scanned, _clean_title(title) if title else None, metadata)
    parts: list[str] = []
    offsets: list[int] = []
    length = 0
    for page_text in pages:
        if page_text and parts:
            parts.append("\n\n")
            length += 2
        offsets.append(length)
        if page_text:
            parts.append(page_text)
            length += len(page_text)
    text = "".join(parts)
    if not text.strip():
        raise InvalidInputError("content", "has no text after extraction")
    return Extracted(
        text=text,
        content_type=ContentType.PDF,
        title=_clean_title(title) if title else _first_line_title(text),
        metadata=metadata,
        page_offsets=offsets,
    )


def _has_images(page: Any) -> bool:
    try:
        resources = page["/Resources"].get_object() if "/Resources" in page else {}
        xobjects = resources["/XObject"].get_object() if "/XObject" in resources else {}
        return any(xobjects[name].get_object().get("/Subtype") == "/Image" for name in xobjects)
    except Exception:  # noqa: BLE001 - a page whose resources cannot be read has no usable picture
        return False


# --------------------------------------------------------------------------- email

_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:[ \t]")


def _extract_email(
    raw: str, content_type: ContentType, title: str | None, source_url: str | None
) -> Extracted:
    message = _parse_email(raw)
    if message is None:
        return _extract_plain(raw, content_type, title, source_url)
    subject = " ".join(str(message.get("subject", "")).split())
    metadata: dict[str, Any] = {}
    if message.get("from"):
        metadata["author"] = " ".join(str(message["from"]).split())
    if message.get("date"):
        metadata["date"] = _iso_date(str(message["date"]))
    if subject:
        metadata["subject"] = subject

    text = ""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is not None:
        try:
            content = part.get_content()
        except (LookupError, ValueError):  # an unknown or lying charset: decode what we can
            payload = part.get_payload(decode=True)
            content = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""
        if isinstance(content, bytes):
            content = content.decode("utf-8", errors="replace")
        if part.get_content_subtype() == "html":
            text, _ = html_to_markdown(content)
        else:
            text = normalize_whitespace(content)
    if not text.strip():
        text = subject
    return Extracted(
        text=text,
        content_type=content_type,
        title=_clean_title(subject) if subject else _first_line_title(text),
        metadata=metadata,
    )


def _parse_email(raw: str) -> EmailMessage | None:
    """The message, when `raw` starts with an RFC 822 header block naming a sender or subject."""
    first_line = raw.lstrip("\r\n").split("\n", 1)[0]
    if not _HEADER_LINE.match(first_line):
        return None
    message = email.message_from_string(raw.lstrip("\r\n"), policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not (message.get("from") or message.get("subject")):
        return None
    return message


def _iso_date(value: str) -> str:
    try:
        return email.utils.parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError):
        return value.strip()


# --------------------------------------------------------------------------- trimming and dispatch


def _trim(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut to `max_chars`, at a whitespace near the limit when there is one."""
    if len(text) <= max_chars:
        return text, False
    cut = text[:max_chars]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= max_chars - 1000 and space > 0:
        cut = cut[:space]
    return cut.rstrip(), True


_EXTRACTORS = {
    ContentType.TEXT: _extract_plain,
    ContentType.MARKDOWN: _extract_plain,
    ContentType.NOTE: _extract_plain,
    ContentType.TWEET: _extract_plain,
    ContentType.IMAGE: _extract_plain,  # locally, the client sends the already-extracted text
    ContentType.AUDIO: _extract_plain,  # likewise: the transcript
    ContentType.VIDEO: _extract_plain,
    ContentType.HTML: _extract_html,
    ContentType.CODE: _extract_code,
    ContentType.JSON: _extract_json,
    ContentType.EMAIL: _extract_email,
}
