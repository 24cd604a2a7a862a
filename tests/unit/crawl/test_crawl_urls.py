"""URL normalisation, docset scope, link extraction and the HTML/binary filter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlane.crawl.urls import (
    extract_links,
    in_scope,
    is_probably_html,
    normalize_url,
    remove_dot_segments,
)

# --------------------------------------------------------------------------- normalize_url


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        ("HTTP://Docs.Example.COM/Guide", None, "http://docs.example.com/Guide"),
        ("https://docs.example.com", None, "https://docs.example.com/"),
        ("http://docs.example.com:80/a", None, "http://docs.example.com/a"),
        ("https://docs.example.com:443/a", None, "https://docs.example.com/a"),
        ("https://docs.example.com:8443/a", None, "https://docs.example.com:8443/a"),
        ("http://docs.example.com:443/a", None, "http://docs.example.com:443/a"),
        ("https://docs.example.com/a/./b/../c", None, "https://docs.example.com/a/c"),
        ("https://docs.example.com/../../x", None, "https://docs.example.com/x"),
        ("https://docs.example.com/a/b/..", None, "https://docs.example.com/a/"),
        ("https://docs.example.com/p#section-2", None, "https://docs.example.com/p"),
        ("https://docs.example.com/p?b=2&a=1#x", None, "https://docs.example.com/p?b=2&a=1"),
        ("https://docs.example.com/%7euser/%2fx%2F", None, "https://docs.example.com/~user/%2Fx%2F"),
        ("https://docs.example.com/a b/ü", None, "https://docs.example.com/a%20b/%C3%BC"),
        ("https://docs.example.com/100%", None, "https://docs.example.com/100%25"),
        ("https://bücher.example/", None, "https://xn--bcher-kva.example/"),
        ("http://[::FFFF:7F00:1]:8080", None, "http://[::ffff:7f00:1]:8080/"),
        ("intro", "https://docs.example.com/guide/start", "https://docs.example.com/guide/intro"),
        ("../api/x.html", "https://docs.example.com/guide/start", "https://docs.example.com/api/x.html"),
        ("/docs/a", "https://docs.example.com/guide/", "https://docs.example.com/docs/a"),
        ("?page=2", "https://docs.example.com/list?page=1", "https://docs.example.com/list?page=2"),
        ("#top", "https://docs.example.com/p?q=1", "https://docs.example.com/p?q=1"),
        ("//cdn.example.net/x", "https://docs.example.com/", "https://cdn.example.net/x"),
        ("  /a\n/b\t ", "https://docs.example.com/", "https://docs.example.com/a/b"),
    ],
)
def test_normalize_url(url: str, base: str | None, expected: str) -> None:
    assert normalize_url(url, base) == expected


@pytest.mark.parametrize(
    "url",
    [
        "mailto:docs@example.com",
        "javascript:void(0)",
        "JavaScript:alert(1)",
        "tel:+15551234",
        "data:text/html;base64,PGI+",
        "ftp://example.com/file",
        "file:///etc/passwd",
        "docs/relative-without-base",
        "http://",
        "http://exa mple.com/",
        "http://example.com:99999/",
    ],
)
def test_non_page_links_normalise_to_none(url: str) -> None:
    assert normalize_url(url) is None


def test_relative_non_page_links_against_a_base_are_none() -> None:
    assert normalize_url("mailto:a@b.c", "https://docs.example.com/") is None
    assert normalize_url("javascript:go()", "https://docs.example.com/") is None


def test_remove_dot_segments_rfc3986_examples() -> None:
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("/mid/content=5/../6") == "/mid/6"
    assert remove_dot_segments("/a//../b") == "/a/b"
    assert remove_dot_segments("/.") == "/"


_segment = st.one_of(
    st.sampled_from([".", "..", "", "A", "a b", "%7e", "%2F", "%zz", "%", "ü", "x.html", "%%34%31"]),
    st.text(min_size=0, max_size=6),
)
_urls = st.builds(
    lambda scheme, host, port, segments, query, fragment: (
        f"{scheme}://{host}{port}/{'/'.join(segments)}{query}{fragment}"
    ),
    st.sampled_from(["http", "HTTPS", "https", "hTTp"]),
    st.sampled_from(["Docs.Example.com", "example.com", "127.0.0.1", "[::1]", "bücher.example", "a.b."]),
    st.sampled_from(["", ":80", ":443", ":8080", ":"]),
    st.lists(_segment, max_size=6),
    st.one_of(st.just(""), st.text(max_size=10).map(lambda q: "?" + q)),
    st.one_of(st.just(""), st.text(max_size=5).map(lambda f: "#" + f)),
)


@settings(max_examples=500, deadline=None)
@given(_urls)
def test_normalize_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    if once is not None:
        assert normalize_url(once) == once


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.sampled_from(["https://docs.example.com/a/b", "http://x.test/"]))
def test_normalize_is_idempotent_for_arbitrary_links(href: str, base: str) -> None:
    once = normalize_url(href, base)
    if once is not None:
        assert normalize_url(once) == once
        assert "#" not in once


# --------------------------------------------------------------------------- scope


def test_scope_defaults_to_the_base_directory() -> None:
    base = "https://docs.example.com/guide/index.html"
    assert in_scope("https://docs.example.com/guide/", base, None)
    assert in_scope("https://docs.example.com/guide/deep/page", base, None)
    assert not in_scope("https://docs.example.com/blog/", base, None)
    assert in_scope("https://docs.example.com/anything", "https://docs.example.com", None)


def test_scope_requires_same_scheme_host_and_port() -> None:
    base = "https://docs.example.com/"
    assert in_scope("HTTPS://DOCS.example.com:443/x", base, None)
    assert not in_scope("http://docs.example.com/x", base, None)
    assert not in_scope("https://api.example.com/x", base, None)
    assert not in_scope("https://docs.example.com:8443/x", base, None)
    assert not in_scope("https://user:pw@docs.example.com/x", base, None)
    assert not in_scope("mailto:x@docs.example.com", base, None)


def test_scope_with_allowed_paths() -> None:
    base = "https://nextjs.org"
    assert in_scope("https://nextjs.org/docs/app", base, ["/docs"])
    assert in_scope("https://nextjs.org/docs", base, ["/docs"])
    assert in_scope("https://nextjs.org/learn/x", base, ["/docs", "learn"])
    assert not in_scope("https://nextjs.org/blog/x", base, ["/docs"])
    assert not in_scope("https://nextjs.org/docs/../blog", base, ["/docs"])
    # Empty allowedPaths entries are ignored, falling back to the base directory.
    assert in_scope("https://nextjs.org/blog/x", base, ["", "  "])


# --------------------------------------------------------------------------- links


@pytest.fixture(params=["lxml", "soup"])
def link_parser(request, monkeypatch):
    """Both link finders: libxml2 directly (the local install) and BeautifulSoup (the Lambda layer,
    which has no lxml)."""
    import memlane.crawl.urls as urls

    if request.param == "soup":
        monkeypatch.setattr(urls, "HTML_PARSER", "html.parser")
    return request.param


@pytest.mark.usefixtures("link_parser")
def test_extract_links_resolves_dedupes_and_skips_non_pages() -> None:
    html = b"""<html><body>
      <a href="intro">Intro</a>
      <a href="/docs/api#auth">API</a>
      <a href="/docs/api">API again</a>
      <a href="https://Other.example.org/x">elsewhere</a>
      <a href="mailto:team@example.com">mail</a>
      <a href="javascript:void(0)">js</a>
      <a rel="nofollow" href="./faq">FAQ</a>
      <a>no href</a>
      <map><area href="/docs/map-target"></map>
    </body></html>"""
    assert extract_links(html, "https://docs.example.com/docs/start") == [
        "https://docs.example.com/docs/intro",
        "https://docs.example.com/docs/api",
        "https://other.example.org/x",
        "https://docs.example.com/docs/faq",
        "https://docs.example.com/docs/map-target",
    ]


@pytest.mark.usefixtures("link_parser")
def test_extract_links_respects_base_href() -> None:
    html = '<head><base href="https://docs.example.com/v2/"></head><a href="page">p</a><a href="/abs">a</a>'
    assert extract_links(html, "https://docs.example.com/v1/index") == [
        "https://docs.example.com/v2/page",
        "https://docs.example.com/abs",
    ]


@pytest.mark.usefixtures("link_parser")
def test_extract_links_relative_base_href() -> None:
    html = '<base href="../ref/"><a href="x">x</a>'
    assert extract_links(html, "https://docs.example.com/guide/a") == ["https://docs.example.com/ref/x"]


@pytest.mark.usefixtures("link_parser")
def test_extract_links_keeps_non_ascii_links_of_a_page_without_charset() -> None:
    html = '<html><body><a href="/wiki/Café">c</a><a href="über#x">u</a></body></html>'.encode()
    assert extract_links(html, "https://docs.example.com/a/") == [
        "https://docs.example.com/wiki/Caf%C3%A9",
        "https://docs.example.com/a/%C3%BCber",
    ]


@pytest.mark.usefixtures("link_parser")
def test_extract_links_of_xhtml_with_a_declaration_and_broken_markup() -> None:
    html = (b'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            b'<body><p><a href="one">1<div><a href="two">2</a></p><!-- <a href="hidden"> -->')
    assert extract_links(html, "https://d.example/") == ["https://d.example/one", "https://d.example/two"]
    assert extract_links(b"", "https://d.example/") == []
    assert extract_links("   ", "https://d.example/") == []


# --------------------------------------------------------------------------- html or binary


@pytest.mark.parametrize(
    ("content_type", "url", "expected"),
    [
        ("text/html; charset=utf-8", "https://d.example/x", True),
        ("application/xhtml+xml", "https://d.example/x.xhtml", True),
        ("TEXT/HTML", "https://d.example/x.pdf", True),
        ("image/png", "https://d.example/x.html", False),
        ("application/pdf", "https://d.example/manual", False),
        ("text/css", "https://d.example/site", False),
        ("application/javascript", "https://d.example/app", False),
        ("application/zip", "https://d.example/dl", False),
        ("application/octet-stream", "https://d.example/page.html", True),
        ("application/octet-stream", "https://d.example/download", False),
        (None, "https://d.example/docs/intro", True),
        (None, "https://d.example/docs/intro.html", True),
        (None, "https://d.example/docs/", True),
        (None, "https://d.example/logo.PNG", False),
        (None, "https://d.example/manual.pdf?dl=1", False),
        (None, "https://d.example/assets/site.css", False),
        (None, "https://d.example/bundle.js", False),
        (None, "https://d.example/release.tar.gz", False),
        ("", "https://d.example/v1.2/guide", True),
    ],
)
def test_is_probably_html(content_type: str | None, url: str, expected: bool) -> None:
    assert is_probably_html(content_type, url) is expected
