"""Helpers for the docset tests: a small documentation site made by the tests and served on
127.0.0.1, a memlane LocalServer (private-network policy, hashing embedder) that crawls it, and
request helpers. No traffic leaves loopback."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx
from conftest_helpers import free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.local.server import LocalServer


@dataclass
class Page:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class DocsSite:
    """Pages by path; tests change them between crawls. Records every request."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.hits: list[tuple[str, dict[str, str]]] = []
        self.delay_s = 0.0
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                path = urlsplit(self.path).path
                with site._lock:
                    site.hits.append((path, dict(self.headers.items())))
                    page = site.pages.get(path)
                if site.delay_s:
                    time.sleep(site.delay_s)
                if page is None:
                    page = Page(404, b"<html><body><h1>Not found</h1></body></html>",
                                {"Content-Type": "text/html"})
                etag = page.headers.get("ETag")
                if page.status == 200 and etag and self.headers.get("If-None-Match") == etag:
                    page = Page(304, b"", {"ETag": etag})
                self.send_response(page.status)
                for k, v in page.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                if page.body:
                    self.wfile.write(page.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def html(self, path: str, title: str, *paragraphs: str, links: tuple[str, ...] = (),
             etag: str | None = None, sections: tuple[tuple[str, str], ...] = ()) -> None:
        parts = [f"<html><head><title>{title} - Frob Docs</title></head><body>",
                 '<nav role="navigation"><a href="/docs/">Home</a> <a href="/docs/config">Config</a></nav>',
                 '<div role="main">', f"<h1>{title}</h1>"]
        parts += [f"<p>{p}</p>" for p in paragraphs]
        for heading, text in sections:
            parts += [f"<h2>{heading}</h2>", f"<p>{text}</p>"]
        if links:
            anchors = " ".join(f'<a href="{link}">{link}</a>' for link in links)
            parts.append(f"<p>See also: {anchors}</p>")
        parts.append("</div><footer>Copyright Frob</footer></body></html>")
        headers = {"Content-Type": "text/html; charset=utf-8"}
        if etag:
            headers["ETag"] = etag
        with self._lock:
            self.pages[path] = Page(200, "".join(parts).encode(), headers)

    def raw(self, path: str, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        with self._lock:
            self.pages[path] = Page(status, body, headers or {})

    def remove(self, path: str) -> None:
        with self._lock:
            self.pages.pop(path, None)

    def paths_hit(self) -> list[str]:
        with self._lock:
            return [p for p, _ in self.hits]

    def reset_hits(self) -> None:
        with self._lock:
            self.hits.clear()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


LONG = ("The frobnicator reads its configuration at start-up and validates every field before the first "
        "request is served, so a typo fails fast instead of surfacing hours later in production traffic. ")


def build_site(site: DocsSite) -> None:
    """Seed /docs/; robots.txt closes /docs/private and names the sitemap, which adds an orphan
    page; /docs/old redirects to /docs/new; /docs/missing is a broken link; /blog and another
    host are out of scope; the install page is long enough for several chunks."""
    site.raw("/robots.txt", 200, f"User-agent: *\nDisallow: /docs/private\nSitemap: {site.url}/sitemap.xml\n"
             .encode(), {"Content-Type": "text/plain"})
    site.raw("/sitemap.xml", 200, (
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.url}/docs/orphan</loc></url><url><loc>{site.url}/blog/post</loc></url></urlset>"
    ).encode(), {"Content-Type": "application/xml"})
    site.html("/docs/", "Guide Home", "Welcome to the frobnicator guide: an overview of installation and "
              "configuration for operators.",
              links=("/docs/install", "/docs/install#pip", "/docs/config", "/docs/old", "/docs/missing",
                     "/docs/private/secret", "/blog/post", "http://other.invalid/docs/x", "/docs/logo.png"),
              etag='"home-1"')
    site.html("/docs/install", "Installing",
              "Install the frobnicator with pip inside a virtual environment.",
              sections=tuple((f"Step {i}", f"Step {i} of the installation: run the wheel builder number {i}. "
                              + LONG) for i in range(1, 7)),
              etag='"install-1"')
    site.html("/docs/config", "Configuration",
              "Tune the quux timeout with the QUUX_TIMEOUT variable. " + LONG, etag='"config-1"')
    site.raw("/docs/old", 301, b"", {"Location": "/docs/new"})
    site.html("/docs/new", "Renamed Page", "Zebra migration notes live on this renamed page.", etag='"new-1"')
    site.html("/docs/orphan", "Orphan", "Xylophone tuning appears only in the sitemap.", etag='"orphan-1"')
    site.html("/docs/private/secret", "Secret", "Robots say nobody may read the walrus secret.")
    site.html("/blog/post", "Blog", "Out of scope blog post about penguins.")


@dataclass
class Running:
    server: LocalServer
    client: httpx.Client
    url: str
    key: str

    @property
    def store(self):
        return self.server.docsets.store

    @property
    def runner(self):
        return self.server.docsets.runner

    def as_key(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)

    def new_key(self, org: str) -> str:
        from memlane.services.keys import create_key

        secret, _, _ = create_key(self.server.stack.metadata, org)
        return secret

    def wait_ready(self, docset_id: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        body: dict = {}
        while time.monotonic() < deadline:
            body = self.client.get(f"/docset/{docset_id}").json()
            assert "status" in body, body
            if body["status"] != "indexing" and self.runner.idle():
                return body
            time.sleep(0.05)
        raise AssertionError(f"docset {docset_id} still indexing after {timeout} s: {body}")


FAST = DocsetSettings(chunk_max_tokens=128, chunk_overlap_tokens=8, retry_base_s=0.2, max_attempts=3)


def start_server(data_dir, *, allow_private_network: bool = True,
                 settings: DocsetSettings = FAST) -> Running:
    srv = LocalServer(Settings(data_dir=data_dir), host="127.0.0.1", port=free_port(),
                      embedder=HashEmbedder(), allow_private_network=allow_private_network,
                      docset_settings=settings)
    key = srv.prepare()
    srv.start_in_thread()
    url = f"http://127.0.0.1:{srv.port}"
    assert key is not None
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    return Running(srv, client, url, key)


def index(running, site, **extra) -> dict:
    body = {"baseUrl": site.url, "seedSlug": "/docs/", "name": "Frob Docs", "allowedPaths": ["/docs"],
            "waitForSeed": True, **extra}
    r = running.client.post("/index", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def retrieve(running, query: str, **fields) -> dict:
    r = running.client.post("/retrieve", json={"query": query, **fields})
    assert r.status_code == 200, r.text
    return r.json()


def pages_by_path(running, docset_id: str) -> dict[str, dict]:
    body = running.client.get(f"/docset/{docset_id}/pages", params={"limit": 500}).json()
    return {p["path"]: p for p in body["pages"]}


def assert_ms(value) -> None:
    assert isinstance(value, int) and not isinstance(value, bool)
    assert abs(value - time.time() * 1000) < 600_000, value


def assert_index_status(ix: dict, docset_id: str, *, stuck_key: bool) -> None:
    keys = {"docsetId", "totalPages", "indexedPages", "pendingPages", "errorPages", "skippedPages",
            "totalChunks", "status", "retriedPages"} | ({"stuckPages"} if stuck_key else set())
    assert set(ix) >= keys
    assert ix["docsetId"] == docset_id
    for k in keys - {"docsetId", "status"}:
        assert isinstance(ix[k], int) and not isinstance(ix[k], bool), k
    assert ix["status"] in ("indexing", "ready", "error")
    assert ix["totalPages"] == ix["indexedPages"] + ix["pendingPages"] + ix["errorPages"] + ix["skippedPages"]
