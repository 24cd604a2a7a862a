"""What checking the saved search index costs a start (issue 34, finding 14): the index load of a
data directory whose graphs and projection are saved, with the checks (each file's CRC-32, the
codes every row names, the graphs and the projection against each other and SQLite) and with them
turned off, each in a fresh process, and the time each check took.

    python -m bench.scale fill --dir D --size 100000 --dtype i8
    python -m bench.scale first-start --dir D --inline --dtype i8     # builds and saves the graphs
    python -m bench.snapshot_checks --dir D --runs 5                  # → BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import machine


def _timed(module: Any, name: str, spent: dict[str, float], key: str) -> None:
    real = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

    setattr(module, name, wrapper)


def one_load(data_dir: Path, checks: bool) -> dict:
    """One process's index load (the child of `main`)."""
    from bench import scale
    from memlane.adapters.local import saved_check, search_index, search_snapshot, vector_ann

    search_index.ANN_DTYPE = "i8"
    spent: dict[str, float] = {}
    names: list[tuple[Any, str, str]] = [
        (vector_ann, "check_file", "checksums"), (search_snapshot, "check_file", "checksums"),
        (vector_ann, "check_manifest", "manifests"), (search_snapshot, "check_manifest", "manifests"),
        (search_snapshot, "_check_codes", "codes"), (saved_check, "check_saved", "graphs_and_sqlite"),
    ]
    for module, name, key in names:
        if checks:
            _timed(module, name, spent, key)
        else:
            nothing: Callable[..., None] = lambda *args, **kwargs: None  # noqa: E731
            setattr(module, name, nothing)
    stack = scale._stack(data_dir)
    started = time.perf_counter()
    rows = stack.index.warm()
    load = time.perf_counter() - started
    mapped = stack.index._matrix.ann is not None
    stack.close()
    return {"rows": rows, "index_load_s": load, "mapped": mapped, **{k: round(v, 4) for k, v in spent.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.snapshot_checks", description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--child", choices=["with", "without"])
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(one_load(args.dir, checks=args.child == "with")))
        return 0
    runs: dict[str, list[dict]] = {"with": [], "without": []}
    for _ in range(args.runs):  # alternated, so both see the same load
        for mode in ("without", "with"):
            out = subprocess.run([sys.executable, "-m", "bench.snapshot_checks", "--dir", str(args.dir), "--child", mode],
                                 capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
    size = sum(p.stat().st_size for p in (args.dir / "search-ann").iterdir())
    summary = {
        "machine": machine(), "load_average": os.getloadavg(), "rows": runs["with"][0]["rows"],
        "search_ann_mb": round(size / 1e6, 1),
        "mapped": all(r["mapped"] for r in runs["with"] + runs["without"]),
        "index_load_median_s": {m: round(statistics.median(r["index_load_s"] for r in runs[m]), 3) for m in runs},
        "checks_median_s": {k: round(statistics.median(r.get(k, 0.0) for r in runs["with"]), 3)
                            for k in ("checksums", "manifests", "codes", "graphs_and_sqlite")},
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
