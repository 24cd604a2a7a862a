"""Sitemap parsing: urlset, index, gzip, text, caps and refusal of DOCTYPE/entities."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime

import pytest

from memlane.crawl.errors import FetchError, SitemapError
from memlane.crawl.sitemap import collect_sitemap_urls, gunzip_capped, parse_lastmod, parse_sitemap
from memlane.ports import FetchResult

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://docs.example.com/</loc><lastmod>2024-05-01</lastmod></url>
  <url>
    <loc>
      https://docs.example.com/guide/intro
    </loc>
    <lastmod>2024-05-02T10:30:00+02:00</lastmod>
    <changefreq>weekly</changefreq>
  </url>
  <url><loc>https://docs.example.com/api?x=1&amp;y=2</loc></url>
  <url><loc>ftp://docs.example.com/not-a-page</loc></url>
  <url><lastmod>2024-01-01</lastmod></url>
</urlset>
"""

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://docs.example.com/sitemap-guide.xml</loc><lastmod>2024-04-30T00:00:00Z</lastmod></sitemap>
  <sitemap><loc>https://docs.example.com/sitemap-api.xml.gz</loc></sitemap>
</sitemapindex>
"""


def test_parse_urlset() -> None:
    sitemap = parse_sitemap(URLSET)
    assert sitemap.kind == "urlset"
    assert [e.url for e in sitemap.entries] == [
        "https://docs.example.com/",
        "https://docs.example.com/guide/intro",
        "https://docs.example.com/api?x=1&y=2",
    ]
    assert sitemap.entries[0].lastmod == datetime(2024, 5, 1, tzinfo=UTC)
    assert sitemap.entries[1].lastmod == datetime(2024, 5, 2, 8, 30, tzinfo=UTC)
    assert sitemap.entries[2].lastmod is None
    assert sitemap.truncated is False


def test_parse_index() -> None:
    sitemap = parse_sitemap(INDEX)
    assert sitemap.kind == "index"
    assert [e.url for e in sitemap.entries] == [
        "https://docs.example.com/sitemap-guide.xml",
        "https://docs.example.com/sitemap-api.xml.gz",
    ]
    assert sitemap.entries[0].lastmod == datetime(2024, 4, 30, tzinfo=UTC)


def test_parse_gzipped_sitemap() -> None:
    sitemap = parse_sitemap(gzip.compress(URLSET))
    assert sitemap.kind == "urlset"
    assert len(sitemap.entries) == 3


def test_parse_without_namespace_and_text_sitemap() -> None:
    bare = b"<urlset><url><loc>https://a.example/x</loc></url></urlset>"
    assert [e.url for e in parse_sitemap(bare).entries] == ["https://a.example/x"]
    text = b"https://a.example/1\n\n  https://a.example/2  \nnot a url\n"
    assert [e.url for e in parse_sitemap(text).entries] == ["https://a.example/1", "https://a.example/2"]


def test_url_cap_truncates() -> None:
    body = (
        b"<urlset>"
        + b"".join(b"<url><loc>https://a.example/%d</loc></url>" % i for i in range(30))
        + b"</urlset>"
    )
    sitemap = parse_sitemap(body, max_urls=10)
    assert len(sitemap.entries) == 10
    assert sitemap.entries[-1].url == "https://a.example/9"
    assert sitemap.truncated is True


def test_default_cap_is_50000() -> None:
    body = b"<urlset>" + b"<url><loc>https://a.example/p</loc></url>" * 50_010 + b"</urlset>"
    sitemap = parse_sitemap(body)
    assert len(sitemap.entries) == 50_000
    assert sitemap.truncated is True


def test_doctype_and_entities_are_refused() -> None:
    laughs = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<urlset><url><loc>&lol2;</loc></url></urlset>"""
    with pytest.raises(SitemapError, match="DOCTYPE"):
        parse_sitemap(laughs)
    external = b"""<?xml version="1.0"?>
<!DOCTYPE urlset SYSTEM "file:///etc/passwd"><urlset/>"""
    with pytest.raises(SitemapError, match="DOCTYPE"):
        parse_sitemap(external)


def test_malformed_and_foreign_xml_are_errors() -> None:
    with pytest.raises(SitemapError, match="malformed sitemap XML"):
        parse_sitemap(b"<urlset><url><loc>https://a.example/</url>")
    with pytest.raises(SitemapError, match="root element is <html>"):
        parse_sitemap(b"<html><body>not a sitemap</body></html>")


def test_gzip_bomb_is_capped() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * (3 * 1024 * 1024) + b"</urlset>")
    with pytest.raises(SitemapError, match="exceeds 2 MB uncompressed"):
        parse_sitemap(bomb, max_bytes=2 * 1024 * 1024)
    assert gunzip_capped(gzip.compress(b"x" * 100), 100) == b"x" * 100
    with pytest.raises(SitemapError):
        gunzip_capped(b"\x1f\x8b not really gzip", 100)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("yesterday", None),
        (None, None),
    ],
)
def test_parse_lastmod(value: str | None, expected: datetime | None) -> None:
    assert parse_lastmod(value) == expected


class _SiteFetcher:
    """A fake Fetcher serving sitemap files from a dict."""

    def __init__(self, files: dict[str, bytes | int | Exception]) -> None:
        self.files = files
        self.urls: list[str] = []

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        self.urls.append(url)
        body = self.files.get(url, 404)
        if isinstance(body, Exception):
            raise body
        if isinstance(body, int):
            return FetchResult(url, body, b"", None, None, None)
        return FetchResult(url, 200, body, "application/xml", None, None)


def test_collect_follows_an_index_into_plain_and_gzipped_children() -> None:
    guide = b"""<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>https://docs.example.com/guide/a</loc></url>
      <url><loc>https://docs.example.com/guide/b</loc></url></urlset>"""
    api = b"""<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>https://docs.example.com/api/x</loc><lastmod>2024-02-03</lastmod></url>
      <url><loc>https://docs.example.com/guide/a</loc></url></urlset>"""
    fetcher = _SiteFetcher(
        {
            "https://docs.example.com/sitemap.xml": INDEX,
            "https://docs.example.com/sitemap-guide.xml": guide,
            "https://docs.example.com/sitemap-api.xml.gz": gzip.compress(api),
        }
    )
    collection = collect_sitemap_urls(fetcher, ["https://docs.example.com/sitemap.xml"])
    assert [e.url for e in collection.entries] == [
        "https://docs.example.com/guide/a",
        "https://docs.example.com/guide/b",
        "https://docs.example.com/api/x",
    ]
    assert collection.entries[2].lastmod == datetime(2024, 2, 3, tzinfo=UTC)
    assert collection.sitemaps_read == (
        "https://docs.example.com/sitemap.xml",
        "https://docs.example.com/sitemap-guide.xml",
        "https://docs.example.com/sitemap-api.xml.gz",
    )
    assert collection.failures == ()
    assert collection.truncated is False


def test_collect_records_failures_and_goes_on() -> None:
    fetcher = _SiteFetcher(
        {
            "https://a.example/s1.xml": 404,
            "https://a.example/s2.xml": FetchError("HTTP 503 from https://a.example/s2.xml", transient=True),
            "https://a.example/s3.xml": b"<!DOCTYPE x><urlset/>",
            "https://a.example/s4.xml": b"<urlset><url><loc>https://a.example/ok</loc></url></urlset>",
        }
    )
    collection = collect_sitemap_urls(fetcher, [f"https://a.example/s{i}.xml" for i in range(1, 5)])
    assert [e.url for e in collection.entries] == ["https://a.example/ok"]
    assert collection.failures == (
        ("https://a.example/s1.xml", "HTTP 404"),
        ("https://a.example/s2.xml", "HTTP 503 from https://a.example/s2.xml"),
        ("https://a.example/s3.xml", "sitemap declares a DOCTYPE or entities; refused"),
    )


def test_collect_stops_at_the_caps() -> None:
    page_list = (
        b"<urlset>"
        + b"".join(b"<url><loc>https://a.example/%d</loc></url>" % i for i in range(8))
        + b"</urlset>"
    )
    fetcher = _SiteFetcher({"https://a.example/s1.xml": page_list, "https://a.example/s2.xml": page_list})
    by_urls = collect_sitemap_urls(
        fetcher, ["https://a.example/s1.xml", "https://a.example/s2.xml"], max_urls=5
    )
    assert len(by_urls.entries) == 5
    assert by_urls.truncated is True
    by_files = collect_sitemap_urls(
        _SiteFetcher({}), [f"https://a.example/s{i}.xml" for i in range(10)], max_sitemaps=3
    )
    assert len(by_files.failures) == 3
    assert by_files.truncated is True
