"""`make bench-page-weight`: what a memory page costs to transfer from the local server, without and
with compression → the page weight section of BENCHMARKS.md.

A cold headless Chromium (new context, empty cache) opens one memory's page (`/memories/<id>`: the
app, its lazy Memory and Markdown chunks, the API's JSON) and waits until the memory is on screen.
The page's own Resource Timing entries give each response's bytes on the wire (`transferSize`:
headers and body as sent) and as decoded. "Before" is the same server and build with the
compression step taken out (memlane.local.compression.Compressor replaced by a pass-through),
so the difference is compression alone. The memory is a Markdown note with a code block, a list
and a table, as a person saves one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

from bench.common import free_port, machine, write_section
from bench.webapp import CHROMIUM_ARGS, DIST, KEY_STORAGE
from memlane.config import Settings
from memlane.local.responses import GatewayResponse
from memlane.local.server import LocalServer

NOTE = """# Renovating the kitchen

We settled on **oak** worktops and a gas hob. The plan, in order:

1. Strip the old tiles (weekend of the 12th).
2. Electrician moves two sockets: Okafor Electrics, quote 340 EUR.
3. Fit the units, then the worktop.

| item | supplier | price |
| --- | --- | --- |
| worktop | Holzwerk | 890 EUR |
| hob | Elektro Markt | 420 EUR |

```python
budget = 890 + 420 + 340
assert budget < 2000
```

See also the [planning notes](https://example.com/kitchen) from March.
"""


@dataclass(frozen=True)
class Weight:
    requests: int
    transferred: int  # bytes on the wire, headers included
    decoded: int  # bytes after decoding
    script_transferred: int


class PassThrough:
    """The compression step taken out: every answer as the gateway made it."""

    def __call__(self, response: GatewayResponse, accept_encoding: str | None) -> GatewayResponse:
        return response


def measure(browser, url: str, key: str, memory_id: str) -> Weight:
    context = browser.new_context()
    context.add_init_script(f"window.localStorage.setItem({KEY_STORAGE!r}, {key!r})")
    page = context.new_page()
    page.goto(f"{url}/memories/{memory_id}")
    page.get_by_role("heading", name="Renovating the kitchen", exact=True).first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    entries = page.evaluate("""() => [...performance.getEntriesByType('navigation'),
                                      ...performance.getEntriesByType('resource')]
        .map(e => ({name: e.name, transfer: e.transferSize, decoded: e.decodedBodySize,
                    script: e.initiatorType === 'script' || e.name.endsWith('.js')}))""")
    context.close()
    return Weight(requests=len(entries), transferred=sum(e["transfer"] for e in entries),
                  decoded=sum(e["decoded"] for e in entries),
                  script_transferred=sum(e["transfer"] for e in entries if e["script"]))


def run(compress: bool) -> Weight:
    from playwright.sync_api import sync_playwright

    data = Path(tempfile.mkdtemp(prefix="memlane-bench-page-"))
    port = free_port()
    patch = mock.patch("memlane.local.server.Compressor", PassThrough) if not compress else contextlib.nullcontext()
    with patch:
        server = LocalServer(Settings(data_dir=data), host="127.0.0.1", port=port)  # the default embedder
        try:
            key = server.prepare()
            assert key is not None, "a new data directory gets its first key"
            server.start_in_thread()
            url = f"http://127.0.0.1:{port}"
            memory_id = _save(url, key)
            chromium = os.environ.get("MEMLANE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
                measure(browser, url, key, memory_id)  # warms the server (first page of a build file)
                weight = measure(browser, url, key, memory_id)
                browser.close()
        finally:
            server.shutdown()
            shutil.rmtree(data, ignore_errors=True)
    return weight


def _save(url: str, key: str) -> str:
    import httpx

    answer = httpx.post(f"{url}/v3/memory", json={"content": NOTE, "content_type": "markdown"},
                        headers={"Authorization": f"Bearer {key}"}, timeout=60)
    answer.raise_for_status()
    return str(answer.json()["id"])


def section(before: Weight, after: Weight) -> str:
    kb = lambda n: f"{n / 1024:.0f} KB"  # noqa: E731
    return "\n".join([
        "## Web app: a memory page's transfer size, without and with compression",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine()}. Headless Chromium (Debian's, "
        "through Playwright) on the same machine as the local server (loopback), a cold context for each "
        "figure; bytes from the page's own Resource Timing (`transferSize`: headers and body as sent). "
        "Reproduce: `make bench-page-weight`.",
        "",
        "| memory page (`/memories/<id>`, a Markdown note) | requests | transferred | of it JavaScript | "
        "decoded |",
        "| --- | --- | --- | --- | --- |",
        f"| before: sent as built | {before.requests} | {kb(before.transferred)} | "
        f"{kb(before.script_transferred)} | {kb(before.decoded)} |",
        f"| after: gzip as Accept-Encoding allows | {after.requests} | {kb(after.transferred)} | "
        f"{kb(after.script_transferred)} | {kb(after.decoded)} |",
        "",
        f"The page transfers {after.transferred / before.transferred:.0%} of what it did "
        f"({kb(before.transferred - after.transferred)} less). Hashed assets keep their one-year immutable "
        "cache lifetime either way.",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.page_weight", description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="BENCHMARKS.md to update (its bench:page-weight section)")
    args = parser.parse_args(argv)
    if not (DIST / "index.html").is_file():
        print("the web app is not built: make web", file=sys.stderr)
        return 2
    before, after = run(compress=False), run(compress=True)
    text = section(before, after)
    print(text)
    if args.write:
        write_section(args.write, "page-weight", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
