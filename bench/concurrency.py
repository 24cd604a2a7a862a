"""`make bench-concurrency`: does a save stall everyone else on the local server?

A real `memlane serve` on loopback (the embedded default: MiniLM, SQLite) holding 10,000 chunks;
two clients save 19,000-character documents back to back (each is embedded in its request: the
inline limit is 20,000 characters) while a third recalls and a fourth polls /health. Reported:
recall p50/p95, /health p50/p99, the saves' own latency, and that every acknowledged save is
stored exactly once and ready. Targets (issue 10): recall p95 ≤ 300 ms, /health p99 ≤ 50 ms.

The 10,000 chunks are written straight into the stores with random unit vectors (as `make bench`
does), so the corpus costs seconds, not an hour of embedding; the saves under test are embedded
for real.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.common import free_port, machine, write_section
from bench.corpus import document_text, fill, vocab
from memlane.config import Settings

SAVE_CHARS = 19_000


@dataclass
class Timings:
    recall_ms: list[float] = field(default_factory=list)
    health_ms: list[float] = field(default_factory=list)
    save_ms: list[float] = field(default_factory=list)
    saved: list[tuple[str, str]] = field(default_factory=list)  # (document id, marker)
    errors: list[str] = field(default_factory=list)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


def run(data_dir: Path, chunks: int, seconds: float, savers: int = 2) -> dict:
    from memlane.adapters.local.embedder import MiniLMEmbedder
    from memlane.local.server import LocalServer
    from memlane.services.keys import create_key

    port = free_port()
    embedder = MiniLMEmbedder()
    server = LocalServer(Settings(data_dir=data_dir), port=port, embedder=embedder)
    secret, key, org = create_key(server.stack.metadata, "bench", "bench", rate_limit_per_minute=1_000_000)
    project = server.stack.metadata.list_projects(org.id)[0]
    fill(server.stack, org.id, project.id, chunks, embedder.dimension)
    server.prepare()
    embedder.embed_documents(["warm up " * 200] * 16)
    embedder.embed_query("warm up")
    server.start_in_thread()
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {secret}"}
    rng = random.Random(5)
    terms, weights = vocab()
    timings = Timings()
    lock = threading.Lock()
    stop = threading.Event()

    def saver(n: int) -> None:
        local = random.Random(100 + n)
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
            while not stop.is_set():
                marker = f"zq{uuid.uuid4().hex[:12]}"
                text = f"{marker}\n\n" + document_text(local, terms, weights, 60)
                text = text[:SAVE_CHARS]
                started = time.perf_counter()
                r = client.post("/v3/memory", json={"content": text, "title": f"Long note {marker}"})
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    if r.status_code in (200, 201, 202):
                        timings.save_ms.append(elapsed)
                        timings.saved.append((r.json()["id"], marker))
                    else:
                        timings.errors.append(f"save {r.status_code}: {r.text[:200]}")

    def recaller() -> None:
        queries = [" ".join(rng.choices(terms[200:2000], k=3)) for _ in range(200)]
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            i = 0
            while not stop.is_set():
                started = time.perf_counter()
                r = client.post("/v3/recall", json={"query": queries[i % len(queries)], "limit": 10})
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    (timings.recall_ms.append(elapsed) if r.status_code == 200
                     else timings.errors.append(f"recall {r.status_code}"))
                i += 1

    def health() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while not stop.is_set():
                started = time.perf_counter()
                r = client.get("/health")
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    (timings.health_ms.append(elapsed) if r.status_code == 200
                     else timings.errors.append(f"health {r.status_code}"))
                time.sleep(0.02)

    threads = [threading.Thread(target=saver, args=(n,)) for n in range(savers)]
    threads += [threading.Thread(target=recaller), threading.Thread(target=health)]
    load_before = os.getloadavg()[0]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    load_after = os.getloadavg()[0]
    try:
        lost, duplicated, not_ready = _check_saves(url, headers, timings.saved)
    finally:
        server.shutdown()
    return {
        "chunks": chunks,
        "seconds": seconds,
        "savers": savers,
        "saves": len(timings.saved),
        "save_p50_ms": statistics.median(timings.save_ms) if timings.save_ms else 0.0,
        "save_p95_ms": _pct(timings.save_ms, 0.95),
        "recalls": len(timings.recall_ms),
        "recall_p50_ms": statistics.median(timings.recall_ms) if timings.recall_ms else 0.0,
        "recall_p95_ms": _pct(timings.recall_ms, 0.95),
        "health": len(timings.health_ms),
        "health_p50_ms": statistics.median(timings.health_ms) if timings.health_ms else 0.0,
        "health_p99_ms": _pct(timings.health_ms, 0.99),
        "errors": timings.errors[:5],
        "error_count": len(timings.errors),
        "lost": lost,
        "duplicated": duplicated,
        "not_ready": not_ready,
        "load": (load_before, load_after),
    }


def _check_saves(url: str, headers: dict, saved: list[tuple[str, str]]) -> tuple[int, int, int]:
    """Every acknowledged save is one ready document, found once by its unique marker."""
    lost = duplicated = not_ready = 0
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        for doc_id, marker in saved:
            r = client.get(f"/v3/documents/{doc_id}")
            if r.status_code != 200:
                lost += 1
                continue
            if r.json()["status"] != "ready":
                not_ready += 1
            found = client.post("/v3/recall", json={"query": marker, "limit": 20}).json()["results"]
            hits = [x for x in found if marker in x["title"]]
            duplicated += max(0, len(hits) - 1)
    return lost, duplicated, not_ready


def report(result: dict) -> str:
    met = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    lines = [
        "## Local server under save pressure (concurrency)",
        "",
        f"Machine: {machine()}. Date: {datetime.now(UTC):%Y-%m-%d}. Load average "
        f"{result['load'][0]:.1f} before, {result['load'][1]:.1f} after the run.",
        "",
        "Reproduce: `make bench-concurrency` (`python -m bench.concurrency --write BENCHMARKS.md`).",
        "",
        f"A real `memlane serve` on loopback (MiniLM, SQLite) holding {result['chunks']:,} chunks; for "
        f"{result['seconds']:.0f} s, {result['savers']} clients save {SAVE_CHARS:,}-character documents back "
        "to back (each embedded in its request), one client recalls continuously and one polls /health "
        "every 20 ms.",
        "",
        "| measure | value | target |",
        "| --- | ---: | --- |",
        f"| recall p50 / p95 | {result['recall_p50_ms']:.0f} / {result['recall_p95_ms']:.0f} ms "
        f"({result['recalls']} recalls) | p95 ≤ 300 ms: {met(result['recall_p95_ms'] <= 300)} |",
        f"| /health p50 / p99 | {result['health_p50_ms']:.1f} / {result['health_p99_ms']:.1f} ms "
        f"({result['health']} requests) | p99 ≤ 50 ms: {met(result['health_p99_ms'] <= 50)} |",
        f"| saves acknowledged | {result['saves']} (p50 {result['save_p50_ms']:.0f} ms, p95 "
        f"{result['save_p95_ms']:.0f} ms) | |",
        f"| lost / duplicated / not ready | {result['lost']} / {result['duplicated']} / {result['not_ready']} "
        f"| 0 / 0 / 0: {met(not (result['lost'] or result['duplicated'] or result['not_ready']))} |",
        f"| errors | {result['error_count']} | 0 |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.concurrency", description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--write", type=Path, help="update this BENCHMARKS.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlane-concurrency-") as tmp:
        result = run(Path(tmp), args.chunks, args.seconds)
    text = report(result)
    print(text)
    if args.write:
        write_section(args.write, "concurrency", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
