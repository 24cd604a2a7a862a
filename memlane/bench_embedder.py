"""`python -m memlane.bench_embedder`: the local embedder, before and after, → BENCHMARKS.md.

Every implementation is measured in the same run on the same texts, one after the other:
sentence-transformers on torch (the embedder before issue 16: one lock for queries and documents),
ONNX Runtime fp32 (the default now) and ONNX Runtime int8 (an option, its own embedder id).

- long chunks: the ingestion benchmark's chunks (memlane.bench: ~2,000 characters, past MiniLM's
  256-word-piece window) in batches of the pipeline's size: chunks/s.
- short memories: one-sentence notes, one per call as an inline save embeds them, and 16 per call
  (what batching across concurrent requests could reach at most): memories/s.
- query latency: p50/p95 of embed_query alone, then while another thread embeds documents
  continuously (a save or a crawl in progress: what a recall waits for).
- over HTTP: a local server on loopback, clients saving short memories only (saves/s), then the
  reliability row 19 mix (each client saves a note then recalls it).
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx

from memlane.bench import _document_text, _p95, _vocab, machine, write_section
from memlane.config import ContextSides, Settings
from memlane.documents.writer import EMBED_BATCH, embedding_text, make_chunks
from memlane.domain.models import Document
from memlane.ingest.chunking import chunk_text
from memlane.ports import Embedder

SHORT = "Load client {n} note {i} marker {m}: the tide was {t} metres."


def long_chunks(count: int) -> list[str]:
    rng = random.Random(1)
    vocab, weights = _vocab()
    out: list[str] = []
    now = datetime.now(UTC)
    while len(out) < count:
        text = _document_text(rng, vocab, weights, rng.randint(4, 14))
        doc = Document(organization_id="o", project_id="p", user_id="u", title=text[:40], content=text,
                       created_at=now)
        out.extend(embedding_text(c) for c in make_chunks(doc, chunk_text(text)))
    return out[:count]


def short_memories(count: int) -> list[str]:
    return [SHORT.format(n=i % 50, i=i, m=uuid.uuid4().hex[:10], t=i % 7) for i in range(count)]


def queries(count: int) -> list[str]:
    rng = random.Random(3)
    words = ["tide", "marker", "sort", "list", "dictionary", "python", "default", "value", "memory",
             "thread", "lock", "server", "recall", "save", "note", "metres", "client", "query"]
    return [" ".join(rng.choices(words, k=rng.randint(2, 6))) for _ in range(count)]


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, _p95(ordered) * 1000


def measure(embedder, n_long: int, n_short: int, n_queries: int, busy_budget_s: float = 120.0) -> dict:
    chunks, shorts, qs = long_chunks(n_long), short_memories(n_short), queries(n_queries)
    embedder.embed_documents(chunks[:EMBED_BATCH])  # warm: first calls at a new length are slower
    embedder.embed_query("warm up")
    row: dict = {"embedder": getattr(embedder, "id", "?")}

    start = time.perf_counter()
    for i in range(0, len(chunks), EMBED_BATCH):
        embedder.embed_documents(chunks[i : i + EMBED_BATCH])
    row["long_per_s"] = len(chunks) / (time.perf_counter() - start)

    start = time.perf_counter()
    for text in shorts:
        embedder.embed_documents([text])
    row["short_per_s"] = len(shorts) / (time.perf_counter() - start)
    start = time.perf_counter()
    for i in range(0, len(shorts), 16):
        embedder.embed_documents(shorts[i : i + 16])
    row["short16_per_s"] = len(shorts) / (time.perf_counter() - start)

    idle = []
    for q in qs:
        t = time.perf_counter()
        embedder.embed_query(q)
        idle.append(time.perf_counter() - t)
    row["query_p50_ms"], row["query_p95_ms"] = _ms(idle)

    # the same queries while another thread embeds documents without a pause
    stop = threading.Event()
    embedded = [0]

    def documents() -> None:
        i = 0
        while not stop.is_set():
            batch = chunks[i % len(chunks) : i % len(chunks) + 32] or chunks[:32]
            embedder.embed_documents(batch)
            embedded[0] += len(batch)
            i += 32

    background = threading.Thread(target=documents, daemon=True)
    background_start = time.perf_counter()
    background.start()
    time.sleep(0.5)  # let the first batch get going: the queries must land inside batches
    busy = []
    start = time.perf_counter()
    for q in qs:
        t = time.perf_counter()
        embedder.embed_query(q)
        busy.append(time.perf_counter() - t)
        if time.perf_counter() - start > busy_budget_s:
            break  # behind one lock, each query waits out a whole batch (or several: no fairness)
    row["busy_queries"] = len(busy)
    stop.set()
    background.join()  # the batch in flight counts, so its time does too
    row["busy_query_p50_ms"], row["busy_query_p95_ms"] = _ms(busy)
    row["busy_long_per_s"] = embedded[0] / (time.perf_counter() - background_start)
    row["load_average"] = os.getloadavg()[0]
    return row


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def over_http(data_dir: Path, embedder, clients: int, seconds: float, context: ContextSides = "both") -> dict:
    """Saves only (short memories, inline), then the save-and-recall mix, on one local server.
    `context`: contextual indexing (MEMLANE_CONTEXT_SIDES); every save here is in one sitting of
    one project, so with it on each save also embeds its window and rebuilds the previous one's."""
    from memlane.loadtest import run_load
    from memlane.local.server import LocalServer
    from memlane.services.keys import create_key

    port = _free_port()
    server = LocalServer(Settings(data_dir=data_dir, context_sides=context), port=port, embedder=embedder)
    server.prepare()
    embedder.embed_query("warm up")
    keys = [create_key(server.stack.metadata, "bench", f"c{i}", rate_limit_per_minute=1_000_000)[0]
            for i in range(clients)]
    server.start_in_thread()
    base = f"http://127.0.0.1:{port}"
    try:
        saved, errors, latencies = [0], [0], []
        lock = threading.Lock()
        deadline = time.monotonic() + seconds

        def client(n: int, key: str) -> None:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
                i = 0
                while time.monotonic() < deadline:
                    body = {"content": SHORT.format(n=n, i=i, m=uuid.uuid4().hex[:10], t=i % 7)}
                    t = time.perf_counter()
                    r = c.post("/v3/memory", json=body)
                    with lock:
                        if r.status_code in (200, 201):
                            saved[0] += 1
                            latencies.append(time.perf_counter() - t)
                        else:
                            errors[0] += 1
                    i += 1

        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(n, k)) for n, k in enumerate(keys)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        p50, p95 = _ms(latencies)
        mix = run_load(base, keys, seconds).summary()
        return {"saves_per_s": saved[0] / elapsed, "save_errors": errors[0], "save_p50_ms": p50, "save_p95_ms": p95,
                "mix": mix, "load_average": os.getloadavg()[0]}
    finally:
        server.shutdown()


def embedders(names: list[str]):
    from memlane.adapters.local.embedder import MiniLMEmbedder
    from memlane.adapters.local.embedder_torch import MiniLMTorchEmbedder

    made: dict[str, tuple[str, Callable[[], Embedder]]] = {
        "torch": ("sentence-transformers on torch (before)", MiniLMTorchEmbedder),
        "onnx": ("ONNX Runtime fp32 (default)", lambda: MiniLMEmbedder("fp32")),
        "int8": ("ONNX Runtime int8 (option)", lambda: MiniLMEmbedder("int8")),
        "w128": ("ONNX Runtime fp32, 128-word-piece window (option)", lambda: MiniLMEmbedder("fp32", window=128)),
    }
    return [(made[n][0], made[n][1]()) for n in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m memlane.bench_embedder")
    ap.add_argument("--embedders", default="torch,onnx,int8")
    ap.add_argument("--long", type=int, default=256, help="long chunks embedded")
    ap.add_argument("--short", type=int, default=256, help="short memories embedded")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--clients", type=int, default=16, help="HTTP clients; 0 skips the HTTP runs")
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each HTTP run")
    ap.add_argument("--context", default=Settings().context_sides, choices=("none", "before", "both"),
                    help="contextual indexing during the HTTP runs (MEMLANE_CONTEXT_SIDES)")
    ap.add_argument("--out", default="BENCHMARKS.md")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memlane-bench-embedder-") as tmp:
        for n, (label, embedder) in enumerate(embedders(args.embedders.split(","))):
            embedder.load()
            row = measure(embedder, args.long, args.short, args.queries)
            if args.clients:
                row["http"] = over_http(Path(tmp) / f"http-{n}", embedder, args.clients, args.seconds,
                                        args.context)
            row["label"] = label
            print(row, flush=True)
            rows.append(row)
    write_section(Path(args.out), "embedder", render(rows, args))
    print(f"wrote {args.out}")
    return 0


def render(rows: list[dict], args) -> str:
    lines = [
        "## Local embedder: before and after (issue 16 item 4)",
        "",
        f"Machine: {machine()}. Date: {datetime.now(UTC):%Y-%m-%d}. Load average during the runs: "
        f"{min(r['load_average'] for r in rows):.1f}-{max(r['load_average'] for r in rows):.1f}.",
        f"Reproduce: `python -m memlane.bench_embedder --embedders {args.embedders} --long {args.long} "
        f"--short {args.short} --queries {args.queries} --clients {args.clients} --seconds {args.seconds:g} "
        f"--context {args.context}`.",
        "",
        "| embedder | long chunks/s | short memories/s (1 per call · 16 per call) | query p50 / p95 idle "
        "| query p50 / p95 while documents embed (queries) | chunks/s meanwhile |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['label']} | {r['long_per_s']:.1f} | {r['short_per_s']:.1f} · {r['short16_per_s']:.1f} | "
            f"{r['query_p50_ms']:.1f} / {r['query_p95_ms']:.1f} ms | {r['busy_query_p50_ms']:.1f} / "
            f"{r['busy_query_p95_ms']:.1f} ms ({r['busy_queries']}) | {r['busy_long_per_s']:.1f} |"
        )
    http = [r for r in rows if "http" in r]
    if http:
        lines += [
            "",
            f"Over HTTP (local server on loopback, {args.clients} clients, {args.seconds:g} s each, contextual "
            f"indexing `{args.context}`): short memories saved inline into one project, then each client saving "
            "a note and recalling it (reliability row 19).",
            "",
            "| embedder | saves/s | save p50 / p95 | mix: requests/s | mix: save p50 / p95 | mix: recall p50 / p95 "
            "| errors |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in http:
            h, m = r["http"], r["http"]["mix"]
            lines.append(
                f"| {r['label']} | {h['saves_per_s']:.1f} | {h['save_p50_ms']:.0f} / {h['save_p95_ms']:.0f} ms | "
                f"{m['throughput_rps']} | {m['save_p50_ms']:.0f} / {m['save_p95_ms']:.0f} ms | "
                f"{m['recall_p50_ms']:.0f} / {m['recall_p95_ms']:.0f} ms | {h['save_errors'] + m['errors']} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
