"""`make bench-scale`: the embedded default at 100,000, 1,000,000 and 3,000,000 chunks → BENCHMARKS.md.

Each size is one data directory under --root, filled once through the index's write path (the same
synthetic English-shaped text as `make bench`, with clustered vectors: bench.corpus.clustered) in
a project "main", plus a project "small" holding 1 % as many chunks. Then, each in its own process
so one figure does not disturb the next:

* first start: the first process on the filled directory builds the HNSW partitions from the
  stored vectors and saves them (what the first start after the upgrade does);
* start to first answer: from the moment the parent spawns a fresh process to that process's first
  recall answer (interpreter, imports, embedder, index load, the recall), with the page cache warm
  and after dropping it (`echo 3 > /proc/sys/vm/drop_caches`, which needs root);
* misses: p50/p95 of first recalls of distinct queries through the recall service, one client,
  then four concurrent clients (threads of one process, as the server runs them); resident memory
  after them (VmRSS, which counts mapped file pages); save throughput (memories saved with the real
  embedder, each then searchable) at that size; disk (the whole data directory);
* recall: the vector leg's top 10 against exact search over the stored float32 vectors, for the
  big project and for the 1 % project.

`real` measures recall@10 against exact on the real MiniLM vectors the workload suite caches
(bench/.cache/embeddings.sqlite3): its documents indexed, its queries searched.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.common import machine, p95
from bench.corpus import clustered, fill, vocab
from memlane.adapters.local.search_index import STOPWORDS
from memlane.config import Settings
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.ports import SearchScope

SEED = 11
SMALL_SEED = 12
QUERY_SEED = 13


def _clusters(size: int) -> int:
    return max(50, size // 500)


def _rss_mb() -> dict:
    status = Path("/proc/self/status").read_text()
    values = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if line.startswith("Vm")}
    return {"rss_mb": values.get("VmRSS", 0) / 1024, "hwm_mb": values.get("VmHWM", 0) / 1024}


def _disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def _stack(data_dir: Path):
    from memlane.adapters.local.embedder import MiniLMEmbedder
    from memlane.local.compose import build_local

    embedder = MiniLMEmbedder()
    embedder.load()
    return build_local(Settings(data_dir=data_dir), embedder=embedder)


def _scope_ids(stack) -> tuple[str, str, str]:
    from memlane.services.keys import ensure_organization

    org, _ = ensure_organization(stack.metadata, "bench")
    projects = {p.name: p.id for p in stack.metadata.list_projects(org.id)}
    return org.id, projects["main"], projects["small"]


def cmd_fill(data_dir: Path, size: int) -> dict:
    from memlane.domain.models import Project
    from memlane.services.keys import ensure_organization

    stack = _stack(data_dir)
    org, _ = ensure_organization(stack.metadata, "bench")
    have = {p.name for p in stack.metadata.list_projects(org.id)}
    for name in ("main", "small"):
        if name not in have:
            stack.metadata.create_project(Project(organization_id=org.id, name=name, slug=name))
    _, main, small = _scope_ids(stack)
    dim = stack.services.embedder.dimension
    t0 = time.perf_counter()
    fill(stack, org.id, main, size, dim, vectors=clustered(SEED, dim, _clusters(size)))
    fill(stack, org.id, small, size // 100, dim, vectors=clustered(SMALL_SEED, dim, _clusters(size // 100)),
         seed=SMALL_SEED)
    fill_s = time.perf_counter() - t0
    chunks = stack.index.chunk_count()
    stack.close()
    return {"chunks": chunks, "fill_s": fill_s}


def cmd_first_start(data_dir: Path, inline: bool = False) -> dict:
    """The first process after the upgrade. By default as `memlane serve` starts: the projection
    and the float32 matrix loaded (searches answer exactly from then on), the graphs built from the
    matrix by a background thread, then saved. With `inline`, the graphs are built inside the first
    load through the sync batches (what a process without the background build does)."""
    t0 = time.perf_counter()
    stack = _stack(data_dir)
    stack.index.warm(background_build=not inline)
    out = {"first_start_s": time.perf_counter() - t0, "inline": inline, **_rss_mb()}
    if not inline:
        out["answering_s"] = out["first_start_s"]
        stack.index.wait_for_graphs()
        out["graphs_ready_s"] = time.perf_counter() - t0
        out.update(_rss_mb())
    t0 = time.perf_counter()
    stack.index.save()
    out["save_s"] = time.perf_counter() - t0
    stack.close()
    return out


def cmd_follow(data_dir: Path, fill_pid: int) -> dict:
    """A second process on a directory another one is filling (a server while a CLI imports):
    it catches up through the sequence number every 20 s, adding the new rows to its graphs and
    saving them as they grow, until the filling process has exited."""
    stack = _stack(data_dir)
    rounds = 0
    while True:
        filling = Path(f"/proc/{fill_pid}").exists()
        t = time.perf_counter()
        rows = stack.index.warm()
        if not filling:
            stack.index.save()
        print(json.dumps({"rows": rows, "sync_s": time.perf_counter() - t, "at": time.time()}), flush=True)
        rounds += 1
        if not filling:
            break
        time.sleep(20)
    out = {"followed_rounds": rounds, "rows": rows, **_rss_mb()}
    stack.close()
    return out


def cmd_first_answer(data_dir: Path, spawned_at: float) -> dict:
    """A fresh process's first recall answer, timed from when the parent spawned it."""
    from memlane.recall.service import recall

    started = time.time()  # the interpreter is up and this module imported
    stack = _stack(data_dir)
    org, main, _ = _scope_ids(stack)
    who = Principal(organization_id=org, key_id="bench")
    opened = time.time()  # the stores opened and the embedder loaded
    stack.index.warm()
    loaded = time.time()
    # a query never asked before in this directory: a cached ranking would not be a first answer
    query = _queries(1, int(spawned_at * 1000))[0]
    recall(stack.services, who, RecallIn(query=query, limit=10, project_id=main))
    return {
        "first_answer_s": time.time() - spawned_at,
        "interpreter_imports_s": started - spawned_at,
        "open_and_embedder_s": opened - started,
        "index_load_s": loaded - opened,
        "first_recall_s": time.time() - loaded,
        **_rss_mb(),
    }


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    terms, _ = vocab()
    content = terms[len(STOPWORDS) : len(STOPWORDS) + 2000]
    return [" ".join(rng.choices(content, k=rng.randint(2, 6))) for _ in range(n)]


def cmd_measure(data_dir: Path, queries: int, clients: int, saves: int) -> dict:
    from memlane.recall.service import recall
    from memlane.services.memory import save_memory

    stack = _stack(data_dir)
    stack.services.embedder.embed_query("warm up")
    stack.index.warm()
    org, main, small = _scope_ids(stack)
    who = Principal(organization_id=org, key_id="bench")

    def ask(q: str, project: str = main) -> float:
        t = time.perf_counter()
        recall(stack.services, who, RecallIn(query=q, limit=10, project_id=project))
        return (time.perf_counter() - t) * 1000

    # Queries never asked before in this directory (the recall cache keeps a ranking for 300 s, and
    # an earlier run's queries would be hits): seeded by the run's start time.
    run = int(time.time())
    for q in _queries(2, run - 1):
        ask(q)
    one = sorted(ask(q) for q in _queries(queries, run))
    small_ms = sorted(ask(q, small) for q in _queries(queries // 2, run + 1))
    # four clients at once, each with its own queries (all misses)
    lists = [_queries(queries, run + 10 + c) for c in range(clients)]
    many: list[float] = []
    lock = threading.Lock()

    def client(qs: list[str]) -> None:
        mine = [ask(q) for q in qs]
        with lock:
            many.extend(mine)

    threads = [threading.Thread(target=client, args=(qs,)) for qs in lists]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    many.sort()
    # the parts of a miss: query embedding, BM25 leg, both legs
    scope = SearchScope(organization_id=org, project_ids=(main,), now=datetime.now(UTC))
    embed_ms, text_ms, legs_ms = [], [], []
    for q in _queries(queries, run + 3):
        t = time.perf_counter()
        vector = stack.services.embedder.embed_query(q)
        embed_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        stack.index.search(scope, q, None, 50)
        text_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        stack.index.search(scope, q, vector, 50)
        legs_ms.append((time.perf_counter() - t) * 1000)
    rss = _rss_mb()
    # saves at this size: each memory saved inline (embedded, stored, indexed), then recalled once so
    # the index has taken it in
    texts = [" ".join(_queries(12, run + 100 + i)) for i in range(saves)]
    t = time.perf_counter()
    for text in texts:
        save_memory(stack.services, who, MemoryIn(content=text, project_id=main), inline=True)
    ask(" ".join(_queries(1, run + 99)))
    save_s = time.perf_counter() - t
    out = {
        "chunks": stack.index.chunk_count(),
        "queries": len(one),
        "p50_ms": statistics.median(one),
        "p95_ms": p95(one),
        "small_p50_ms": statistics.median(small_ms),
        "small_p95_ms": p95(small_ms),
        "clients": clients,
        "many_p50_ms": statistics.median(many),
        "many_p95_ms": p95(many),
        "embed_p50_ms": statistics.median(embed_ms),
        "text_p50_ms": statistics.median(text_ms),
        "legs_p50_ms": statistics.median(legs_ms),
        "legs_p95_ms": p95(sorted(legs_ms)),
        "saves_per_s": saves / save_s,
        **rss,
        "disk_mb": _disk_mb(data_dir),
        "load_average": os.getloadavg()[0],
    }
    stack.close()
    return out


def _exact_recall(index, scope: SearchScope, ids: list[str], matrix: np.ndarray, queries: np.ndarray) -> float:
    hits = 0
    for q in queries:
        got = {c.chunk_id for c in index.search(scope, "", q.tolist(), 10).vector}
        scores = matrix @ q
        best = np.argpartition(-scores, 9)[:10]
        hits += len(got & {ids[i] for i in best})
    return hits / (10 * len(queries))


def _stored(conn: sqlite3.Connection, project: str) -> tuple[list[str], np.ndarray]:
    ids, blobs = [], []
    for chunk_id, vector in conn.execute("SELECT chunk_id, vector FROM search_rows WHERE project_id = ?", (project,)):
        ids.append(chunk_id)
        blobs.append(vector)
    return ids, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


def cmd_saves(data_dir: Path, saves: int) -> dict:
    """Saves in a row at this size, each followed by a search that takes it into the index: the
    latency of each (p50, p99, the slowest) and the process's peak memory, which show what a save
    costs the index's in-memory structures when they reorganise (the BM25 postings' runs)."""
    from memlane.services.memory import save_memory

    stack = _stack(data_dir)
    stack.services.embedder.embed_query("warm up")
    stack.index.warm()
    org, main, _ = _scope_ids(stack)
    who = Principal(organization_id=org, key_id="bench")
    scope = SearchScope(organization_id=org, project_ids=(main,), now=datetime.now(UTC))
    run = int(time.time())
    texts = [" ".join(_queries(40, run * 10_000 + i)) for i in range(saves)]  # never saved before
    times = []
    for text in texts:
        t = time.perf_counter()
        save_memory(stack.services, who, MemoryIn(content=text, project_id=main), inline=True)
        stack.index.search(scope, "kestrel", None, 10)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    out = {
        "saves": saves,
        "save_and_search_p50_ms": statistics.median(times),
        "save_and_search_p99_ms": times[max(0, int(0.99 * len(times)) - 1)],
        "save_and_search_max_ms": times[-1],
        **_rss_mb(),
        "load_average": os.getloadavg()[0],
    }
    stack.close()
    return out


def cmd_recall(data_dir: Path, queries: int) -> dict:
    stack = _stack(data_dir)
    stack.index.warm()
    org, main, small = _scope_ids(stack)
    size = stack.index.chunk_count() * 100 // 101
    dim = stack.services.embedder.dimension
    conn = sqlite3.connect(data_dir / "memlane.sqlite3")
    out = {}
    for name, project, seed, n in (("main", main, SEED, size), ("small", small, SMALL_SEED, size // 100)):
        ids, matrix = _stored(conn, project)
        qs = clustered(seed, dim, _clusters(n), noise_seed=QUERY_SEED)(queries)
        scope = SearchScope(organization_id=org, project_ids=(project,), now=datetime.now(UTC))
        out[f"recall10_{name}"] = _exact_recall(stack.index, scope, ids, matrix, qs)
        # and the vector leg alone on those queries
        times = []
        for q in qs:
            t = time.perf_counter()
            stack.index.search(scope, "", q.tolist(), 50)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        out[f"vector_leg_{name}_p50_ms"] = statistics.median(times)
        out[f"vector_leg_{name}_p95_ms"] = p95(times)
    stack.close()
    return out


def cmd_real(cache: Path, work: Path, dtype: str = "f16") -> dict:
    """Recall@10 against exact on real all-MiniLM-L6-v2 vectors from the workload suite's cache."""
    from memlane.adapters.local.search_index import SqliteSearchIndex
    from memlane.adapters.local.sqlite_db import SqliteDatabase
    from memlane.domain.models import Chunk, ContentType, chunk_id_for
    from memlane.ports import IndexedChunk

    src = sqlite3.connect(cache)
    docs = np.frombuffer(
        b"".join(r[0] for r in src.execute("SELECT vector FROM vectors WHERE kind = 'document' ORDER BY sha")),
        dtype=np.float32,
    ).reshape(-1, 384)
    queries = np.frombuffer(
        b"".join(r[0] for r in src.execute("SELECT vector FROM vectors WHERE kind = 'query' ORDER BY sha")),
        dtype=np.float32,
    ).reshape(-1, 384)
    shutil.rmtree(work, ignore_errors=True)
    index = SqliteSearchIndex(SqliteDatabase(work / "real.sqlite3"), 384, ann_at=1, ann_dtype=dtype)
    now = datetime.now(UTC)
    items = []
    for i, v in enumerate(docs):
        doc = f"d{i // 100}"
        c = Chunk(id=chunk_id_for(doc, i % 100), document_id=doc, organization_id="o", project_id="p",
                  content="", chunk_index=i % 100, chunk_count=100, start_offset=0, end_offset=0, title="",
                  content_type=ContentType.TEXT, created_at=now)
        items.append(IndexedChunk(c, v.tolist()))
    for i in range(0, len(items), 5_000):
        index.upsert("real", items[i : i + 5_000])
    t = time.perf_counter()
    index.warm()
    build_s = time.perf_counter() - t
    ids = [it.chunk.id for it in items]
    scope = SearchScope(organization_id="o", project_ids=("p",), now=now)
    from memlane.adapters.local import search_legs

    search_legs.GATHER_AT_MOST = 0  # through the graph, as at any size above it
    recall10 = _exact_recall(index, scope, ids, docs, queries)
    return {"real_vectors": len(docs), "real_queries": len(queries), "real_recall10": recall10,
            "real_build_s": build_s, "dtype": dtype}


def cmd_crossover(sizes: list[int], queries: int = 200) -> dict:
    """Where the graph beats the exact product: the vector leg's core at each size, both ways, on
    one thread (k = 50 candidates; the graph's 100 re-scored against float32 vectors in memory)."""
    from memlane.adapters.local.search_legs import _one_blas_thread
    from memlane.adapters.local.vector_ann import Partitions

    out = {}
    for n in sizes:
        data = clustered(SEED, 384, _clusters(n))(n)
        qs = clustered(SEED, 384, _clusters(n), noise_seed=QUERY_SEED)(queries)
        ann = Partitions(384)
        ann.upsert("o", "p", np.arange(n), data)
        exact_ms, graph_ms = [], []
        with _one_blas_thread():
            for q in qs:
                t = time.perf_counter()
                scores = data @ q
                np.argpartition(-scores, 49)[:50]
                exact_ms.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                keys, _ = ann.search("o", "p", q, 100)
                scores = data[keys] @ q
                np.argpartition(-scores, 49)[:50]
                graph_ms.append((time.perf_counter() - t) * 1000)
        out[str(n)] = {"exact_p50_ms": statistics.median(exact_ms), "graph_p50_ms": statistics.median(graph_ms)}
    return out


CHILD_ARGS: list[str] = []  # options every child gets (--dtype)


def _child(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "bench.scale", *args, *CHILD_ARGS], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def cmd_size(root: Path, size: int, queries: int, clients: int, saves: int) -> dict:
    data_dir = root / f"scale-{size}"
    row: dict = {"size": size}
    if not (data_dir / "memlane.sqlite3").exists():
        row.update(_child("fill", "--dir", str(data_dir), "--size", str(size)))
    if not (data_dir / "search-ann" / "manifest.json").exists():
        row.update(_child("first-start", "--dir", str(data_dir)))
    _child("first-answer", "--dir", str(data_dir), "--spawned-at", str(time.time()))  # warms the cache
    warm = _child("first-answer", "--dir", str(data_dir), "--spawned-at", str(time.time()))
    row.update({f"warm_{k}": v for k, v in warm.items()})
    if _drop_caches():
        cold = _child("first-answer", "--dir", str(data_dir), "--spawned-at", str(time.time()))
        row.update({f"cold_{k}": v for k, v in cold.items()})
    row.update(_child("measure", "--dir", str(data_dir), "--queries", str(queries), "--clients", str(clients),
                      "--saves", str(saves)))
    row.update(_child("recall", "--dir", str(data_dir), "--queries", str(queries)))
    row["uptime"] = os.getloadavg()
    return row


def eval_through_the_graphs(argv: list[str]) -> int:
    """The recall workload suite (bench.eval, same arguments) with every vector leg on the HNSW
    partitions from the first row and every scope searched through them: the suite's corpora are
    below ANN_AT, so this is what shows whether the graphs' float16 vectors (re-scored exactly)
    change its figures."""
    from bench.eval.__main__ import main as eval_main
    from memlane.adapters.local import search_index, search_legs

    search_index.ANN_AT = 1
    search_legs.GATHER_AT_MOST = 0
    if argv[:1] == ["--ann-dtype"]:  # the graphs' vector storage for this run
        search_index.ANN_DTYPE, argv = argv[1], argv[2:]
    return eval_main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval-ann"]:
        return eval_through_the_graphs(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["all", "size", "fill", "first-start", "first-answer", "measure", "recall",
                                        "real", "crossover", "follow", "saves"])
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--root", type=Path, default=Path("/var/tmp/memlane-scale"))
    ap.add_argument("--size", type=int)
    ap.add_argument("--sizes", default="100000,1000000,3000000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--saves", type=int, default=30)
    ap.add_argument("--spawned-at", type=float)
    ap.add_argument("--fill-pid", type=int)
    ap.add_argument("--inline", action="store_true",
                    help="with first-start: build the graphs inside the first load, not in the background")
    ap.add_argument("--exact", action="store_true", help="with measure: no graphs (the product over every vector)")
    ap.add_argument("--dtype", default="f16", help="the graphs' vector storage (f16, i8, f32)")
    ap.add_argument("--cache", type=Path, default=Path("bench/.cache/embeddings.sqlite3"))
    args = ap.parse_args(argv)
    if args.dtype != "f16" and args.command != "real":  # every process on the directory must agree
        from memlane.adapters.local import search_index

        search_index.ANN_DTYPE = args.dtype
    if args.command == "fill":
        out = cmd_fill(args.dir, args.size)
    elif args.command == "first-start":
        out = cmd_first_start(args.dir, args.inline)
    elif args.command == "saves":
        out = cmd_saves(args.dir, args.saves)
    elif args.command == "first-answer":
        out = cmd_first_answer(args.dir, args.spawned_at)
    elif args.command == "measure":
        if args.exact:  # the A/B: the same directory with the vector leg's exact product
            from memlane.adapters.local import search_index

            search_index.ANN_AT = 2**62
        out = cmd_measure(args.dir, args.queries, args.clients, args.saves) | {"exact": args.exact}
    elif args.command == "recall":
        out = cmd_recall(args.dir, args.queries)
    elif args.command == "real":
        out = cmd_real(args.cache, args.root / f"real-{args.dtype}", args.dtype)
    elif args.command == "follow":
        out = cmd_follow(args.dir, args.fill_pid)
    elif args.command == "crossover":
        out = cmd_crossover([int(s) for s in args.sizes.split(",")])
    elif args.command == "size":
        CHILD_ARGS.extend(["--dtype", args.dtype])
        out = cmd_size(args.root, args.size, args.queries, args.clients, args.saves)
    else:
        rows = [_child("real", "--root", str(args.root), "--cache", str(args.cache))]
        print(json.dumps(rows[0]), flush=True)
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(cmd_size(args.root, size, args.queries, args.clients, args.saves))
            print(json.dumps(rows[-1]), flush=True)
        out = {"rows": rows, "machine": machine()}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
