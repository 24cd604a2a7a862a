"""What the local server compresses (memlane.local.compression): text past a size, when the client
accepts gzip, never a no-store answer, always saying it varies by Accept-Encoding."""

from __future__ import annotations

import gzip

import pytest

from memlane.local.compression import Compressor, accepts_gzip
from memlane.local.responses import GatewayResponse

SCRIPT = ("export function add(a, b) { return a + b }\n" * 200).encode()


def answer(body: bytes = SCRIPT, content_type: str = "application/javascript; charset=utf-8", **headers: str):
    return GatewayResponse(200, {"Content-Type": content_type, **headers}, body)


@pytest.mark.parametrize(("header", "allowed"), [
    ("gzip, deflate, br, zstd", True),  # Chromium
    ("br;q=1.0, gzip;q=0.8, *;q=0.1", True),
    ("*", True),
    ("gzip;q=0", False),
    ("identity", False),
    ("br", False),
    (None, False),
    ("*;q=0", False),
    ("GZIP", True),
])
def test_gzip_is_used_only_where_the_client_accepts_it(header, allowed):
    assert accepts_gzip(header) is allowed


def test_text_past_a_kilobyte_is_gzipped_and_says_it_varies_by_accept_encoding():
    out = Compressor()(answer(**{"Cache-Control": "public, max-age=31536000, immutable"}), "gzip, br")
    assert out.headers["Content-Encoding"] == "gzip" and out.headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(out.body) == SCRIPT and len(out.body) < len(SCRIPT) / 10
    assert out.headers["Cache-Control"] == "public, max-age=31536000, immutable"  # kept as it was


@pytest.mark.parametrize("content_type", ["application/json", "text/html; charset=utf-8", "text/css",
                                          "image/svg+xml", "application/problem+json"])
def test_json_html_css_and_svg_are_text(content_type):
    assert Compressor()(answer(content_type=content_type), "gzip").headers.get("Content-Encoding") == "gzip"


@pytest.mark.parametrize(("response", "accept"), [
    (answer(), "identity"),  # not accepted: sent as it is, still marked as varying
    (answer(SCRIPT[:900]), "gzip"),  # too small to be worth it
])
def test_uncompressed_but_varying(response, accept):
    out = Compressor()(response, accept)
    assert out.body == response.body and "Content-Encoding" not in out.headers
    assert out.headers["Vary"] == "Accept-Encoding"


@pytest.mark.parametrize("response", [
    answer(content_type="image/png"),  # already compressed formats
    answer(content_type="application/pdf"),
    answer(content_type="application/json", **{"Cache-Control": "no-store"}),  # a secret may be in it (BREACH)
    answer(**{"Content-Encoding": "br"}),
])
def test_left_alone(response):
    assert Compressor()(response, "gzip") is response


def test_a_vary_the_answer_had_is_kept():
    out = Compressor()(answer(vary="Origin"), "gzip")
    assert out.headers["Vary"] == "Origin, Accept-Encoding" and "vary" not in out.headers


def test_a_files_compressed_form_is_made_once_per_version():
    compress = Compressor()
    first = compress(GatewayResponse(200, {"Content-Type": "text/css"}, SCRIPT, cache_key="app.css:1:8"), "gzip")
    stale = compress(GatewayResponse(200, {"Content-Type": "text/css"}, b"x" * 2000, cache_key="app.css:1:8"), "gzip")
    assert stale.body is first.body  # the same version: the kept form
    fresh = compress(GatewayResponse(200, {"Content-Type": "text/css"}, b"y" * 2000, cache_key="app.css:2:8"), "gzip")
    assert gzip.decompress(fresh.body) == b"y" * 2000
