"""The saved vector index checked against itself and against SQLite before it is used (its files'
checksums are memlane.adapters.local.snapshot_checks'): the graphs hold as many rows per
(organization, project) as the projection's live rows there; with nothing written since it was
saved, as many rows as SQLite; and rows picked across the projection name, in SQLite, the chunk,
organization, project and document the projection says, and are in their partition's graph.
Also what `memlane doctor` reports about it, and the record of the last rebuild a damaged one caused."""

from __future__ import annotations

import json
import sqlite3
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from memlane.adapters.local.search_projection import Projection
from memlane.adapters.local.snapshot_checks import SnapshotDamaged
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.adapters.local.vector_ann import Partitions

REBUILT_KEY = "search_snapshot_rebuilt"  # meta: {"at": ..., "reason": ...} of the last damaged one
SAMPLES = 64  # rows compared with SQLite, spread evenly over the projection (64 primary-key reads)


def check_saved(conn: sqlite3.Connection, ann: Partitions, saved: Projection | None, current: int,
                total: int) -> None:
    """SnapshotDamaged when the saved graphs and projection (both at `ann.seq`) disagree with each
    other or with SQLite (`current`: its index_seq, `total`: its rows)."""
    live = len(ann) if saved is None else saved.rows
    if ann.seq == current and live != total:
        raise SnapshotDamaged(f"it holds {live} rows and SQLite {total}, with nothing written since it was saved")
    if saved is None:
        return
    _check_partitions(ann, saved)
    _check_samples(conn, ann, saved)


def _check_partitions(ann: Partitions, saved: Projection) -> None:
    live = np.flatnonzero(saved.alive[: saved.size])
    pairs = saved.org[live].astype(np.int64) << 32 | saved.project[live].astype(np.int64)
    counts: dict[tuple[str, str], int] = {}
    for pair, count in zip(*np.unique(pairs, return_counts=True), strict=True):
        counts[saved.partition(int(live[np.argmax(pairs == pair)]))] = int(count)
    graphs = {part: ann.size(*part) for part in ann.parts if ann.size(*part)}
    if graphs != counts:
        differ = sorted(set(graphs.items()) ^ set(counts.items()))[:1]
        raise SnapshotDamaged(f"the graphs and the projection count different rows per project ({differ})")


def _check_samples(conn: sqlite3.Connection, ann: Partitions, saved: Projection) -> None:
    live = np.flatnonzero(saved.alive[: saved.size])
    if not live.size:
        return
    slots = np.unique(live[np.linspace(0, live.size - 1, num=min(SAMPLES, live.size)).astype(np.int64)])
    rowids = [int(r) for r in saved.rowid[slots]]
    rows = conn.execute(
        "SELECT rowid, chunk_id, organization_id, project_id, document_id, seq FROM search_rows"
        f" WHERE rowid IN ({','.join('?' * len(rowids))})", rowids).fetchall()
    for row in rows:
        if row["seq"] > saved.seq:
            continue  # rewritten since it was saved: replayed from SQLite at this load
        slot = saved.position.get(row["rowid"])
        assert slot is not None  # picked from the live slots
        part = saved.partition(slot)
        said = (saved.chunk_ids[slot], *part, saved.doc_codes.values[saved.document[slot]])
        if said != (row["chunk_id"], row["organization_id"], row["project_id"], row["document_id"]):
            raise SnapshotDamaged(f"row {row['rowid']} names another chunk, organization, project or document "
                                  "than in SQLite")
        idx = ann.parts.get(part)
        if idx is None or not bool(np.asarray(idx.contains(np.asarray([row["rowid"]], dtype=np.uint64))).all()):
            raise SnapshotDamaged(f"row {row['rowid']} is missing from its project's graph")


def record_rebuild(db: SqliteDatabase, problem: str) -> None:
    body = json.dumps({"at": datetime.now(UTC).isoformat(timespec="seconds"), "reason": problem})
    with suppress(sqlite3.OperationalError):  # a read-only data directory: the log line stays
        db.set_meta(REBUILT_KEY, body)


@dataclass(frozen=True)
class SnapshotStatus:
    line: str  # `memlane doctor`'s search_snapshot line
    damaged: str | None  # what is wrong with the saved index now (None: nothing)


def status(db: SqliteDatabase, problem: str | None, *, present: bool) -> SnapshotStatus:
    if problem is not None:
        return SnapshotStatus(f"damaged: {problem}; the next start discards it and rebuilds it from SQLite "
                              "(or `memlane doctor --repair` now)", problem)
    rebuilt = db.get_meta(REBUILT_KEY)
    if rebuilt:
        last = json.loads(rebuilt)
        return SnapshotStatus(f"rebuilt from SQLite at {last['at']}: the saved one was damaged ({last['reason']})",
                              None)
    return SnapshotStatus("ok" if present else "none", None)
