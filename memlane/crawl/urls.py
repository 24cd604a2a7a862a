"""Pure URL helpers for the crawler: normalisation, docset scope, link extraction, binary filtering.

`normalize_url` gives every page one spelling, so the frontier can dedupe on strings:
relative links resolved, scheme and host lowercased (IDNA hosts in their ASCII form), default
ports dropped, dot segments removed, percent-escapes made uniform (unreserved characters decoded,
hex upper-cased, spaces and non-ASCII encoded as UTF-8), the fragment dropped. The query is kept
in its original order. Links that are not web pages (mailto:, javascript:, tel:, data:, any
scheme other than http/https) normalise to None. The function is idempotent.

These helpers decide what the crawler *wants*; whether a URL is *safe* to fetch is decided by
memlane.crawl.ssrf at fetch time.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from string import ascii_letters, digits, hexdigits
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from bs4 import BeautifulSoup, SoupStrainer

from memlane.ingest.html_parser import HTML_PARSER

WEB_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}

_UNRESERVED = frozenset(ascii_letters + digits + "-._~")
_SUB_DELIMS = "!$&'()*+,;="
#: Characters left as they are in a path / a query by `percent_normalize` (besides unreserved).
PATH_SAFE = frozenset(_SUB_DELIMS + ":@/")
QUERY_SAFE = frozenset(_SUB_DELIMS + ":@/?")
_HOST_CHARS = re.compile(r"[a-z0-9_.-]+")
# WHATWG URL parsing removes ASCII tab and newline anywhere in the input.
_TAB_NEWLINE = re.compile(r"[\t\n\r]")

HTML_MIME_TYPES = frozenset({"text/html", "application/xhtml+xml"})
GENERIC_MIME_TYPES = frozenset({"application/octet-stream", "binary/octet-stream"})
HTML_EXTENSIONS = frozenset({"html", "htm", "xhtml", "shtml"})
# Links to these are not pages worth fetching.
NON_HTML_EXTENSIONS = frozenset(
    {
        # images
        "png", "jpg", "jpeg", "gif", "webp", "svg", "ico", "bmp", "tif", "tiff", "avif",
        # documents
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "epub",
        # archives and packages
        "zip", "gz", "tgz", "tar", "bz2", "xz", "7z", "rar", "zst", "jar", "whl", "egg",
        # web assets and data
        "css", "js", "mjs", "cjs", "map", "wasm", "json", "xml", "rss", "atom", "csv", "tsv",
        # fonts
        "woff", "woff2", "ttf", "otf", "eot",
        # audio and video
        "mp3", "mp4", "m4a", "m4v", "webm", "ogg", "ogv", "oga", "wav", "flac", "avi", "mov", "mkv",
        # executables and images
        "exe", "dmg", "msi", "deb", "rpm", "apk", "iso", "img", "bin", "dll", "so", "dylib",
    }
)  # fmt: skip


def percent_normalize(text: str, safe: frozenset[str]) -> str:
    """Uniform percent-encoding (idempotent): escapes of unreserved characters decoded, other escapes
    upper-cased, a stray '%' encoded as %25, any character outside `safe` encoded as UTF-8."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) == 2 and all(c in hexdigits for c in pair):
                decoded = chr(int(pair, 16))
                out.append(decoded if decoded in _UNRESERVED else "%" + pair.upper())
                i += 3
                continue
            out.append("%25")
        elif char in _UNRESERVED or char in safe:
            out.append(char)
        else:
            out.append(quote(char, safe=""))
        i += 1
    return "".join(out)


def normalize_path(path: str) -> str:
    """A URL path with uniform percent-encoding and no dot segments; "/" when empty."""
    return remove_dot_segments(percent_normalize(path, PATH_SAFE)) or "/"


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4: resolve "." and ".." segments of an absolute path."""
    if not path:
        return path
    segments = path.split("/")
    resolved: list[str] = []
    for segment in segments:
        if segment == "..":
            if len(resolved) > 1:
                resolved.pop()
        elif segment != ".":
            resolved.append(segment)
    if segments[-1] in (".", ".."):
        resolved.append("")
    result = "/".join(resolved)
    if path.startswith("/") and not result.startswith("/"):
        result = "/" + result
    return result


def _normalize_host(hostname: str) -> str | None:
    host = hostname.lower()
    if ":" in host:
        try:
            return f"[{ipaddress.IPv6Address(host)}]"
        except ValueError:
            return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return host if _HOST_CHARS.fullmatch(host) else None


def normalize_url(url: str, base: str | None = None) -> str | None:
    """The canonical absolute form of `url` (resolved against `base`), or None when it is not an
    http(s) page link or cannot be parsed."""
    candidate = _TAB_NEWLINE.sub("", url).strip()
    try:
        if base is not None:
            candidate = urljoin(_TAB_NEWLINE.sub("", base).strip(), candidate)
        candidate.encode("utf-8")  # lone surrogates cannot be percent-encoded
        parts = urlsplit(candidate)
        port = parts.port
    except (ValueError, UnicodeError):
        return None
    scheme = parts.scheme.lower()
    if scheme not in WEB_SCHEMES or not parts.hostname:
        return None
    host = _normalize_host(parts.hostname)
    if host is None:
        return None
    userinfo, at, _ = parts.netloc.rpartition("@")
    netloc = f"{userinfo}{at}{host}"
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    path = normalize_path(parts.path)
    query = percent_normalize(parts.query, QUERY_SAFE)
    return urlunsplit((scheme, netloc, path, query, ""))


# --------------------------------------------------------------------------- scope


def _path_prefix(prefix: str) -> str:
    prefix = prefix.strip()
    if not prefix.startswith("/"):
        prefix = "/" + prefix
    return percent_normalize(prefix, PATH_SAFE)


def directory_of(path: str) -> str:
    """The directory part of a URL path: "/docs/intro" -> "/docs/", "/docs/" -> "/docs/"."""
    return path[: path.rfind("/") + 1] or "/"


@dataclass(frozen=True)
class UrlScope:
    """The URLs that belong to one docset: same scheme and host[:port] as the base URL, and a
    path starting with one of `path_prefixes` (plain string prefixes, as Mem-Oracle's
    allowedPaths: "/docs" also covers "/docs-v2")."""

    scheme: str
    netloc: str
    path_prefixes: tuple[str, ...]

    @classmethod
    def for_docset(cls, base_url: str, allowed_paths: Sequence[str] | None = None) -> UrlScope:
        """Raises ValueError when `base_url` is not an absolute http(s) URL."""
        base = normalize_url(base_url)
        if base is None:
            raise ValueError(f"not an absolute http(s) URL: {base_url!r}")
        parts = urlsplit(base)
        prefixes = tuple(_path_prefix(p) for p in (allowed_paths or ()) if p.strip())
        return cls(parts.scheme, parts.netloc, prefixes or (directory_of(parts.path),))

    def contains(self, url: str) -> bool:
        normalized = normalize_url(url)
        if normalized is None:
            return False
        parts = urlsplit(normalized)
        if parts.scheme != self.scheme or parts.netloc != self.netloc or "@" in parts.netloc:
            return False
        return any(parts.path.startswith(prefix) for prefix in self.path_prefixes)


def in_scope(url: str, base_url: str, allowed_paths: Sequence[str] | None = None) -> bool:
    """True when `url` has the base URL's scheme and host and a path under `allowed_paths` (or,
    without them, under the base URL's path directory). URLs with credentials are never in scope."""
    try:
        scope = UrlScope.for_docset(base_url, allowed_paths)
    except ValueError:
        return False
    return scope.contains(url)


# --------------------------------------------------------------------------- pages


_LINK_TAGS = SoupStrainer(["a", "area", "base"])


def extract_links(html: bytes | str, page_url: str) -> list[str]:
    """Normalised, deduplicated http(s) targets of the page's <a href> and <area href>, in page
    order, resolved against <base href> when the page declares one. rel=nofollow is followed: the
    crawler indexes documentation, it does not pass ranking."""
    base_href, hrefs = _link_attributes(html)
    base = page_url
    if base_href is not None:
        declared = normalize_url(base_href, page_url)
        if declared is not None:
            base = declared
    links: list[str] = []
    seen: set[str] = set()
    for href in hrefs:
        link = normalize_url(href, base)
        if link is not None and link not in seen:
            seen.add(link)
            links.append(link)
    return links


def _link_attributes(html: bytes | str) -> tuple[str | None, list[str]]:
    """The first <base href> and every <a>/<area> href, in page order.

    With lxml installed (the local install) the page is parsed by libxml2 alone, without building a
    BeautifulSoup tree: on the Python docs' largest pages that is ~10x less CPU than BeautifulSoup
    over lxml even with only these tags kept, and the crawl's fetch threads share two cores and the
    interpreter with the embedder. The Lambda layer leaves lxml out; there BeautifulSoup with
    html.parser finds the same links (a test runs both)."""
    if HTML_PARSER != "lxml":
        return _link_attributes_soup(html)
    from lxml import etree

    # Decoded as the extractor decodes pages (UTF-8, else detected), then handed to libxml2 as
    # UTF-8 with that encoding forced: a page without a charset declaration keeps its non-ASCII
    # links intact instead of being read as Latin-1.
    text = html if isinstance(html, str) else _decode_markup(html)
    parser = etree.HTMLParser(encoding="utf-8", recover=True, no_network=True, remove_comments=True)
    try:
        root = etree.fromstring(text.encode("utf-8", "surrogatepass"), parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None, []
    if root is None:
        return None, []
    base_href: str | None = None
    hrefs: list[str] = []
    for element in root.iter("a", "area", "base"):
        href = element.get("href")
        if href is None:
            continue
        if element.tag != "base":
            hrefs.append(href)
        elif base_href is None:
            base_href = href
    return base_href, hrefs


def _link_attributes_soup(html: bytes | str) -> tuple[str | None, list[str]]:
    soup = BeautifulSoup(html, HTML_PARSER, parse_only=_LINK_TAGS)
    base_tag = soup.find("base", href=True)
    base_href = str(base_tag.get("href")) if base_tag is not None else None
    return base_href, [str(tag.get("href")) for tag in soup.find_all(["a", "area"], href=True)]


def _decode_markup(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        from bs4.dammit import UnicodeDammit

        return UnicodeDammit(raw, is_html=True).unicode_markup or ""




def _extension(url: str) -> str:
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    last = path.rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[-1].lower() if "." in last else ""


def is_probably_html(content_type: str | None, url: str) -> bool:
    """Whether a response (or, with no content type yet, a link) is an HTML page.

    A specific Content-Type decides (text/html and XHTML yes; image/png, application/pdf, text/css
    ... no); a missing type falls back to the URL's extension (known binary and asset extensions
    no, anything else yes); application/octet-stream only passes for an .html-like extension.
    """
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime in HTML_MIME_TYPES:
        return True
    extension = _extension(url)
    if not mime:
        return extension not in NON_HTML_EXTENSIONS
    if mime in GENERIC_MIME_TYPES:
        return extension in HTML_EXTENSIONS
    return False
