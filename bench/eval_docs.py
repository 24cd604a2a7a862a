"""`make eval` (`python -m bench.eval_docs`): crawl a documentation directory served on loopback
through POST /index, then measure retrieval through POST /retrieve - hit@5 and MRR@10 for BM25
only, vector only and hybrid, scored at page level (../shared/eval/README.md) - and report the
crawl's throughput.

Everything goes over real HTTP: a static server on 127.0.0.1 for the docs, a memlane LocalServer
on 127.0.0.1 started with the private-network policy (it must reach the loopback docs server).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import platform
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench.common import free_port, write_section

PROG = "python -m bench.eval_docs"
DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html")
DEFAULT_QUERIES = Path(__file__).resolve().parents[1] / ".." / "shared" / "eval" / "python-docs-queries.jsonl"
MODES = ("bm25", "vector", "hybrid")
# The targets of issue 4: hybrid quality, hybrid ahead of each leg alone, the whole crawl in 10 minutes.
TARGET_HIT5 = 0.975
TARGET_MRR10 = 0.88
TARGET_CRAWL_S = 600.0


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return


class StaticSite:
    """A directory served over HTTP on 127.0.0.1 (the stdlib server, one thread per request)."""

    def __init__(self, root: Path, port: int = 0) -> None:
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port or free_port()), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StaticSite:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class CrawlReport:
    docset_id: str
    seconds: float
    pages_total: int
    pages_indexed: int
    pages_skipped: int
    pages_error: int
    pages_stuck: int
    chunks: int

    @property
    def pages_per_s(self) -> float:
        return self.pages_indexed / self.seconds if self.seconds else 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0


def crawl(
    client: httpx.Client, base_url: str, seed: str, timeout_s: float, progress: bool = True
) -> CrawlReport:
    started = time.monotonic()
    r = client.post(
        "/index", json={"baseUrl": base_url, "seedSlug": seed, "name": "eval docs", "waitForSeed": True}
    )
    r.raise_for_status()
    docset_id = r.json()["docsetId"]
    status: dict[str, Any] = {}
    interactive = sys.stderr.isatty()
    last_line = 0.0
    while time.monotonic() - started < timeout_s:
        status = client.get(f"/docset/{docset_id}").json()
        ix = status["indexStatus"]
        # On a terminal one line updates in place; in a log, a line every 30 s.
        if progress and (interactive or time.monotonic() - last_line >= 30):
            last_line = time.monotonic()
            line = (
                f"crawl: {ix['indexedPages']} indexed, {ix['pendingPages']} pending, {ix['skippedPages']} "
                f"skipped, {ix['errorPages']} errors, {ix['totalChunks']} chunks "
                f"({time.monotonic() - started:.0f} s)"
            )
            print(
                ("\r" + line) if interactive else line,
                end="" if interactive else "\n",
                file=sys.stderr,
                flush=True,
            )
        if status["status"] != "indexing":
            break
        time.sleep(1.0)
    if progress and interactive:
        print(file=sys.stderr)
    ix = status["indexStatus"]
    return CrawlReport(
        docset_id=docset_id,
        seconds=time.monotonic() - started,
        pages_total=ix["totalPages"],
        pages_indexed=ix["indexedPages"],
        pages_skipped=ix["skippedPages"],
        pages_error=ix["errorPages"],
        pages_stuck=ix["stuckPages"] or 0,
        chunks=ix["totalChunks"],
    )


def load_queries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def score(
    client: httpx.Client, docset_id: str, base_url: str, queries: list[dict[str, Any]], mode: str
) -> dict[str, float]:
    """hit@5 and MRR@10 over distinct pages (maxChunksPerPage 1 makes each result a page)."""
    hits = 0
    reciprocal = 0.0
    prefix = base_url.rstrip("/") + "/"
    for q in queries:
        r = client.post(
            "/retrieve",
            json={
                "query": q["query"],
                "topK": 10,
                "docsetIds": [docset_id],
                "maxChunksPerPage": 1,
                "maxTotalChars": 1_000_000,
                "formatSnippets": False,
                "mode": mode,
            },
        )
        r.raise_for_status()
        pages = [res["url"].removeprefix(prefix) for res in r.json()["results"]]
        relevant = set(q["relevant"])
        ranks = [i for i, page in enumerate(pages[:10], 1) if page in relevant]
        if ranks and ranks[0] <= 5:
            hits += 1
        if ranks:
            reciprocal += 1.0 / ranks[0]
    return {"hit@5": hits / len(queries), "mrr@10": reciprocal / len(queries)}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def targets_markdown(results: dict[str, dict[str, float]], c: CrawlReport) -> str:
    """One sentence: each target, met or not, with the figure."""
    hybrid = results["hybrid"]

    def verdict(ok: bool, figure: str) -> str:
        return f"**{'met' if ok else 'not met'} ({figure})**"

    ahead = all(hybrid[m] > results[leg][m] for leg in ("bm25", "vector") for m in ("hit@5", "mrr@10"))
    crawl_ok = c.seconds <= TARGET_CRAWL_S and c.pages_error == 0 and c.pages_stuck == 0
    hit5, mrr10 = hybrid["hit@5"], hybrid["mrr@10"]
    return (
        f"Targets: hybrid hit@5 ≥ {TARGET_HIT5} {verdict(hit5 >= TARGET_HIT5, f'{hit5:.3f}')}; "
        f"MRR@10 ≥ {TARGET_MRR10} {verdict(mrr10 >= TARGET_MRR10, f'{mrr10:.3f}')}; "
        f"hybrid better than each single leg on both measures {verdict(ahead, 'see the table')}; "
        f"crawl of the whole docs ≤ {TARGET_CRAWL_S / 60:.0f} minutes with 0 stuck and 0 error pages "
        f"{verdict(crawl_ok, f'{c.seconds:.0f} s, {c.pages_stuck} stuck, {c.pages_error} errors')}."
    )


def report_markdown(
    crawl_report: CrawlReport,
    results: dict[str, dict[str, float]],
    queries: int,
    command: str,
    settings: dict[str, Any],
    load_average: float | None = None,
) -> str:
    load = (
        f" (load average {load_average:.1f} over the last 5 minutes of the crawl, its own threads included)"
        if load_average is not None
        else ""
    )
    lines = [
        "## Documentation sets: retrieval quality and crawl throughput",
        "",
        f"Machine: {machine()}{load}. Date: {datetime.now(UTC):%Y-%m-%d}.",
        f"Command: `{command}`. Docs: Python 3.11 HTML (Debian python3.11-doc), served on 127.0.0.1 and",
        "crawled through `POST /index` on a local server (`--allow-private-network`), embedder",
        f"all-MiniLM-L6-v2. Settings: {', '.join(f'{k} {v}' for k, v in settings.items())}.",
        "",
        f"Retrieval ({queries} queries of python-docs-queries.jsonl through `POST /retrieve`, page level):",
        "",
        "| method | hit@5 | MRR@10 |",
        "| --- | --- | --- |",
    ]
    names = {"bm25": "BM25 only", "vector": "vector only", "hybrid": "hybrid (memlane fusion)"}
    for mode in MODES:
        lines.append(f"| {names[mode]} | {results[mode]['hit@5']:.3f} | {results[mode]['mrr@10']:.3f} |")
    c = crawl_report
    lines += [
        "",
        "Crawl (POST /index with waitForSeed to the docset reporting ready):",
        "",
        "| pages found | indexed | skipped | error | stuck | chunks | time | pages/s | chunks/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {c.pages_total} | {c.pages_indexed} | {c.pages_skipped} | {c.pages_error} | {c.pages_stuck} | "
        f"{c.chunks} | {c.seconds:.0f} s | {c.pages_per_s:.2f} | {c.chunks_per_s:.1f} |",
        "",
        targets_markdown(results, c),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from memlane.config import Settings
    from memlane.docsets.models import DocsetSettings
    from memlane.local.server import LocalServer

    docs = Path(args.docs_dir)
    queries_path = Path(args.queries)
    if not docs.is_dir():
        print(
            f"{PROG}: {docs} not found (apt-get install python3.11-doc, or pass --docs-dir)",
            file=sys.stderr,
        )
        return 2
    queries = load_queries(queries_path)
    docset_settings = DocsetSettings.from_env(os.environ)
    with tempfile.TemporaryDirectory(prefix="memlane-eval-") as tmp, StaticSite(docs, args.docs_port) as site:
        data_dir = Path(args.data_dir) if args.data_dir else Path(tmp) / "data"
        server = LocalServer(
            Settings.from_env(data_dir=data_dir),
            host="127.0.0.1",
            port=free_port(),
            allow_private_network=True,
            docset_settings=docset_settings,
        )
        server.prepare()
        server.stack.services.embedder.embed_query("warm up")
        server.start_in_thread()
        from memlane.services.keys import create_key

        # Its own key, with a rate limit that 3 × 40 queries plus the crawl's polling fit under.
        key, _, _ = create_key(server.stack.metadata, "default", "eval", rate_limit_per_minute=100_000)
        try:
            client = httpx.Client(
                base_url=f"http://127.0.0.1:{server.port}",
                headers={"Authorization": f"Bearer {key}"},
                timeout=120,
            )
            report = crawl(client, site.url + "/", "/index.html", args.timeout)
            load_average = os.getloadavg()[1]  # the crawl competes for the cores with anything else running
            print(
                f"crawl: {report.pages_indexed} pages indexed, {report.pages_skipped} skipped, "
                f"{report.pages_error} errors, {report.pages_stuck} stuck, {report.chunks} chunks in "
                f"{report.seconds:.0f} s ({report.pages_per_s:.2f} pages/s, "
                f"{report.chunks_per_s:.1f} chunks/s)"
            )
            results = {mode: score(client, report.docset_id, site.url, queries, mode) for mode in MODES}
        finally:
            server.shutdown()
    print(f"\n{'method':<10} {'hit@5':>6} {'MRR@10':>7}")
    for mode in MODES:
        print(f"{mode:<10} {results[mode]['hit@5']:>6.3f} {results[mode]['mrr@10']:>7.3f}")
    if args.write:
        w = docset_settings.fusion
        tokens = docset_settings.chunk_max_tokens
        settings = {
            "chunks": f"{tokens} tokens (~{tokens * 4} chars), "
            f"overlap {docset_settings.chunk_overlap_tokens}",
            "fusion": f"{w.vector}·vector + {w.text}·bm25 + {w.recency}·recency"
            + (
                f", page support {w.support}·(next {w.support_chunks} best chunks of the page)"
                if w.support
                else ""
            ),
        }
        body = report_markdown(report, results, len(queries), "make eval", settings, load_average)
        write_section(Path(args.write), "docsets", body)
        print(f"wrote the 'docsets' section of {args.write}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--docs-dir", default=str(DEFAULT_DOCS), help="HTML documentation to crawl")
    p.add_argument("--queries", default=str(DEFAULT_QUERIES.resolve()), help="JSONL: query, relevant pages")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the crawl")
    p.add_argument(
        "--write", metavar="BENCHMARKS.md", help="write the figures into this file's docsets section"
    )
    p.add_argument(
        "--data-dir",
        dest="data_dir",
        default=None,
        help="keep the index here (default: temporary); with --docs-port, a rerun skips the crawl",
    )
    p.add_argument("--docs-port", type=int, default=0, help="port for the docs server (default: any free)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Crawl docs served on loopback through POST /index, measure POST /retrieve (hit@5, MRR@10) "
        "and the crawl's throughput (what `make eval` runs).",
    )
    add_arguments(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
