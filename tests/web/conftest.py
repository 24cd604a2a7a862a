"""End-to-end harness for the web app: the built app (web/dist, `make web`, which `make test`
does) served by a real local memlane server (the embedded default: SQLite and the real MiniLM
model) on loopback, driven in Debian's headless Chromium through Playwright (no browser download).

One server and one browser per module; each test gets a fresh browser context (its own storage),
signed in by putting the key where the app keeps it, unless the test is about signing in.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest_helpers import free_port

from memlane.config import Settings
from memlane.local.server import LocalServer
from memlane.services.keys import hash_key

ROOT = Path(__file__).resolve().parents[2]
WEB_DIST = ROOT / "web" / "dist"
AXE_SOURCE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOT_DIR_ENV = "MEMLANE_SCREENSHOTS"  # e.g. docs/screenshots: the pictures docs/web-app.md shows
KEY_STORAGE = "memlane.apiKey"  # web/src/auth.ts
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


def chromium_path() -> str:
    path = os.environ.get("MEMLANE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail("Chromium is not installed: `apt-get install chromium` (make test does it)")
    return path


@dataclass
class WebServer:
    server: LocalServer
    key: str
    url: str

    def api(self, key: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key or self.key}"}, timeout=60)

    def sign_in_link(self) -> str:
        return f"{self.url}/login#code={self.server.webapp.sign_in.issue(self.key)}"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory, minilm) -> Iterator[WebServer]:
    if not (WEB_DIST / "index.html").is_file():
        pytest.fail("the web app is not built: run `make web` (make test does it)")
    server = LocalServer(Settings(data_dir=tmp_path_factory.mktemp("web-e2e")), host="127.0.0.1",
                         port=free_port(), embedder=minilm)
    key = server.prepare()
    assert key is not None and server.webapp.built
    # The tests click through pages at machine speed, far past the 100 requests a minute a person
    # browsing makes; the rate limit itself is tested elsewhere, so this key gets room.
    md = server.stack.metadata
    stored = md.find_api_key_by_hash(hash_key(key))
    md.put_api_key(stored.model_copy(update={"rate_limit_per_minute": 2000}))
    server.start_in_thread()
    yield WebServer(server, key, f"http://127.0.0.1:{server.port}")
    server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=20_000)  # a shared 2-core machine: assertions wait up to 20 s
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser, web_server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="UTC")
    ctx.set_default_timeout(20_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, web_server):
    """A page of a signed-in browser: the key is where the app keeps it, before any script runs."""
    context.add_init_script(f"window.localStorage.setItem({KEY_STORAGE!r}, {web_server.key!r})")
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    yield p
    assert errors == [], f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE_SOURCE.is_file():
        pytest.fail("axe-core is not installed: run `make web` (npm ci in web/)")
    return AXE_SOURCE.read_text()


@pytest.fixture
def screenshot(tmp_path):
    """shot(page, name): saves a screenshot; into MEMLANE_SCREENSHOTS too when set (the pictures docs/web-app.md shows)."""
    return lambda page, name: _screenshot(page, name, tmp_path)


@pytest.fixture
def key_storage() -> str:
    return KEY_STORAGE


def _screenshot(page, name: str, tmp_path: Path) -> Path:
    target = tmp_path / f"{name}.png"
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(target), full_page=False)
    assert target.stat().st_size > 10_000  # a rendered page, not a blank one
    out_dir = os.environ.get(SCREENSHOT_DIR_ENV)
    if out_dir:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, Path(out_dir) / f"{name}.png")
    return target
