"""`python -m bench.text_leg_scope`: the embedded text leg at a million rows, with BM25's statistics
counted over the scope searched (issue 22): the scope's mask and the text leg timed together, for
query terms whose postings hold 250,000 / 50,000 / 20,000 / 2,000 / 100 rows, the first query after
a write (the statistics counted again) and the following ones (cached until the index changes).

A synthetic projection, built straight in NumPy: 1,000,000 rows in four projects of two
organizations (60 % / 20 % / 10 % of them in the searched organization's projects, 10 % in another
organization), row lengths 20-400 tokens; the searched scope is the 60 % project. What the text leg
costs depends on the postings' lengths and the rows' count, not on their words, so no text is made.
Prints one line per query; writes nothing (BENCHMARKS.md quotes a run, "BM25 statistics from the
scope searched").
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

import numpy as np

from memlane.adapters.local import search_legs
from memlane.adapters.local.search_projection import ChunkIds, Projection
from memlane.ports import SearchScope

PROG = "python -m bench.text_leg_scope"
POSTINGS = {1: 250_000, 2: 50_000, 3: 20_000, 4: 2_000, 5: 100}  # term key -> rows holding it
QUERIES = {
    "one common term (250k rows)": [1],
    "common + two mid terms (320k)": [1, 2, 3],
    "two rare terms (2.1k)": [4, 5],
    "mid + rare (22k)": [3, 4],
}


def projection(rows: int, seed: int = 0) -> Projection:
    rng = np.random.default_rng(seed)
    m = Projection(8)
    m.reserve(rows)
    m.size = m.rows = rows
    m.alive[:rows] = True
    ours, theirs = m.codes.code("org:o"), m.codes.code("org:x")
    projects = [m.codes.code(f"project:p{i}") for i in range(4)]
    share = rng.random(rows)
    m.org[:rows] = np.where(share < 0.9, ours, theirs)
    m.project[:rows] = np.select([share < 0.6, share < 0.8, share < 0.9], projects[:3], projects[3])
    m.doclen[:rows] = rng.integers(20, 400, rows)
    m.tokens = float(m.doclen[:rows].sum(dtype=np.float64))
    m.chunk_ids = ChunkIds.of([f"c{i}" for i in range(rows)])
    m.doc_ids = [f"d{i}" for i in range(1000)]
    m.document[:rows] = rng.integers(0, 1000, rows)
    m.content_type[:rows] = m.codes.code("ct:text")
    keys, slots, freq = [], [], []
    for key, count in POSTINGS.items():
        count = min(count, rows // 4)  # a smaller index: the same shares at most
        keys.append(np.full(count, key, dtype=np.int64))
        slots.append(rng.choice(rows, count, replace=False).astype(np.int32))
        freq.append(rng.integers(1, 5, count).astype(np.float32))
    m.postings.add(np.concatenate(keys), np.concatenate(slots), np.concatenate(freq))
    m.postings.fold(m.alive)
    m.seq = 1
    return m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=15, help="queries per line (the first after a write)")
    args = ap.parse_args(argv)
    m = projection(args.rows)
    scope = SearchScope(organization_id="o", project_ids=("p0",), now=datetime(2026, 11, 1, tzinfo=UTC))
    for name, phrases in QUERIES.items():
        times = []
        for i in range(args.repeat):
            if i == 0:
                m.seq += 1  # as a write would: the statistics are counted again
            start = time.perf_counter()
            mask = search_legs.scope_mask(m, scope, None)
            search_legs.text_leg(m, mask, phrases, 20, scope)
            times.append((time.perf_counter() - start) * 1000)
        rest = sorted(times[1:])
        print(f"{name:32s} first {times[0]:6.1f} ms   then median {rest[len(rest) // 2]:6.1f} ms, "
              f"p90 {rest[int(len(rest) * 0.9)]:6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
