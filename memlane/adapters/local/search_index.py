"""SearchIndex for the embedded default: exact k-NN over an in-memory matrix of the stored vectors,
and BM25 over an in-memory inverted index (memlane.adapters.local.bm25) of the same rows.

SQLite holds the durable copy: each row's vector and its index terms in `search_rows`, the text in
the FTS5 table `search_fts` (whose tokenizer makes the terms). Each process holds the fast copy in
NumPy (memlane.adapters.local.search_projection). Every index write bumps `meta.index_seq` and
stamps the row (or a tombstone) with it, so any process — the server, or a CLI writing to the same
data directory — catches up by reading only the rows changed since the sequence number it last
saw, never the whole table. The legs themselves are in memlane.adapters.local.search_legs, the
query's words in memlane.adapters.local.search_query.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from memlane.adapters.local import bm25, saved_check, search_snapshot, vector_ann
from memlane.adapters.local.search_legs import (
    NO_LEG,
    ann_vector_leg,
    complete_legs,
    scope_mask,
    text_leg,
    vector_leg,
)
from memlane.adapters.local.search_projection import Projection
from memlane.adapters.local.search_query import MAX_QUERY_WORDS, STOPWORDS, fts_query, query_words
from memlane.adapters.local.snapshot_checks import SnapshotDamaged
from memlane.adapters.local.sqlite_db import SqliteDatabase, epoch
from memlane.domain.errors import EmbedderMismatchError, IdTakenError
from memlane.ports import IndexedChunk, IndexHoldings, LegResults, SearchScope

__all__ = ["MAX_QUERY_WORDS", "STOPWORDS", "SqliteSearchIndex", "fts_query", "query_words"]

log = logging.getLogger(__name__)

# The layout of search_rows.terms (bm25.TERMS_DTYPE): "2" has the context column.
TERMS_FORMAT_KEY, TERMS_FORMAT = "bm25_terms_format", "2"
SYNC_BATCH = 2_000  # rows read per fetch while catching up (bounds memory at start)
COMPACT_AT = 1_024  # dead slots (and at least a quarter of all) before the arrays are compacted
# Live rows from which the vector leg uses the HNSW partitions (memlane.adapters.local.vector_ann)
# instead of the exact product over the float32 matrix. Measured (`python -m bench.scale crossover`,
# one thread, loaded machine): at 10k rows the product takes 0.5 ms and the graph 0.6, at 25k 1.3
# against 0.5, at 50k and 100k 13-19 ms (the matrix no longer fits the cache) against 0.6-0.7. A
# process loading or growing past it builds (or loads) the graphs once.
ANN_AT = 25_000
# The graphs' vector storage: int8, a quarter of float32 (a million vectors in 384 MB). Against
# float16 (BENCHMARKS.md, "Scale"): recall@10 on the suite's MiniLM vectors 0.987 against 0.989, on
# a million clustered vectors 0.986 against 0.994; the workload suite through the graphs identical;
# resident memory at a million chunks 1.97 GB against 2.33. Candidates are re-scored from the
# float32 vectors in SQLite either way.
ANN_DTYPE = "i8"
BUILD_BATCH = 65_536  # rows given to the graphs at a time by a background build
ANN_DIR = "search-ann"  # beside the SQLite file
INDEX_ID_KEY = "search_index_id"  # names this projection's contents; a new id when it is cleared
# Keys added or removed since the graphs were saved before they (and the projection) are saved
# again: a start replays at most that many rows from SQLite into the graphs (a few seconds), and a
# process that writes a million chunks saves ~100 times (each a few seconds at that size).
SAVE_AFTER = 10_000


class IndexClosing(Exception):
    """Raised inside a load or a background build when the index is being closed: the thread
    stops at its next batch instead of reading from a database about to be closed under it."""


def _minutes(rows: int) -> str:
    """Roughly how long a first build of `rows` takes on two idle cores: 162 s for a million rows'
    graphs and ~40 s to read them (BENCHMARKS.md, "Scale"; 276 s for both at load 1.6-2.9)."""
    seconds = (162 + 40) * rows / 1_000_000
    return f"{max(1, round(seconds / 60))} min" if seconds >= 90 else f"{max(1, round(seconds))} s"


class SqliteSearchIndex:
    backend = "embedded"

    def __init__(
        self,
        db: SqliteDatabase,
        dimension: int,
        context_weight: float = bm25.CONTEXT_WEIGHT,
        *,
        ann_at: int | None = None,
        ann_dtype: str | None = None,
    ) -> None:
        self.db = db
        self.dimension = dimension
        self.context_weight = context_weight
        # None: ANN_AT, read now (a benchmark may set it to route every size through the graphs)
        self.ann_at = (ANN_AT if ann_at is None else ann_at) if vector_ann.available() else None
        self.ann_dtype = ann_dtype or ANN_DTYPE
        self.ann_dir: Path | None = None if str(db.path) == ":memory:" else db.path.parent / ANN_DIR
        self._matrix = Projection(dimension, context_weight)
        self._lock = threading.Lock()
        # `memlane serve`: graphs never built yet are built by a thread while searches stay exact
        self._background_build = False
        self._build: threading.Thread | None = None
        # the background load of `warm_in_background`, and the signal that stops it and a build
        self._warming: threading.Thread | None = None
        self._closing = threading.Event()
        # Where a long one-time build is announced beside the log (a CLI command: stderr)
        self.notice: Callable[[str], None] | None = None
        self._tokenizer = bm25.Fts5Tokenizer()
        self._upgrade_terms()
        with self.db.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (INDEX_ID_KEY, uuid.uuid4().hex))

    def _upgrade_terms(self) -> None:
        """Rows stored before the context column get it (empty), once per data directory: a
        conversion of the stored records, no tokenising. Their seq stays (nothing changed)."""
        if self.db.get_meta(TERMS_FORMAT_KEY) == TERMS_FORMAT:
            return
        with self.db.transaction() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (TERMS_FORMAT_KEY,)).fetchone()
            if row is not None and row["value"] == TERMS_FORMAT:
                return  # another process did it meanwhile
            old = conn.execute("SELECT rowid, terms FROM search_rows WHERE terms IS NOT NULL").fetchall()
            if old:
                log.info("adding the context column to the BM25 terms of %d indexed chunks (once)", len(old))
                conn.executemany(
                    "UPDATE search_rows SET terms = ? WHERE rowid = ?",
                    [(bm25.upgrade_terms_v1(r["terms"]), r["rowid"]) for r in old],
                )
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (TERMS_FORMAT_KEY, TERMS_FORMAT)
            )

    # ------------------------------------------------------------------ writes

    def _check_embedder(self, conn, embedder_id: str) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        if row is None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('embedder', ?)", (embedder_id,))
        elif row["value"] != embedder_id:
            raise EmbedderMismatchError(
                f"this data directory's index was built with embedder {row['value']!r}, not {embedder_id!r}. "
                "Vectors from different models cannot be compared. Run `memlane reindex` to re-embed every "
                "document with the current embedder, or use another --data-dir."
            )

    def embedder_id(self) -> str | None:
        return self.db.get_meta("embedder")

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None:
        if not items:
            return
        # tokenised before the write transaction, so the write lock is held no longer than before
        texts = [(i.chunk.title, " ".join(i.chunk.heading_path), i.body()) for i in items]
        terms = self._tokenizer.row_terms([(*t, i.context) for t, i in zip(texts, items, strict=True)])
        with self.db.transaction() as conn:
            self._check_embedder(conn, embedder_id)
            seq = int(conn.execute("SELECT value FROM meta WHERE key = 'index_seq'").fetchone()["value"]) + 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'index_seq'", (str(seq),))
            for item, text, row_terms in zip(items, texts, terms, strict=True):
                c = item.chunk
                vec = np.asarray(item.vector, dtype=np.float32)
                if vec.shape != (self.dimension,):
                    raise EmbedderMismatchError(
                        f"vector of dimension {vec.shape} for an index of dimension {self.dimension}"
                    )
                existing = conn.execute(
                    "SELECT rowid, organization_id FROM search_rows WHERE chunk_id = ?", (c.id,)
                ).fetchone()
                if existing and existing["organization_id"] != c.organization_id:
                    # chunk_id is unique alone: another organization's row is never rewritten
                    raise IdTakenError(f"chunk id {c.id} is not available")
                values = (
                    c.document_id,
                    c.organization_id,
                    c.project_id,
                    c.chunk_index,
                    c.content_type.value,
                    epoch(c.created_at),
                    epoch(c.forget_after),
                    vec.tobytes(),
                    seq,
                    int(c.superseded),
                    row_terms,
                    item.kind,
                )
                if existing:
                    rowid = existing["rowid"]
                    conn.execute(
                        "UPDATE search_rows SET document_id=?, organization_id=?, project_id=?, chunk_index=?,"
                        " content_type=?, created_at=?, forget_after=?, vector=?, seq=?, superseded=?, terms=?,"
                        " kind=? WHERE rowid=?",
                        (*values, rowid),
                    )
                    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
                else:
                    rowid = conn.execute(
                        "INSERT INTO search_rows (chunk_id, document_id, organization_id, project_id, chunk_index,"
                        " content_type, created_at, forget_after, vector, seq, superseded, terms, kind)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (c.id, *values),
                    ).lastrowid
                conn.execute(
                    "INSERT INTO search_fts (rowid, title, headings, body) VALUES (?,?,?,?)", (rowid, *text)
                )

    def delete_document(self, org_id: str, document_id: str) -> None:
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT rowid FROM search_rows WHERE organization_id = ? AND document_id = ?",
                (org_id, document_id),
            ).fetchall()
            if not rows:
                return
            seq = int(conn.execute("SELECT value FROM meta WHERE key = 'index_seq'").fetchone()["value"]) + 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'index_seq'", (str(seq),))
            for i, r in enumerate(rows):
                conn.execute("DELETE FROM search_rows WHERE rowid = ?", (r["rowid"],))
                conn.execute("DELETE FROM search_fts WHERE rowid = ?", (r["rowid"],))
                # one tombstone per row; seq values must be unique, so offset within this write
                conn.execute(
                    "INSERT INTO search_tombstones (seq, row_id) VALUES (?, ?)",
                    (seq * 1_000_000 + i, r["rowid"]),
                )

    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None:
        with self.db.transaction() as conn:
            seq = int(conn.execute("SELECT value FROM meta WHERE key = 'index_seq'").fetchone()["value"]) + 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'index_seq'", (str(seq),))
            conn.execute(
                "UPDATE search_rows SET superseded = ?, seq = ? WHERE organization_id = ? AND document_id = ?",
                (int(superseded), seq, org_id, document_id),
            )

    def clear(self) -> None:
        """Drop the whole projection (used by `memlane reindex`)."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM search_rows")
            conn.execute("DELETE FROM search_fts")
            conn.execute("DELETE FROM search_tombstones")
            conn.execute("DELETE FROM meta WHERE key = 'embedder'")
            conn.execute("UPDATE meta SET value = '0' WHERE key = 'index_seq'")
            # the persisted graphs name the old contents: no process may load them again
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (uuid.uuid4().hex, INDEX_ID_KEY))
        with self._lock:
            self._matrix = Projection(self.dimension, self.context_weight)

    # ------------------------------------------------------------------ reads

    def _sync(self) -> Projection:
        """Bring the in-memory projection up to date with the database (cheap when nothing changed).

        With the HNSW partitions, the rows written after the sequence number they cover go into
        them as well: every write since the last sync, or, on a first load, every write since the
        persisted graphs were saved (a crash between a SQLite commit and the graphs' update, or
        another process's writes, are replayed the same way)."""
        self._check_open()
        conn = self.db.connection()
        current = int(self.db.get_meta("index_seq") or 0)
        with self._lock:
            m = self._matrix
            if current < m.seq:  # the index was cleared by another process
                m = self._matrix = Projection(self.dimension, self.context_weight)
            if current == m.seq:
                return m
            started = time.monotonic()
            m, feed = self._start_load(conn, m, current) if m.size == 0 else (m, None)
            ann_seq = m.ann.seq if m.ann is not None else m.seq
            backfilled = self._replay_rows(conn, m, ann_seq, feed)
            if feed is not None:
                self._say(f"built the vector index in {time.monotonic() - started:.0f} s")
            self._remove_deleted(conn, m, ann_seq)
            if backfilled:
                self._store_terms(backfilled)
                log.info("stored the BM25 terms of %d indexed chunks", len(backfilled))
            self._tidy(m)
            self._grow_graphs(m, current)
            self._synced(m, current)
            return m

    def _start_load(self, conn: sqlite3.Connection, m: Projection, current: int) -> tuple[Projection, list | None]:
        """A whole index to load: the saved graphs (and the projection saved with them) when there
        are some, and the arrays sized once. Returns the projection to fill, and the feed of a
        first graph build in a one-shot command (the rows read go to the graphs BUILD_BATCH at a
        time), or None."""
        total = conn.execute("SELECT COUNT(*) AS n FROM search_rows").fetchone()["n"]
        ann, saved = (self._load_saved(current, total) if self.ann_at is not None and total >= self.ann_at
                      else (None, None))
        feed: list | None = None
        if ann is not None and ann.seq:
            if saved is not None:  # mapped, not rebuilt: only later writes are read below
                m = self._matrix = saved
            else:
                m.drop_vectors()  # before sizing: no float32 matrix at all
            m.ann = ann
        elif ann is not None and not self._background_build:
            self._say(
                f"building the vector index of {total:,} chunks (once, on the first search since this "
                f"data directory's index was built by an older memlane or rebuilt; about {_minutes(total)} "
                "on two idle cores, longer on a busy machine). Later commands load it in seconds."
            )
            # A one-shot command: the stored vectors go to the graphs as they are read, in
            # batches of BUILD_BATCH rows on both cores as a background build adds them (162 s
            # at a million chunks; 599 s when each batch of SYNC_BATCH rows was added as it was
            # read), and without the float32 matrix (1.5 GB at a million chunks).
            m.drop_vectors()
            m.ann = ann
            feed = []
        # else no graphs saved and a server (`memlane serve`, `memlane mcp`): the float32
        # matrix now, exact searches over it until the graphs built from it in the
        # background are ready (_grow_graphs)
        m.reserve(max(0, total - m.rows))  # a mapped projection has most of them
        return m, feed

    def _replay_rows(self, conn: sqlite3.Connection, m: Projection, ann_seq: int,
                     feed: list | None) -> dict[int, bytes]:
        """Every row written since the projection's sequence number, SYNC_BATCH at a time, into the
        projection and the graphs; the closing signal is checked once per batch. Returns the BM25
        terms made for rows stored without them (an older memlane's), to be stored."""
        # a row's vector is read only when something holds it: the float32 matrix, or the
        # graphs for rows written after they were saved
        vector = "vector" if m.ann is None else "CASE WHEN seq > :ann THEN vector END AS vector"
        cursor = conn.execute(
            "SELECT rowid, chunk_id, document_id, organization_id, project_id, chunk_index, content_type,"
            f" created_at, forget_after, seq, superseded, terms, kind, {vector} FROM search_rows WHERE seq > :seq",
            {"ann": ann_seq, "seq": m.seq},
        )
        backfilled: dict[int, bytes] = {}
        while batch := cursor.fetchmany(SYNC_BATCH):
            if self._closing.is_set():  # a load cut short is not kept (nor saved by close)
                self._matrix = Projection(self.dimension, self.context_weight)
                raise IndexClosing("the search index is closing")
            moved = self._apply_batch(conn, m, batch, backfilled)
            if feed is not None:
                self._feed_graphs(m, feed, batch)
            elif m.ann is not None:
                self._ann_apply(m, batch, moved)
        if feed:  # a first build's last rows
            self._ann_apply(m, feed, [])
        return backfilled

    def _apply_batch(self, conn: sqlite3.Connection, m: Projection, batch: list,
                     backfilled: dict[int, bytes]) -> list[tuple[tuple[str, str], int]]:
        """One batch of rows into the projection (terms made for rows stored without them).
        Returns the rows that moved to another partition of the graphs, seen before they moved."""
        missing = [r["rowid"] for r in batch if r["terms"] is None]
        if missing:
            if not backfilled:
                log.info("tokenising indexed chunks for BM25 (once, for rows from an older memlane)")
            backfilled.update(self._tokenize_stored(conn, missing))
        moved = self._ann_moves(m, batch) if m.ann is not None else []
        m.apply(batch, [r["terms"] if r["terms"] is not None else backfilled[r["rowid"]] for r in batch])
        m.postings.settle(m.alive)  # a whole load holds its postings sorted as it goes
        return moved

    @classmethod
    def _feed_graphs(cls, m: Projection, feed: list, batch: list) -> None:
        """A first build's rows go to the graphs BUILD_BATCH at a time, as a background build adds them."""
        feed.extend(batch)
        if len(feed) >= BUILD_BATCH:
            cls._ann_apply(m, feed, [])
            feed.clear()

    @staticmethod
    def _remove_deleted(conn: sqlite3.Connection, m: Projection, ann_seq: int) -> None:
        """The rows deleted since the projection (or the graphs) last saw the index, out of both."""
        gone = []
        for row in conn.execute(
            "SELECT row_id FROM search_tombstones WHERE seq >= ?", ((min(m.seq, ann_seq) + 1) * 1_000_000,)
        ):
            # a row deleted and later re-added under the same rowid is live again
            if conn.execute("SELECT 1 FROM search_rows WHERE rowid = ?", (row["row_id"],)).fetchone() is not None:
                continue
            pos = m.position.get(row["row_id"])
            if m.ann is not None:
                if pos is None:
                    gone.append(row["row_id"])
                else:
                    m.ann.remove(*m.partition(pos), np.asarray([row["row_id"]]))
            m.remove(row["row_id"])
        if gone and m.ann is not None:
            m.ann.remove_anywhere(np.asarray(gone))

    def _tidy(self, m: Projection) -> None:
        """Compact the arrays when enough slots are dead (never under a graph build), else keep the
        postings in order: a whole load folds them into one layout from now on."""
        if m.dead > max(COMPACT_AT, m.size // 4) and not self._building():
            m.compact()
        elif m.postings.pending and not m.postings.rows.size:
            m.postings.fold(m.alive)
        else:
            m.postings.settle(m.alive)

    def _grow_graphs(self, m: Projection, current: int) -> None:
        """Past `ann_at` live rows, the graphs are built: by a thread in a server (searches stay
        exact meanwhile), at once in a one-shot command."""
        if m.ann is not None or self.ann_at is None or m.rows < self.ann_at:
            return
        if self._background_build:
            self._start_build(m, current)
        else:
            self._build_ann_from_matrix(m)

    def _synced(self, m: Projection, current: int) -> None:
        """The projection and the graphs now cover `current`; graphs changed enough are saved."""
        m.seq = current
        if m.ann is not None:
            m.ann.seq = current
            if m.ann.changed >= SAVE_AFTER:
                self._save_ann(m)

    # ------------------------------------------------------------------ the HNSW partitions

    def _say(self, message: str) -> None:
        log.info(message)
        if self.notice is not None:
            self.notice(message)

    def _index_id(self) -> str:
        return self.db.get_meta(INDEX_ID_KEY) or ""

    def _load_saved(self, current: int, total: int) -> tuple[vector_ann.Partitions, Projection | None]:
        """The saved graphs and projection, checked (memlane.adapters.local.snapshot_checks, and
        against each other and SQLite: `_check_saved`); empty graphs and no projection when there
        are none, or when they are damaged, which are then discarded and rebuilt from SQLite."""
        try:
            return self._saved(current, total)
        except SnapshotDamaged as exc:
            self._discard_saved(str(exc))
            return vector_ann.Partitions(self.dimension, self.ann_dtype), None

    def _saved(self, current: int, total: int) -> tuple[vector_ann.Partitions, Projection | None]:
        ann = self._open_ann(current)
        saved = self._open_snapshot(ann.seq) if ann.seq else None
        if ann.seq:
            saved_check.check_saved(self.db.connection(), ann, saved, current, total)
        return ann, saved

    def _discard_saved(self, problem: str) -> None:
        log.warning("the saved vector index in %s is damaged (%s): discarded, and rebuilt from SQLite",
                    self.ann_dir, problem)
        saved_check.record_rebuild(self.db, problem)
        if self.ann_dir is not None:
            try:
                search_snapshot.discard(self.ann_dir)
            except OSError as exc:  # read-only: this process rebuilds; so will the next
                log.warning("could not remove the damaged vector index: %s", exc)

    def snapshot_status(self) -> saved_check.SnapshotStatus:
        """What `memlane doctor` says about the saved vector index: read and checked as a start
        would (without using it), and the last rebuild a damaged one caused."""
        if self.ann_dir is None or not self.ann_dir.is_dir():
            return saved_check.status(self.db, None, present=False)
        conn = self.db.connection()
        current = int(self.db.get_meta("index_seq") or 0)
        total = conn.execute("SELECT COUNT(*) AS n FROM search_rows").fetchone()["n"]
        present = any((self.ann_dir / name).exists() for name in (vector_ann.MANIFEST, search_snapshot.MANIFEST))
        try:
            ann = vector_ann.Partitions.load(self.ann_dir, self._index_id(), self.dimension, self.ann_dtype)
            if ann is not None and ann.seq and ann.seq <= current:
                saved = self._open_snapshot(ann.seq)
                saved_check.check_saved(conn, ann, saved, current, total)
        except SnapshotDamaged as exc:
            return saved_check.status(self.db, str(exc), present=True)
        return saved_check.status(self.db, None, present=present)

    def discard_snapshot(self) -> None:
        """`memlane doctor --repair` on a damaged saved index: the next start rebuilds it."""
        if self.ann_dir is not None and self.ann_dir.is_dir():
            search_snapshot.discard(self.ann_dir)

    def _open_ann(self, current: int) -> vector_ann.Partitions:
        """The persisted partitions if they describe this index at or before `current`, else empty
        ones (seq 0: every stored vector is added on this load)."""
        if self.ann_dir is not None:
            loaded = vector_ann.Partitions.load(self.ann_dir, self._index_id(), self.dimension, self.ann_dtype)
            if loaded is not None and loaded.seq <= current:
                log.info("loaded the vector index (%d rows, up to write %d of %d)", len(loaded), loaded.seq, current)
                return loaded
        log.info("building the vector index from the stored vectors (once)")
        return vector_ann.Partitions(self.dimension, self.ann_dtype)

    @staticmethod
    def _ann_moves(m: Projection, batch: list) -> list[tuple[tuple[str, str], int]]:
        """Rows of the batch already in the projection under another (organization, project):
        their keys leave the old partition."""
        moves = []
        for r in batch:
            pos = m.position.get(r["rowid"])
            if pos is not None:
                old = m.partition(pos)
                if old != (r["organization_id"], r["project_id"]):
                    moves.append((old, r["rowid"]))
        return moves

    @staticmethod
    def _ann_apply(m: Projection, batch: list, moved: list[tuple[tuple[str, str], int]]) -> None:
        assert m.ann is not None
        for (org_id, project_id), rowid in moved:
            m.ann.remove(org_id, project_id, np.asarray([rowid]))
        groups: dict[tuple[str, str], list] = {}
        for r in batch:
            if r["vector"] is not None:  # rows the graphs already hold were read without it
                groups.setdefault((r["organization_id"], r["project_id"]), []).append(r)
        for (org_id, project_id), rows in groups.items():
            vectors = np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32)
            m.ann.upsert(
                org_id,
                project_id,
                np.asarray([r["rowid"] for r in rows], dtype=np.int64),
                vectors.reshape(len(rows), m.dimension),
            )

    @staticmethod
    def _live_partitions(m: Projection) -> list[tuple[tuple[str, str], np.ndarray]]:
        """Each (organization, project) of the projection's live rows, with their slots."""
        live = np.flatnonzero(m.alive[: m.size])
        pairs = m.org[live].astype(np.int64) << 32 | m.project[live].astype(np.int64)
        return [(m.partition(int(slots[0])), slots) for slots in (live[pairs == pair] for pair in np.unique(pairs))]

    def _add_rows(self, ann: vector_ann.Partitions, part: tuple[str, str], keys: np.ndarray, vectors: np.ndarray,
                  slots: np.ndarray) -> None:
        """Rows of one partition into its graph from the matrix, BUILD_BATCH at a time on both cores
        (a copy of 100 MB of the matrix at a time, not 1.5 GB)."""
        for i in range(0, len(slots), BUILD_BATCH):
            self._check_open()
            ann.upsert(*part, keys[i : i + BUILD_BATCH], vectors[slots[i : i + BUILD_BATCH]])

    def _build_ann_from_matrix(self, m: Projection) -> None:
        """The index grew past ann_at in this process: its graphs come from the matrix it holds."""
        log.info("building the vector index from %d rows in memory (once)", m.rows)
        ann = vector_ann.Partitions(self.dimension, self.ann_dtype)
        for part, slots in self._live_partitions(m):
            self._add_rows(ann, part, m.rowid[slots], m.vectors, slots)
        m.ann = ann
        m.drop_vectors()

    def _start_build(self, m: Projection, seq: int) -> None:
        """Build the graphs from the matrix in a thread (under the lock; once per process unless a
        build succeeded and the index was later cleared). Searches stay exact meanwhile; the rows
        written meanwhile are replayed into the graphs before they replace the exact search."""
        if self._build is not None:
            return
        parts = [(part, m.rowid[slots].copy(), slots) for part, slots in self._live_partitions(m)]
        # the matrix as it is now: not compacted while the build runs (see _sync), and a row
        # rewritten in place meanwhile has a later seq, so it is replayed from SQLite
        self._build = threading.Thread(
            target=self._build_in_background, args=(m, m.vectors, parts, seq), name="memlane-graphs", daemon=True
        )
        log.info("building the vector index from %d rows in the background; searching exactly until then", m.rows)
        self._build.start()

    def _build_in_background(self, m: Projection, vectors: np.ndarray, parts: list, seq: int) -> None:
        try:
            ann = vector_ann.Partitions(self.dimension, self.ann_dtype)
            for part, keys, slots in parts:
                self._add_rows(ann, part, keys, vectors, slots)
            with self._lock:
                self._check_open()  # closed while the last batch was added: the next start builds
                if self._matrix is not m or m.ann is not None:  # cleared meanwhile: nothing to replace
                    self._build = None
                    return
                self._replay_into(m, ann, seq)
                m.drop_vectors()
                self._save_ann(m)
                self._build = None
            log.info("the vector index is built (%d rows); searches now go through it", len(ann))
        except IndexClosing:
            log.info("closing: the background build of the vector index stopped; the next start builds it")
        except Exception:  # the searches stay exact, as they are correct; the next start tries again
            log.exception("building the vector index in the background failed; searching exactly")

    def _replay_into(self, m: Projection, ann: vector_ann.Partitions, seq: int) -> None:
        """Under the lock: the rows written and deleted since `seq` (the matrix the graphs were
        built from) into the graphs, which then hold every row up to m.seq, and replace the exact
        search."""
        conn = self.db.connection()
        rows = conn.execute(
            "SELECT rowid, organization_id, project_id, vector FROM search_rows WHERE seq > ?", (seq,)
        ).fetchall()
        m.ann = ann
        if rows:
            ann.remove_anywhere(np.asarray([r["rowid"] for r in rows], dtype=np.int64))  # a row may have moved
            self._ann_apply(m, rows, [])
        gone = [
            r["row_id"]
            for r in conn.execute("SELECT row_id FROM search_tombstones WHERE seq >= ?", ((seq + 1) * 1_000_000,))
            if conn.execute("SELECT 1 FROM search_rows WHERE rowid = ?", (r["row_id"],)).fetchone() is None
        ]
        if gone:
            ann.remove_anywhere(np.asarray(gone, dtype=np.int64))
        ann.seq = m.seq

    def _building(self) -> bool:
        return self._build is not None and self._build.is_alive()

    def wait_for_graphs(self, timeout: float | None = None) -> bool:
        """Wait for a background build (tests, benchmarks); True when none is running."""
        build = self._build
        if build is not None:
            build.join(timeout)
        return not self._building()

    def _open_snapshot(self, seq: int) -> Projection | None:
        if self.ann_dir is None:
            return None
        saved = search_snapshot.load(self.ann_dir, self._index_id(), self.dimension, self.context_weight, seq)
        if saved is not None:
            log.info("mapped the saved search projection (%d rows, up to write %d)", saved.rows, seq)
        return saved

    def _save_ann(self, m: Projection) -> None:
        """The graphs, then the projection at the same sequence number (a start maps both)."""
        if self.ann_dir is None or m.ann is None:
            return
        try:
            index_id = self._index_id()
            m.ann.save(self.ann_dir, index_id)
            search_snapshot.save(self.ann_dir, m, index_id)
        except OSError as exc:  # a read-only data directory: the next start replays more rows
            log.warning("could not save the vector index: %s", exc)

    def _stored_vectors(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The float32 vectors SQLite still stores for these rowids (deleted rows are absent)."""
        conn = self.db.connection()
        found_ids: list[int] = []
        blobs: list[bytes] = []
        ids = [int(r) for r in rowids]
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            for row in conn.execute(
                f"SELECT rowid, vector FROM search_rows WHERE rowid IN ({','.join('?' * len(part))})", part
            ):
                found_ids.append(row["rowid"])
                blobs.append(row["vector"])
        vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), self.dimension)
        return np.asarray(found_ids, dtype=np.int64), vectors

    def _tokenize_stored(self, conn, rowids: list[int]) -> dict[int, bytes]:
        """Index terms for rows written before search_rows had them (or by an older memlane),
        tokenised from the FTS5 copy of their text."""
        texts = []
        for rowid in rowids:
            row = conn.execute(
                "SELECT title, headings, body FROM search_fts WHERE rowid = ?", (rowid,)
            ).fetchone()
            texts.append((row["title"], row["headings"], row["body"]) if row else ("", "", ""))
        return dict(zip(rowids, self._tokenizer.row_terms(texts), strict=True))

    def _store_terms(self, terms: dict[int, bytes]) -> None:
        """Store backfilled terms so the next start does not tokenise again. They are derived from
        the row's text, so the row's seq stays: nothing changed for other processes."""
        try:
            with self.db.transaction() as tx:
                tx.executemany(
                    "UPDATE search_rows SET terms = ? WHERE rowid = ? AND terms IS NULL",
                    [(t, rowid) for rowid, t in terms.items()],
                )
        except sqlite3.OperationalError as exc:  # read-only or busy: the terms stay in memory only
            log.warning("could not store the index terms of %d rows: %s", len(terms), exc)

    def warm(self, background_build: bool = False) -> int:
        """Load the vectors and postings now (server start) rather than on the first recall. With
        `background_build` (`memlane serve`), graphs never built for this data directory (the
        first start after the upgrade: ~10 min at 1M chunks) are built by a thread while searches
        use the exact product over the float32 matrix, which this start then loads instead."""
        self._background_build = background_build
        # a whole load ends folded; writes replayed onto a mapped snapshot stay in the postings' tail
        # and runs (merging them into the mapped arrays would copy those out)
        return self._sync().rows

    def warm_in_background(self) -> threading.Thread:
        """`warm(background_build=True)` in a thread (`memlane mcp`, whose client expects the
        protocol's handshake at once): a search meanwhile waits for the load, not for a build."""
        self._background_build = True  # before the thread: a search arriving first must not build

        def run() -> None:
            try:
                self.warm(background_build=True)
            except IndexClosing:
                log.info("closing: the search index stopped loading")
            except Exception:  # the first search loads it instead
                log.exception("loading the search index in the background failed")

        thread = self._warming = threading.Thread(target=run, name="memlane-warm", daemon=True)
        thread.start()
        return thread

    def _check_open(self) -> None:
        if self._closing.is_set():
            raise IndexClosing("the search index is closing")

    def close(self) -> None:
        """Stop the background load and build at their next batch and wait for them, then save
        what this process holds: after this, no thread of the index uses the database, which its
        owner may close. (Closing a SQLite connection while another thread runs a statement on it
        crashes the process, not only that thread.) A load cut short was discarded, so the graphs
        stay as they were saved and the next start replays the rows after them."""
        self._closing.set()
        for thread in (self._warming, self._build):
            if thread is not None and thread is not threading.current_thread():
                thread.join()
        self.save()

    def save(self) -> None:
        """Save the graphs and the projection as this process holds them, if they changed since
        they were saved (a process about to exit), instead of at the next SAVE_AFTER keys. A
        process that never searched has nothing loaded and saves nothing."""
        with self._lock:
            m = self._matrix
            if m.ann is not None and m.ann.changed:
                self._save_ann(m)

    def _tagged_documents(self, scope: SearchScope) -> set[str] | None:
        """The tag and keyphrase filter, resolved against the documents' labels in the same database."""
        tags = scope.filters.labels()
        if not tags:
            return None
        rows = (
            self.db.connection()
            .execute(
                f"SELECT DISTINCT document_id FROM document_tags WHERE organization_id = ? AND tag IN "
                f"({','.join('?' * len(tags))})",
                (scope.organization_id, *tags),
            )
            .fetchall()
        )
        return {r["document_id"] for r in rows}

    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int,
        *, complete: bool = True,
    ) -> LegResults:
        allowed_docs = self._tagged_documents(scope)
        if not scope.project_ids or (allowed_docs is not None and not allowed_docs):
            return LegResults(vector=[], text=[])
        words = query_words(query_text)
        phrases = [t for terms in self._tokenizer.word_terms(words) for t in terms] if words else []
        q = np.asarray(query_vector, dtype=np.float32) if query_vector is not None else None
        m = self._sync()
        with self._lock:
            mask = scope_mask(m, scope, allowed_docs)  # one scope, applied identically in both legs
            if q is None:
                vector = NO_LEG
            elif m.ann is not None:
                vector = ann_vector_leg(m, mask, q, k, scope, self._stored_vectors)
            else:
                vector = vector_leg(m, mask, q, k)
            # Each leg also scores the other's candidates (memlane.ports.SearchIndex.search): the text
            # leg the vector leg's top k, then the vector leg what the text leg returned.
            text = text_leg(m, mask, phrases, k, scope, also=vector.slots if complete else None)
            if complete:
                vector = complete_legs(m, vector, text, q, self._stored_vectors if m.ann is not None else None)
        return LegResults(vector=vector.candidates, text=text.candidates)

    def document_ids(self, org_id: str | None = None) -> set[str]:
        conn = self.db.connection()
        if org_id is None:
            rows = conn.execute("SELECT DISTINCT document_id FROM search_rows").fetchall()
        else:
            rows = conn.execute(
                "SELECT DISTINCT document_id FROM search_rows WHERE organization_id = ?", (org_id,)
            ).fetchall()
        return {r["document_id"] for r in rows}

    def holdings(self, document_id: str, org_id: str | None = None) -> IndexHoldings:
        """Stored rows (vectors, BM25 terms, FTS5 text) and the live rows of this process's
        in-memory projection, which is what both legs actually search."""
        conn = self.db.connection()
        rows = [r["rowid"] for r in conn.execute(
            "SELECT rowid FROM search_rows WHERE document_id = ?", (document_id,))]
        fts = 0
        if rows:
            marks = ",".join("?" * len(rows))
            fts = conn.execute(f"SELECT COUNT(*) AS n FROM search_fts WHERE rowid IN ({marks})", rows).fetchone()["n"]
        m = self._sync()
        code = m.doc_codes.get(document_id)
        live = 0
        if code >= 0:
            live = int(np.count_nonzero(m.alive[: m.size] & (m.document[: m.size] == code)))
        return IndexHoldings(text=fts + live, vector=len(rows) + live)

    def chunk_count(self) -> int:
        return self.db.connection().execute("SELECT COUNT(*) AS n FROM search_rows").fetchone()["n"]
