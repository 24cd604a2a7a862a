"""Live documentation-set progress in Chromium: a small documentation site served on loopback is
indexed from Settings, and the page shows the crawl's progress moving to done by itself, without a
reload (issue 23: "indexing 0/1" stayed until the page was reloaded).

This module's server differs from the other web tests' in what the crawl needs: the private-network
policy (the site is on 127.0.0.1), the hashing embedder (the crawl's speed is the site's, not the
model's) and one crawl worker, with each page served slowly, so the crawl takes several of the
page's polls."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest_helpers import free_port
from fakes import HashEmbedder
from playwright.sync_api import expect

from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.local.server import LocalServer
from memlane.services.keys import hash_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "docsets"))
from docsets_site import DocsSite, build_site  # noqa: E402 - the docset tests' loopback site

PAGE_DELAY_S = 0.5  # each request to the site: the crawl of its ~10 URLs takes several seconds
WEB_DIST = Path(__file__).resolve().parents[2] / "web" / "dist"


@dataclass
class WebServer:  # what tests/web/conftest.py's page fixture reads: the key and the URL
    server: LocalServer
    key: str
    url: str

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=60)


@pytest.fixture(scope="module")
def web_server(tmp_path_factory) -> Iterator[WebServer]:
    if not (WEB_DIST / "index.html").is_file():
        pytest.fail("the web app is not built: run `make web` (make test does it)")
    server = LocalServer(Settings(data_dir=tmp_path_factory.mktemp("web-docsets")), host="127.0.0.1",
                         port=free_port(), embedder=HashEmbedder(), allow_private_network=True,
                         docset_settings=DocsetSettings(fetch_workers=1, retry_base_s=0.2, max_attempts=2))
    key = server.prepare()
    assert key is not None and server.webapp.built
    md = server.stack.metadata
    stored = md.find_api_key_by_hash(hash_key(key))
    md.put_api_key(stored.model_copy(update={"rate_limit_per_minute": 2000}))  # the page polls
    server.start_in_thread()
    yield WebServer(server, key, f"http://127.0.0.1:{server.port}")
    server.shutdown()


@pytest.fixture
def docs_site() -> Iterator[DocsSite]:
    site = DocsSite()
    build_site(site)
    site.delay_s = PAGE_DELAY_S
    yield site
    site.close()


def test_indexing_a_site_from_settings_shows_its_progress_live_until_ready(page, web_server, docs_site) -> None:
    page.goto(f"{web_server.url}/settings")
    expect(page.get_by_text("No documentation sets.")).to_be_visible()
    page.evaluate("window.__sameDocument = true")  # gone if the page were reloaded
    # When a person indexes the site from Settings
    page.get_by_label("Documentation site URL").fill(f"{docs_site.url}/docs/")
    page.get_by_label("Name (optional: the site's host otherwise)").fill("Frob Docs")
    page.get_by_label("Start path").fill("/docs/")
    page.get_by_role("button", name="Index site").click()
    expect(page.get_by_role("status").filter(has_text="Indexing started")).to_be_visible()
    # Then the set's row shows the crawl moving, and reaches ready by itself
    status = page.get_by_test_id("docset-status")
    pages = status.locator("xpath=following-sibling::td[1]")
    seen: list[tuple[str, str]] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        now = (status.inner_text().strip(), pages.inner_text().strip())
        if not seen or seen[-1] != now:
            seen.append(now)
        if now[0] == "ready":
            break
        page.wait_for_timeout(200)
    assert seen and seen[-1][0] == "ready", f"never ready; the row showed {seen}"
    indexing = [p for s, p in seen if s.startswith("indexing")]
    assert indexing, f"the row never showed the crawl in progress: {seen}"
    done = {int(p.split("/")[0]) for p in indexing}
    assert len({p for _, p in seen}) >= 2 and min(done) < int(seen[-1][1].split("/")[0]), seen
    # and the final figures are the server's, reached without reloading the page
    assert page.evaluate("window.__sameDocument") is True
    (docset,) = web_server.api().get("/status").json()["docsets"]
    figures = docset["indexStatus"]
    assert docset["name"] == "Frob Docs" and docset["indexStatus"]["status"] == "ready"
    assert seen[-1][1] == f"{figures['indexedPages']}/{figures['totalPages']} indexed"
    assert figures["indexedPages"] >= 5
    expect(page.get_by_role("cell", name="Frob Docs")).to_be_visible()
