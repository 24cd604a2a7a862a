"""The local server on loopback compresses what it sends (gzip, as Accept-Encoding allows): the web
app's files keep their cache lifetimes, the API's JSON is compressed past a kilobyte, and a client
that asks for nothing gets the bytes as they are."""

from __future__ import annotations

import gzip

import httpx
import pytest
from conftest_helpers import free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.config.local import LocalSettings
from memlane.local.server import LocalServer

pytestmark = pytest.mark.integration
BUNDLE = ("export function render(node) { return node.children.map(render).join('') }\n" * 3000).encode()


@pytest.fixture
def served(tmp_path):
    build = tmp_path / "dist"
    (build / "assets").mkdir(parents=True)
    (build / "index.html").write_text("<!doctype html><html><head><title>memlane</title></head><body>"
                                      + "<div id=root></div>" * 100 + "</body></html>")
    (build / "assets" / "Markdown-3f2a9c1d.js").write_bytes(BUNDLE)
    srv = LocalServer(Settings(data_dir=tmp_path / "data"), port=free_port(), embedder=HashEmbedder(),
                      local=LocalSettings.from_env({"MEMLANE_WEB_DIR": str(build)}))
    key = srv.prepare()
    srv.start_in_thread()
    yield f"http://127.0.0.1:{srv.port}", key
    srv.shutdown()


def raw_get(url: str, accept: str | None, **headers: str) -> tuple[httpx.Headers, bytes]:
    """The bytes on the wire, not decoded."""
    sent = {**headers, **({"Accept-Encoding": accept} if accept else {"Accept-Encoding": "identity"})}
    with httpx.Client(timeout=30) as client, client.stream("GET", url, headers=sent) as r:
        assert r.status_code == 200, r.read()
        return r.headers, b"".join(r.iter_raw())


def test_the_web_apps_files_and_the_apis_json_are_gzipped_when_accepted(served):
    url, key = served
    headers, wire = raw_get(f"{url}/assets/Markdown-3f2a9c1d.js", "gzip, deflate, br, zstd")
    assert headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
    assert gzip.decompress(wire) == BUNDLE and int(headers["content-length"]) == len(wire) < len(BUNDLE) / 20
    assert headers["cache-control"] == "public, max-age=31536000, immutable"  # the hashed asset's lifetime
    page, wire = raw_get(f"{url}/memories/some-id", "gzip")
    assert page["content-encoding"] == "gzip" and page["cache-control"] == "no-cache"
    assert gzip.decompress(wire).startswith(b"<!doctype html>")
    # the API's JSON: the OpenAPI document (public) and an authenticated answer
    api, wire = raw_get(f"{url}/openapi.json", "gzip")
    assert api["content-encoding"] == "gzip" and gzip.decompress(wire).startswith(b"{")
    projects, wire = raw_get(f"{url}/v3/projects", "gzip", Authorization=f"Bearer {key}")
    assert "content-encoding" not in projects and wire.startswith(b"{")  # under a kilobyte: as it is


def test_a_client_that_accepts_no_compression_gets_the_bytes_as_they_are(served):
    url, _ = served
    headers, wire = raw_get(f"{url}/assets/Markdown-3f2a9c1d.js", None)
    assert "content-encoding" not in headers and wire == BUNDLE and headers["vary"] == "Accept-Encoding"
