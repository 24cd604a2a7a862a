"""Sitemaps (sitemaps.org protocol): ``<urlset>`` files, ``<sitemapindex>`` files, their gzipped
form and the plain-text form (one URL per line).

Safety: the XML is parsed with expat directly, streaming, and any DOCTYPE or entity declaration is
refused - a sitemap never needs one, and refusing them rules out entity-expansion ("billion
laughs") and external-entity attacks without depending on defusedxml (not installed). Gzip is
inflated with a bounded output (50 MB, the protocol's limit for an uncompressed sitemap), and at
most 50,000 URLs are read from one file (also the protocol's limit); beyond that the result is
marked `truncated`.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal
from xml.parsers import expat

from memlane.crawl.errors import FetchError, SitemapError, UnsafeURLError
from memlane.ports import Fetcher

MAX_SITEMAP_URLS = 50_000
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_LOC_CHARS = 4096
GZIP_MAGIC = b"\x1f\x8b"

SitemapKind = Literal["urlset", "index"]


@dataclass(frozen=True)
class SitemapEntry:
    """A page (in a urlset) or a child sitemap (in an index). `url` is the <loc> as written,
    whitespace stripped; only http(s) URLs are kept."""

    url: str
    lastmod: datetime | None = None


@dataclass(frozen=True)
class Sitemap:
    kind: SitemapKind
    entries: tuple[SitemapEntry, ...]
    truncated: bool = False  # the file held more than `max_urls` entries


def parse_lastmod(value: str | None) -> datetime | None:
    """A W3C datetime (``2024-05-01``, ``2024-05-01T10:00:00Z``, ``2024-05``, ``2024``) as an aware
    UTC-based datetime, or None when missing or unreadable."""
    if not value:
        return None
    value = value.strip()
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        for pattern in ("%Y-%m", "%Y"):
            try:
                parsed = datetime.strptime(value, pattern)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def gunzip_capped(data: bytes, max_bytes: int = MAX_SITEMAP_BYTES) -> bytes:
    """Inflate gzip `data`, refusing output beyond `max_bytes` without ever producing more."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, max_bytes + 1)
        if len(out) <= max_bytes and not inflater.unconsumed_tail:
            out += inflater.flush(max_bytes + 1 - len(out))
    except zlib.error as exc:
        raise SitemapError(f"corrupt gzip sitemap: {exc}") from exc
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise SitemapError(f"sitemap exceeds {max_bytes // (1024 * 1024)} MB uncompressed")
    return out


def _is_web_url(value: str) -> bool:
    return value[:8].lower().startswith(("http://", "https://"))


class _Full(Exception):
    """Stops the expat parser once `max_urls` entries were read."""


@dataclass
class _SitemapReader:
    max_urls: int
    kind: SitemapKind | None = None
    entries: list[SitemapEntry] = field(default_factory=list)
    _depth: int = 0
    _in_entry: bool = False
    _field: str | None = None
    _buffer: list[str] = field(default_factory=list)
    _buffered: int = 0
    _loc: str | None = None
    _lastmod: str | None = None

    def start(self, name: str, _attrs: object) -> None:
        local = name.rsplit(" ", 1)[-1]
        self._depth += 1
        if self._depth == 1:
            if local == "urlset":
                self.kind = "urlset"
            elif local == "sitemapindex":
                self.kind = "index"
            else:
                raise SitemapError(f"not a sitemap: the root element is <{local}>")
        elif self._depth == 2 and local == ("url" if self.kind == "urlset" else "sitemap"):
            self._in_entry, self._loc, self._lastmod = True, None, None
        elif self._depth == 3 and self._in_entry and local in ("loc", "lastmod"):
            self._field, self._buffer, self._buffered = local, [], 0

    def text(self, data: str) -> None:
        if self._field is not None and self._buffered <= MAX_LOC_CHARS:
            self._buffer.append(data)
            self._buffered += len(data)

    def end(self, _name: str) -> None:
        if self._depth == 3 and self._field is not None:
            value = "".join(self._buffer).strip()
            if self._buffered > MAX_LOC_CHARS:
                value = ""  # an absurdly long value is dropped, not truncated into another URL
            if self._field == "loc":
                self._loc = value
            else:
                self._lastmod = value
            self._field = None
        elif self._depth == 2 and self._in_entry:
            self._in_entry = False
            if self._loc and _is_web_url(self._loc):
                self.entries.append(SitemapEntry(self._loc, parse_lastmod(self._lastmod)))
                if len(self.entries) >= self.max_urls:
                    raise _Full
        self._depth -= 1


def _refuse_dtd(*_args: object) -> None:
    raise SitemapError("sitemap declares a DOCTYPE or entities; refused")


def _refuse_external_entity(
    _context: str, _base: str | None, _system_id: str | None, _public_id: str | None
) -> int:
    raise SitemapError("sitemap references an external entity; refused")


def _parse_xml(text: bytes, max_urls: int) -> Sitemap:
    reader = _SitemapReader(max_urls=max_urls)
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse_dtd
    parser.EntityDeclHandler = _refuse_dtd
    parser.UnparsedEntityDeclHandler = _refuse_dtd
    parser.ExternalEntityRefHandler = _refuse_external_entity
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    truncated = False
    try:
        parser.Parse(text, True)
    except _Full:
        truncated = True
    except expat.ExpatError as exc:
        raise SitemapError(f"malformed sitemap XML: {exc}") from exc
    if reader.kind is None:
        raise SitemapError("not a sitemap: no root element")
    return Sitemap(kind=reader.kind, entries=tuple(reader.entries), truncated=truncated)


def _parse_text(text: bytes, max_urls: int) -> Sitemap:
    entries: list[SitemapEntry] = []
    for line in text.decode("utf-8", errors="replace").splitlines():
        url = line.strip()
        if url and _is_web_url(url):
            if len(entries) >= max_urls:
                return Sitemap(kind="urlset", entries=tuple(entries), truncated=True)
            entries.append(SitemapEntry(url))
    return Sitemap(kind="urlset", entries=tuple(entries))


def parse_sitemap(
    data: bytes, *, max_urls: int = MAX_SITEMAP_URLS, max_bytes: int = MAX_SITEMAP_BYTES
) -> Sitemap:
    """Parse one sitemap file: XML urlset or sitemap index, gzipped or not, or a text sitemap.
    Raises SitemapError for malformed, oversized or DOCTYPE-carrying files."""
    if data.startswith(GZIP_MAGIC):
        data = gunzip_capped(data, max_bytes)
    elif len(data) > max_bytes:
        raise SitemapError(f"sitemap exceeds {max_bytes // (1024 * 1024)} MB")
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<") or head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _parse_xml(data, max_urls)
    return _parse_text(data, max_urls)


@dataclass(frozen=True)
class SitemapCollection:
    """Pages found by following sitemaps (indexes expanded), deduplicated in discovery order."""

    entries: tuple[SitemapEntry, ...]
    sitemaps_read: tuple[str, ...]
    failures: tuple[tuple[str, str], ...]  # (sitemap URL, reason)
    truncated: bool  # a URL or sitemap cap stopped the walk early


def collect_sitemap_urls(
    fetcher: Fetcher,
    sitemap_urls: Iterable[str],
    *,
    max_urls: int = MAX_SITEMAP_URLS,
    max_sitemaps: int = 50,
) -> SitemapCollection:
    """Fetch `sitemap_urls` (e.g. robots.txt's Sitemap: lines), expanding sitemap indexes, until
    `max_urls` page URLs or `max_sitemaps` files were read. A sitemap that cannot be fetched or
    parsed is recorded in `failures` and skipped; the walk goes on."""
    queue: deque[str] = deque(sitemap_urls)
    seen_sitemaps: set[str] = set()
    read: list[str] = []
    seen_pages: set[str] = set()
    entries: list[SitemapEntry] = []
    failures: list[tuple[str, str]] = []
    truncated = False
    while queue:
        url = queue.popleft()
        if url in seen_sitemaps:
            continue
        if len(seen_sitemaps) >= max_sitemaps or len(entries) >= max_urls:
            truncated = True
            break
        seen_sitemaps.add(url)
        try:
            result = fetcher.fetch(url)
        except (FetchError, UnsafeURLError) as exc:
            failures.append((url, exc.message))
            continue
        if not result.ok:
            failures.append((url, f"HTTP {result.status}"))
            continue
        try:
            sitemap = parse_sitemap(result.content, max_urls=max_urls - len(entries))
        except SitemapError as exc:
            failures.append((url, exc.message))
            continue
        read.append(url)
        truncated = truncated or sitemap.truncated
        if sitemap.kind == "index":
            queue.extend(entry.url for entry in sitemap.entries)
            continue
        for entry in sitemap.entries:
            if entry.url not in seen_pages:
                seen_pages.add(entry.url)
                entries.append(entry)
    return SitemapCollection(
        entries=tuple(entries),
        sitemaps_read=tuple(read),
        failures=tuple(failures),
        truncated=truncated,
    )
