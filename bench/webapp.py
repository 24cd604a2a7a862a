"""`make bench-web`: the web app's figures at 10,000 memories → the web app section of BENCHMARKS.md.

- dashboard first load: a cold browser (new context, empty cache) opens `/` until the figures and
  the 20 recent memories are on screen (what "usable" means here), timed from navigation start
  in the page (performance.now);
- search, typing to results: on /search a query is typed key by key (60 ms apart, a fast typist);
  the time from the last keystroke to the results on screen, debounce included;
- the app's JavaScript, gzipped (level 9, as a server would send it): every chunk, and the part
  the first page needs.

The 10,000 memories are written straight into the stores (as `make bench` does for recall): short
notes from a Zipf vocabulary with tags, over the last 60 days, one chunk each with a random unit
vector. Queries are embedded by the real MiniLM model, so search pays what it pays in use.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from bench.common import free_port, machine, write_section
from bench.corpus import sentence, vocab
from memlane.config import Settings
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, chunk_id_for
from memlane.local.server import LocalServer
from memlane.ports import IndexedChunk
from memlane.services.keys import ensure_organization

ROOT = Path(__file__).resolve().parents[1]

DIST = ROOT / "web" / "dist"
KEY_STORAGE = "memlane.apiKey"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TAGS = ["work", "home", "health", "travel", "python", "rust", "recipes", "finance", "reading", "ideas"]
QUERIES = ["python packaging notes", "where did we travel in spring", "doctor appointment", "rust lifetimes",
           "budget for the kitchen", "book recommendations", "sourdough recipe", "meeting with the team",
           "tax documents", "ideas for the garden", "flight to lisbon", "blood pressure readings",
           "deploy the lambda", "reading list", "cache invalidation", "groceries for sunday",
           "insurance renewal", "conference talk", "passport renewal", "running plan"]


def fill(server: LocalServer, n: int, dim: int) -> None:
    stack = server.stack
    org, _ = ensure_organization(stack.metadata, "default")
    project = next(p for p in stack.metadata.list_projects(org.id) if p.is_default)
    rng = random.Random(11)
    nprng = np.random.default_rng(11)
    terms, weights = vocab()
    now = datetime.now(UTC)
    for first in range(0, n, 500):
        with stack.db.transaction():
            items: list[IndexedChunk] = []
            for d in range(first, min(n, first + 500)):
                created = now - timedelta(days=rng.random() * 60)
                text = " ".join(sentence(rng, terms, weights) for _ in range(rng.randint(2, 6)))
                doc = Document(organization_id=org.id, project_id=project.id, user_id="bench",
                               title=" ".join(text.split()[:6]), content=text, summary=text[:160],
                               content_type=ContentType.NOTE, metadata={"tags": rng.sample(TAGS, 2)},
                               content_hash=f"bench-{d}", created_at=created, updated_at=created,
                               status=DocumentStatus.READY, chunk_count=1)
                chunk = Chunk(id=chunk_id_for(doc.id, 0), document_id=doc.id, organization_id=org.id,
                              project_id=project.id, content=text, chunk_index=0, chunk_count=1, start_offset=0,
                              end_offset=len(text), title=doc.title, content_type=doc.content_type,
                              tags=doc.tags, created_at=created)
                vector = nprng.standard_normal(dim).astype(np.float32)
                vector /= np.linalg.norm(vector)
                stack.metadata.put_document(doc)
                stack.metadata.put_chunks(org.id, doc.id, [chunk])
                items.append(IndexedChunk(chunk=chunk, vector=vector))  # type: ignore[arg-type]  # float32 rows, as stored
            stack.index.upsert(stack.services.embedder.id, items)


def js_sizes() -> dict[str, int]:
    """Gzipped bytes of every JavaScript chunk, and of those index.html loads (the first page)."""
    index = (DIST / "index.html").read_text()
    total = first = 0
    for path in sorted((DIST / "assets").glob("*.js")):
        size = len(gzip.compress(path.read_bytes(), compresslevel=9))
        total += size
        if path.name in index:
            first += size
    return {"total": total, "first": first}


def dashboard_loads(browser, url: str, key: str, runs: int, total: int) -> list[float]:
    times = []
    for _ in range(runs):
        context = browser.new_context()
        context.add_init_script(f"window.localStorage.setItem({KEY_STORAGE!r}, {key!r})")
        page = context.new_page()
        page.goto(url, wait_until="commit")
        page.wait_for_function(
            "([n]) => document.querySelectorAll('[data-testid=recent-list] li').length === 20"
            " && document.querySelector('[data-testid=stat-total]')?.textContent === String(n)",
            arg=[total], polling="raf", timeout=60_000)
        times.append(page.evaluate("performance.now()"))
        context.close()
    return times


def typing_to_results(browser, url: str, key: str) -> list[float]:
    context = browser.new_context()
    context.add_init_script(f"window.localStorage.setItem({KEY_STORAGE!r}, {key!r})")
    page = context.new_page()
    page.goto(f"{url}/search")
    box = page.get_by_label("Search across your memories")
    box.wait_for()
    page.evaluate("""() => {
        document.addEventListener('input', () => { window.__typed = performance.now() }, true)
        new MutationObserver(() => { window.__shown = performance.now() }).observe(
            document.querySelector('[data-testid=search-results]').parentElement,
            {childList: true, subtree: true, characterData: true})
    }""")
    times = []
    for query in ["warm up the model", *QUERIES]:
        box.fill("")
        page.wait_for_timeout(300)  # the cleared box settles (no request for an empty query)
        box.press_sequentially(query, delay=60)
        page.wait_for_function(
            "() => window.__shown > window.__typed && /results in/.test("
            "document.querySelector('[data-testid=search-status]').textContent)",
            polling="raf", timeout=60_000)
        page.wait_for_timeout(50)
        times.append(page.evaluate("window.__shown - window.__typed"))
    context.close()
    return times[1:]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(memories: int, loads: int) -> dict:
    from playwright.sync_api import sync_playwright

    from memlane.adapters.local.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.load()
    data = Path(tempfile.mkdtemp(prefix="memlane-bench-web-"))
    port = free_port()
    server = LocalServer(Settings(data_dir=data), host="127.0.0.1", port=port, embedder=embedder)
    try:
        started = time.perf_counter()
        fill(server, memories, embedder.dimension)
        fill_s = time.perf_counter() - started
        key = server.prepare()
        assert key is not None, "a new data directory gets its first key"
        embedder.embed_query("warm up")
        server.start_in_thread()
        url = f"http://127.0.0.1:{port}"
        chromium = os.environ.get("MEMLANE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            dashboard_loads(browser, url, key, 1, memories)  # warms the server's caches and the model
            loads_ms = dashboard_loads(browser, url, key, loads, memories)
            typing_ms = typing_to_results(browser, url, key)
            browser.close()
    finally:
        server.shutdown()
        shutil.rmtree(data, ignore_errors=True)
    return {"memories": memories, "fill_s": fill_s, "loads_ms": loads_ms, "typing_ms": typing_ms, "js": js_sizes()}


def section(r: dict, load_before: float, load_after: float) -> str:
    loads, typing, js = r["loads_ms"], r["typing_ms"], r["js"]
    ok = lambda good: "met" if good else "**not met**"  # noqa: E731
    first_load = statistics.median(loads)
    typing_p50 = statistics.median(typing)
    return "\n".join([
        "## Web app: first load, typing to results, JavaScript size",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine()}; load average "
        f"{load_before:.2f} before, {load_after:.2f} after. Headless Chromium "
        "(Debian) on the same machine as the server (loopback). Reproduce: `make bench-web`.",
        "",
        f"{r['memories']:,} memories (written straight into the stores in {r['fill_s']:.0f} s; one chunk each; "
        "queries embedded by MiniLM).",
        "",
        "| figure | target | measured | |",
        "| --- | --- | --- | --- |",
        f"| dashboard first load, cold browser, until the figures and 20 recent memories show "
        f"(median of {len(loads)}; max) | ≤ 1 s | {first_load:.0f} ms; {max(loads):.0f} ms | {ok(first_load <= 1000)} |",
        f"| search: last keystroke → results on screen, {len(typing)} queries typed 60 ms/key "
        f"(100 ms typing pause included; p50 / p95) | ≤ 300 ms | {typing_p50:.0f} ms / {p95(typing):.0f} ms | "
        f"{ok(p95(typing) <= 300)} |",
        f"| app JavaScript, gzipped: all chunks (first page only) | ≤ 250 KB | {js['total'] / 1024:.1f} KB "
        f"({js['first'] / 1024:.1f} KB) | {ok(js['total'] <= 250 * 1024)} |",
        "",
        "The dashboard makes three requests (figures, projects, the 20 most recent memories); the "
        "memory page's renderer (markdown, highlighting) and the graph page (d3) are separate chunks "
        "loaded when first opened.",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.webapp", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--write", type=Path, help="BENCHMARKS.md to update (its bench:webapp section)")
    args = parser.parse_args(argv)
    if not (DIST / "index.html").is_file():
        print("the web app is not built: run `make web`", file=sys.stderr)
        return 2
    before = os.getloadavg()[0]
    result = run(args.memories, args.loads)
    text = section(result, before, os.getloadavg()[0])
    print(text)
    if args.write:
        write_section(args.write, "webapp", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
