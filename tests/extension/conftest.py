"""End-to-end harness for the browser extension: the built Chrome extension loaded unpacked into
headless Chromium (a Playwright persistent context), a real local memlane server (the embedded
default: SQLite and MiniLM) that accepts the extension's origin, and the page fixtures served on
loopback — the GitHub and X ones under their real host names (Chromium's resolver maps github.com
and x.com to a loopback HTTPS server), so the platform content scripts run as they do on the sites.

Build the extension first (`make extension-build`, which `make test` does)."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest_helpers import free_port
from playwright.sync_api import expect

from memlane.config import Settings
from memlane.local.server import LocalServer

ROOT = Path(__file__).resolve().parents[2]
EXTENSION_DIR = ROOT / "extension" / ".output" / "chrome-mv3"
FIXTURES = Path(__file__).parent / "fixtures"
SCREENSHOTS = ROOT / "docs" / "screenshots"
# The id Chrome derives from the manifest's `key` (extension/wxt.config.ts).
EXTENSION_ID = "ibjigdcepmcfoplhobofpgjnoibiglci"
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"

# (host, path) → fixture. Loopback pages are served over HTTP; the platform pages over HTTPS under
# the platform's own host name.
LOOPBACK_PAGES = {
    "/news/solar-sail.html": "news-article.html",
    "/boards/launch.html": "notes-board.html",
}
PLATFORM_PAGES = {
    ("github.com", "/acme/rocket"): "github-readme.html",
    ("github.com", "/acme/rocket/issues/42"): "github-issue.html",
    ("x.com", "/ada/status/1790000000000000002"): "x-thread.html",
}


def chromium_path() -> str:
    path = os.environ.get("MEMLANE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail("Chromium is not installed: `apt-get install chromium` (make test does it)")
    return path


# --------------------------------------------------------------------------- pages on loopback


class _FixtureHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        host = (self.headers.get("Host") or "").split(":")[0]
        path = self.path.split("?")[0]
        name = PLATFORM_PAGES.get((host, path)) if self.server.tls else LOOPBACK_PAGES.get(path)  # type: ignore[attr-defined]
        if name is None:
            self.send_error(404)
            return
        body = (FIXTURES / name).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def _serve(tls: ssl.SSLContext | None) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FixtureHandler)
    server.tls = tls is not None  # type: ignore[attr-defined]
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@dataclass
class Pages:
    http_port: int
    https_port: int

    def loopback(self, path: str) -> str:
        return f"http://127.0.0.1:{self.http_port}{path}"


@pytest.fixture(scope="module")
def pages() -> Iterator[Pages]:
    import trustme

    ca = trustme.CA()
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("github.com", "x.com").configure_cert(tls)
    plain, secure = _serve(None), _serve(tls)
    yield Pages(plain.server_address[1], secure.server_address[1])
    for s in (plain, secure):
        s.shutdown()
        s.server_close()


# ------------------------------------------------------------------------------ memlane server


class Memlane:
    """A real local server on a fixed loopback port that a test can stop and start again (same
    data directory, same key), as a user's `memlane serve` would be."""

    def __init__(self, data_dir: Path, embedder, allowed_origins=frozenset({EXTENSION_ORIGIN})) -> None:
        self.data_dir = data_dir
        self.embedder = embedder
        self.allowed_origins = allowed_origins
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: LocalServer | None = None
        self.key = ""

    def start(self) -> None:
        server = LocalServer(Settings(data_dir=self.data_dir), host="127.0.0.1", port=self.port,
                             embedder=self.embedder, allowed_origins=self.allowed_origins)
        key = server.prepare()
        server.start_in_thread()
        self.server, self.key = server, key or self.key

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server = None

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=30)

    def documents(self, source_url: str) -> list[dict]:
        """Every stored document (all versions) saved from `source_url`, oldest first."""
        with self.api() as api:
            r = api.post("/v3/recall", json={"query": "", "limit": 100, "include_versions": True})
            r.raise_for_status()
            ids = [d["document_id"] for d in r.json()["results"] if d["source_url"] == source_url]
            docs = [api.get(f"/v3/documents/{i}").json() for i in ids]
        return sorted(docs, key=lambda d: d["created_at"])

    def document(self, doc_id: str) -> dict:
        with self.api() as api:
            r = api.get(f"/v3/documents/{doc_id}", params={"include_versions": "true"})
            r.raise_for_status()
            return r.json()


@pytest.fixture(scope="module")
def memlane(tmp_path_factory, minilm) -> Iterator[Memlane]:
    server = Memlane(tmp_path_factory.mktemp("memlane-data"), minilm)
    server.start()
    yield server
    server.stop()


# ------------------------------------------------------------------------------------ browser


class Browser:
    def __init__(self, context) -> None:
        self.context = context

    def worker(self):
        """The extension's service worker (Chrome stops it when idle; an extension page wakes it)."""
        for w in self.context.service_workers:
            if w.url.startswith(EXTENSION_ORIGIN):
                return w
        page = self.context.new_page()
        with self.context.expect_event("serviceworker", timeout=15_000) as event:
            page.goto(f"{EXTENSION_ORIGIN}/options.html")
        page.close()
        return event.value

    def open(self, url: str):
        """A tab showing `url`, and its tab id as the extension sees it."""
        page = self.context.new_page()
        page.goto(url)
        tab_id = self.worker().evaluate(
            "async (url) => (await chrome.tabs.query({})).find((t) => t.url === url)?.id", page.url)
        if not tab_id:
            tabs = self.worker().evaluate("async () => (await chrome.tabs.query({})).map((t) => [t.url, t.status])")
            raise AssertionError(f"no tab for {page.url}: {tabs}; page says {page.content()[:300]}")
        return page, tab_id

    def popup(self, tab_id: int):
        """popup.html opened as a page for the tab `tab_id` (a toolbar popup cannot be opened from a
        test), sized as the toolbar shows it."""
        page = self.context.new_page()
        page.set_viewport_size({"width": 388, "height": 720})
        page.goto(f"{EXTENSION_ORIGIN}/popup.html?tabId={tab_id}")
        page.wait_for_selector("body[data-ready]")
        return page

    def options(self):
        page = self.context.new_page()
        page.set_viewport_size({"width": 720, "height": 640})
        page.goto(f"{EXTENSION_ORIGIN}/options.html")
        page.wait_for_selector("body[data-ready]")
        return page

    def call(self, expression: str, arg=None):
        return self.worker().evaluate(expression, arg)

    def save_from_popup(self, tab_id: int, *, title: str | None = None, project: str | None = None,
                        tags: str = "", auto_forget: bool = False, shot=None) -> str:
        """Opens the popup for the tab, fills it in like a user, clicks Save; returns the memory id."""
        popup = self.popup(tab_id)
        expect(popup.locator("#save")).to_be_enabled()
        if title is not None:
            popup.fill("#title", title)
        if project:
            popup.select_option("#project", label=project)
        if tags:
            popup.fill("#tags", tags)
        if auto_forget:
            popup.check("#auto-forget")
        popup.click("#save")
        popup.wait_for_selector("#save-status.ok")
        memory_id = popup.get_attribute("#save-status", "data-memory-id")
        # "Saved ✓" links to the memory in the web app
        expect(popup.locator("#saved-link")).to_have_attribute("href", re.compile(rf"/memories/{memory_id}$"))
        if shot:
            shot(popup)
        popup.close()
        assert memory_id
        return memory_id


@pytest.fixture(scope="module")
def browser(tmp_path_factory, pages: Pages, memlane: Memlane) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    manifest = EXTENSION_DIR / "manifest.json"
    if not manifest.exists():
        pytest.fail(f"{manifest} is missing: build the extension first (make extension-build)")
    assert json.loads(manifest.read_text())["key"], "the test build must carry the manifest key"
    rules = ",".join([
        f"MAP github.com 127.0.0.1:{pages.https_port}",
        f"MAP x.com 127.0.0.1:{pages.https_port}",
        # Nothing else resolves: the browser reaches loopback only.
        "MAP * ~NOTFOUND", "EXCLUDE 127.0.0.1", "EXCLUDE localhost",
    ])
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=chromium_path(),
            headless=True,  # Chromium's new headless mode: the full browser, extensions included
            ignore_https_errors=True,
            args=[
                f"--disable-extensions-except={EXTENSION_DIR}",
                f"--load-extension={EXTENSION_DIR}",
                "--disable-features=DisableLoadExtensionCommandLineSwitch",
                f"--host-resolver-rules={rules}",
                "--ignore-certificate-errors",
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
            ],
        )
        context.set_default_timeout(20_000)
        yield Browser(context)
        context.close()


def point_at(browser: Browser, server: Memlane) -> None:
    """Sets the extension up as a user does: the options page, URL and key, Save."""
    page = browser.options()
    page.fill("#url", server.url)
    page.fill("#api-key", server.key)
    page.click("#save")
    page.wait_for_selector("#status.ok")
    page.close()


@pytest.fixture(scope="module")
def configured(browser: Browser, memlane: Memlane) -> Browser:
    point_at(browser, memlane)
    return browser


@pytest.fixture
def other_memlane(tmp_path, hash_embedder) -> Iterator[Memlane]:
    """A second server that does not (yet) accept the extension's origin."""
    server = Memlane(tmp_path / "other", hash_embedder, allowed_origins=frozenset())
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def use_server():
    return point_at


def _screenshot(page, name: str) -> None:
    if os.environ.get("MEMLANE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


@pytest.fixture(scope="session")
def screenshot():
    """The pictures docs/extension.md shows: written to docs/screenshots/ when MEMLANE_SCREENSHOTS=1."""
    return _screenshot


@pytest.fixture(scope="session")
def extension_origin() -> str:
    return EXTENSION_ORIGIN
