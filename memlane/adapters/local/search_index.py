"""SearchIndex for the embedded default: exact k-NN over an in-memory matrix of the stored vectors,
and BM25 over an in-memory inverted index (memlane.adapters.local.bm25) of the same rows.

SQLite holds the durable copy: each row's vector and its index terms in `search_rows`, the text in
the FTS5 table `search_fts` (whose tokenizer makes the terms). Each process holds the fast copy in
NumPy. Every index write bumps `meta.index_seq` and stamps the row (or a tombstone) with it, so any
process — the server, or a CLI writing to the same data directory — catches up by reading only the
rows changed since the sequence number it last saw, never the whole table.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

try:
    from threadpoolctl import ThreadpoolController
except ImportError:  # an optimisation only (it comes with the local extra)
    ThreadpoolController = None

from memlane.adapters.local import bm25
from memlane.adapters.local.sqlite_db import SqliteDatabase, epoch
from memlane.domain.errors import EmbedderMismatchError
from memlane.ports import Candidate, IndexedChunk, IndexHoldings, LegResults, SearchScope

log = logging.getLogger(__name__)

# Words that carry no topic; dropping them keeps OR-queries from matching half the corpus.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 32
# The layout of search_rows.terms (bm25.TERMS_DTYPE): "2" has the context column.
TERMS_FORMAT_KEY, TERMS_FORMAT = "bm25_terms_format", "2"
SYNC_BATCH = 2_000  # rows read per fetch while catching up (bounds memory at start)
COMPACT_AT = 1_024  # dead slots (and at least a quarter of all) before the arrays are compacted


_BLAS: list = []  # the process's BLAS thread-pool controller, found on first use


def _one_blas_thread():
    """The matrix-vector product of the vector leg on one BLAS thread. It is memory-bound, so a
    second thread gains little on an idle machine (11.4 vs 12.1 ms at 100k rows), but when the other
    core is busy the product waits for that thread's time slice: 8 ms instead of 0.7 ms at 10k
    rows, 16 instead of 12 ms at 100k, measured with a niced job on the second core."""
    if ThreadpoolController is None:
        return contextlib.nullcontext()
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def query_words(text: str) -> list[str]:
    """The words a text query searches for: lower-cased, stopwords dropped (unless nothing else is
    left), each once, at most 32. Any of them may match (OR)."""
    words = [w.lower() for w in _WORD.findall(text)]
    terms = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(terms))[:MAX_QUERY_WORDS]


def fts_query(text: str) -> str | None:
    """The same query as an FTS5 OR-query of quoted terms (quoting makes every word literal, so
    user input can never inject FTS5 syntax): what the BM25 leg computes, as FTS5 would run it."""
    words = query_words(text)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)


class _Codes:
    """Interns strings (organization, project, document ids) to small ints for NumPy masks."""

    def __init__(self) -> None:
        self.by_value: dict[str, int] = {}

    def code(self, value: str) -> int:
        c = self.by_value.get(value)
        if c is None:
            c = len(self.by_value)
            self.by_value[value] = c
        return c

    def get(self, value: str) -> int:
        return self.by_value.get(value, -1)


class _Projection:
    """Rows of the search projection held in NumPy arrays by slot, addressed by SQLite rowid: the
    vectors and scope columns for the vector leg, the postings and row lengths for BM25."""

    def __init__(self, dimension: int, context_weight: float = bm25.CONTEXT_WEIGHT) -> None:
        self.dimension = dimension
        self.weights = (*bm25.COLUMN_WEIGHTS, context_weight)  # by bm25.COLUMNS
        self.size = 0
        cap = 1024
        self.vectors = np.zeros((cap, dimension), dtype=np.float32)
        self.alive = np.zeros(cap, dtype=bool)
        self.org = np.full(cap, -1, dtype=np.int32)
        self.project = np.full(cap, -1, dtype=np.int32)
        self.document = np.full(cap, -1, dtype=np.int32)
        self.content_type = np.full(cap, -1, dtype=np.int32)
        self.created = np.zeros(cap, dtype=np.float64)
        self.forget = np.full(cap, np.inf, dtype=np.float64)
        self.chunk_index = np.zeros(cap, dtype=np.int32)
        self.superseded = np.zeros(cap, dtype=bool)
        self.doclen = np.zeros(cap, dtype=np.float32)  # tokens in the row, all columns (BM25's D)
        self.chunk_ids: list[str] = [""] * cap
        self.position: dict[int, int] = {}  # sqlite rowid -> slot in the arrays
        self.terms_sig: dict[int, int] = {}  # sqlite rowid -> hash of the terms its slot indexes
        self.codes = _Codes()  # organizations, projects, content types
        self.doc_codes = _Codes()
        self.doc_ids: list[str] = []  # document code -> document id
        self.postings = bm25.Postings()
        self.rows = 0  # live rows (BM25's N)
        self.tokens = 0.0  # tokens in live rows (N · avgdl)
        self.seq = 0

    # the arrays indexed by slot, and what an empty slot holds (0 unless named)
    _PER_SLOT = (
        "vectors",
        "alive",
        "org",
        "project",
        "document",
        "content_type",
        "created",
        "forget",
        "chunk_index",
        "superseded",
        "doclen",
    )
    _FILL = {"forget": np.inf, "org": -1, "project": -1, "document": -1, "content_type": -1}

    def reserve(self, extra: int) -> None:
        """Room for `extra` more slots, growing the arrays at most once."""
        need = self.size + extra
        cap = len(self.alive)
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        for name in self._PER_SLOT:
            old = getattr(self, name)
            new = np.full((cap, *old.shape[1:]), self._FILL.get(name, 0), dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)
        self.chunk_ids.extend([""] * (cap - len(self.chunk_ids)))

    @property
    def dead(self) -> int:
        """Slots of deleted rows, or of rows whose text changed since."""
        return self.size - self.rows

    def compact(self) -> None:
        """Move the live slots to the front, so a long-running process does not grow with the
        deletes and rewrites it has seen. Rows keep their order; postings follow their rows."""
        self.postings.fold(self.alive)  # first: drops the dead slots' postings, empties the tail
        live = np.flatnonzero(self.alive[: self.size])
        new_slot = np.full(self.size, -1, dtype=np.int64)
        new_slot[live] = np.arange(live.size)
        for name in self._PER_SLOT:
            arr = getattr(self, name)
            arr[: live.size] = arr[live]
            arr[live.size : self.size] = self._FILL.get(name, 0)
        self.chunk_ids[: self.size] = [self.chunk_ids[i] for i in live.tolist()] + [""] * (
            self.size - live.size
        )
        self.position = {rowid: int(new_slot[slot]) for rowid, slot in self.position.items()}
        self.postings.rows = new_slot[self.postings.rows].astype(np.int32)
        self.size = int(live.size)

    def doc_code(self, document_id: str) -> int:
        c = self.doc_codes.code(document_id)
        if c == len(self.doc_ids):
            self.doc_ids.append(document_id)
        return c

    def _kill(self, pos: int) -> None:
        self.alive[pos] = False
        self.rows -= 1
        self.tokens -= float(self.doclen[pos])

    def apply(self, batch: list, terms: list[bytes]) -> None:
        """Apply search_rows rows (with each row's stored terms). A new row, or a row whose text
        changed, takes a new slot: the old slot dies with its postings. Otherwise (a version
        marked superseded, say) the row's slot is updated in place."""
        fresh, fresh_terms = [], []
        for row, row_terms in zip(batch, terms, strict=True):
            rowid = row["rowid"]
            sig = hash(row_terms)
            pos = self.position.get(rowid)
            if pos is not None:
                if self.terms_sig[rowid] == sig:
                    self._set(np.asarray([pos]), [row])
                    continue
                self._kill(pos)
            self.terms_sig[rowid] = sig
            fresh.append(row)
            fresh_terms.append(row_terms)
        if not fresh:
            return
        self.reserve(len(fresh))
        slots = np.arange(self.size, self.size + len(fresh))
        self.size += len(fresh)
        for slot, row in zip(slots.tolist(), fresh, strict=True):
            self.position[row["rowid"]] = slot
        self._set(slots, fresh)
        self.alive[slots] = True
        self.rows += len(fresh)
        self._index_terms(slots, fresh_terms)

    def _set(self, slots: np.ndarray, rows: list) -> None:
        self.vectors[slots] = np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32).reshape(
            len(rows), self.dimension
        )
        code = self.codes.code
        self.org[slots] = [code("org:" + r["organization_id"]) for r in rows]
        self.project[slots] = [code("project:" + r["project_id"]) for r in rows]
        self.content_type[slots] = [code("ct:" + r["content_type"]) for r in rows]
        self.document[slots] = [self.doc_code(r["document_id"]) for r in rows]
        self.created[slots] = [r["created_at"] for r in rows]
        self.forget[slots] = [r["forget_after"] if r["forget_after"] is not None else np.inf for r in rows]
        self.chunk_index[slots] = [r["chunk_index"] for r in rows]
        self.superseded[slots] = [bool(r["superseded"]) for r in rows]
        for slot, r in zip(slots.tolist(), rows, strict=True):
            self.chunk_ids[slot] = r["chunk_id"]

    def _index_terms(self, slots: np.ndarray, blobs: list[bytes]) -> None:
        """Postings and lengths of fresh slots, in one vectorised pass."""
        records, per_row = bm25.decode_terms(blobs)
        tokens = np.zeros(len(records), dtype=np.float32)  # the term's tokens in the row's own text
        f = np.zeros(len(records), dtype=np.float32)  # BM25's f: its hits weighted by column
        for column, weight in enumerate(self.weights):
            hits = records["tf"][:, column].astype(np.float32)
            if column < len(bm25.OWN_COLUMNS):  # context hits add evidence, not length
                tokens += hits
            f += weight * hits
        lengths = np.bincount(np.repeat(np.arange(len(blobs)), per_row), weights=tokens, minlength=len(blobs))
        self.doclen[slots] = lengths
        self.tokens += float(lengths.sum())
        keep = f > 0  # a context term at weight 0 is not a posting
        self.postings.add(
            records["term"][keep].copy(), np.repeat(slots.astype(np.int32), per_row)[keep], f[keep]
        )

    def remove(self, rowid: int) -> None:
        pos = self.position.pop(rowid, None)
        self.terms_sig.pop(rowid, None)
        if pos is not None:
            self._kill(pos)


class SqliteSearchIndex:
    def __init__(self, db: SqliteDatabase, dimension: int, context_weight: float = bm25.CONTEXT_WEIGHT) -> None:
        self.db = db
        self.dimension = dimension
        self.context_weight = context_weight
        self._matrix = _Projection(dimension, context_weight)
        self._lock = threading.Lock()
        self._tokenizer = bm25.Fts5Tokenizer()
        self._upgrade_terms()

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
        texts = [(i.chunk.title, " ".join(i.chunk.heading_path), i.chunk.content) for i in items]
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
                    "SELECT rowid FROM search_rows WHERE chunk_id = ?", (c.id,)
                ).fetchone()
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
                )
                if existing:
                    rowid = existing["rowid"]
                    conn.execute(
                        "UPDATE search_rows SET document_id=?, organization_id=?, project_id=?, chunk_index=?,"
                        " content_type=?, created_at=?, forget_after=?, vector=?, seq=?, superseded=?, terms=?"
                        " WHERE rowid=?",
                        (*values, rowid),
                    )
                    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
                else:
                    rowid = conn.execute(
                        "INSERT INTO search_rows (chunk_id, document_id, organization_id, project_id, chunk_index,"
                        " content_type, created_at, forget_after, vector, seq, superseded, terms)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
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
        with self._lock:
            self._matrix = _Projection(self.dimension, self.context_weight)

    # ------------------------------------------------------------------ reads

    def _sync(self) -> _Projection:
        """Bring the in-memory projection up to date with the database (cheap when nothing changed)."""
        conn = self.db.connection()
        current = int(self.db.get_meta("index_seq") or 0)
        with self._lock:
            m = self._matrix
            if current < m.seq:  # the index was cleared by another process
                m = self._matrix = _Projection(self.dimension, self.context_weight)
            if current == m.seq:
                return m
            backfilled: dict[int, bytes] = {}
            if m.size == 0:  # a whole index to load: size the arrays once
                m.reserve(conn.execute("SELECT COUNT(*) AS n FROM search_rows").fetchone()["n"])
            cursor = conn.execute("SELECT * FROM search_rows WHERE seq > ?", (m.seq,))
            while batch := cursor.fetchmany(SYNC_BATCH):
                missing = [r["rowid"] for r in batch if r["terms"] is None]
                if missing:
                    if not backfilled:
                        log.info("tokenising indexed chunks for BM25 (once, for rows from an older memlane)")
                    backfilled.update(self._tokenize_stored(conn, missing))
                m.apply(
                    batch, [r["terms"] if r["terms"] is not None else backfilled[r["rowid"]] for r in batch]
                )
            for row in conn.execute(
                "SELECT row_id FROM search_tombstones WHERE seq >= ?", ((m.seq + 1) * 1_000_000,)
            ):
                # a row deleted and later re-added under the same rowid is live again
                if (
                    conn.execute("SELECT 1 FROM search_rows WHERE rowid = ?", (row["row_id"],)).fetchone()
                    is None
                ):
                    m.remove(row["row_id"])
            if backfilled:
                self._store_terms(backfilled)
                log.info("stored the BM25 terms of %d indexed chunks", len(backfilled))
            if m.dead > max(COMPACT_AT, m.size // 4):
                m.compact()
            elif m.postings.tail_size > bm25.Postings.FOLD_AT:
                m.postings.fold(m.alive)
            m.seq = current
            return m

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

    def warm(self) -> int:
        """Load the vectors and postings now (server start) rather than on the first recall."""
        m = self._sync()
        with self._lock:
            if m.postings.tail_size:
                m.postings.fold(m.alive)
            return m.rows

    def _mask(self, m: _Projection, scope: SearchScope, allowed_docs: set[str] | None) -> np.ndarray:
        n = m.size
        org = m.codes.get("org:" + scope.organization_id)
        if org < 0:
            return np.zeros(n, dtype=bool)
        mask = m.alive[:n] & (m.org[:n] == org)
        projects = [m.codes.get("project:" + p) for p in scope.project_ids]
        mask &= np.isin(m.project[:n], [p for p in projects if p >= 0])
        if scope.now is not None:
            mask &= m.forget[:n] > scope.now.timestamp()
        f = scope.filters
        if not f.include_superseded:
            mask &= ~m.superseded[:n]
        if f.content_types:
            mask &= np.isin(m.content_type[:n], [m.codes.get("ct:" + ct.value) for ct in f.content_types])
        created_after = epoch(f.created_after)
        if created_after is not None:
            mask &= m.created[:n] > created_after  # strictly after, as in recent_documents
        if allowed_docs is not None:
            codes = [m.doc_codes.get(d) for d in allowed_docs]
            mask &= np.isin(m.document[:n], [c for c in codes if c >= 0])
        return mask

    def _tagged_documents(self, scope: SearchScope) -> set[str] | None:
        """The tag filter, resolved against the document tags in the same database."""
        tags = scope.filters.tags
        if not tags:
            return None
        rows = (
            self.db.connection()
            .execute(
                f"SELECT DISTINCT document_id FROM document_tags WHERE organization_id = ? AND tag IN "
                f"({','.join('?' * len(tags))})",
                (scope.organization_id, *(t.lower() for t in tags)),
            )
            .fetchall()
        )
        return {r["document_id"] for r in rows}

    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int
    ) -> LegResults:
        allowed_docs = self._tagged_documents(scope)
        if not scope.project_ids or (allowed_docs is not None and not allowed_docs):
            return LegResults(vector=[], text=[])
        words = query_words(query_text)
        phrases = [t for terms in self._tokenizer.word_terms(words) for t in terms] if words else []
        q = np.asarray(query_vector, dtype=np.float32) if query_vector is not None else None
        m = self._sync()
        with self._lock:
            mask = self._mask(m, scope, allowed_docs)  # one scope, applied identically in both legs
            vector = self._vector_leg(m, mask, q, k) if q is not None else []
            text = self._text_leg(m, mask, phrases, k)
        return LegResults(vector=vector, text=text)

    @staticmethod
    def _vector_leg(m: _Projection, mask: np.ndarray, q: np.ndarray, k: int) -> list[Candidate]:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return []
        n = m.size
        # Vectors are L2-normalised at embedding time, so the dot product is the cosine. The
        # product runs over a view of the matrix; gathering the in-scope rows first copies them,
        # which only pays off when the scope holds a small part of the rows.
        with _one_blas_thread():
            scores = m.vectors[idx] @ q if idx.size < n // 4 else (m.vectors[:n] @ q)[idx]
        return _top(m, idx, scores, k)

    @staticmethod
    def _text_leg(m: _Projection, mask: np.ndarray, phrases: list[int], k: int) -> list[Candidate]:
        """BM25 top-k under the scope: every in-scope row holding any query term is scored, so a
        keyword-only match can surface however many other tenants' rows match better."""
        scores = bm25.score(m.postings, phrases, m.alive, m.doclen, m.rows, m.tokens, m.size)
        if scores is None:
            return []
        idx = np.flatnonzero(mask & (scores[: m.size] > 0))
        if idx.size == 0:
            return []
        return _top(m, idx, scores[idx], k)

    def document_ids(self, org_id: str | None = None) -> set[str]:
        conn = self.db.connection()
        if org_id is None:
            rows = conn.execute("SELECT DISTINCT document_id FROM search_rows").fetchall()
        else:
            rows = conn.execute(
                "SELECT DISTINCT document_id FROM search_rows WHERE organization_id = ?", (org_id,)
            ).fetchall()
        return {r["document_id"] for r in rows}

    def holdings(self, document_id: str) -> IndexHoldings:
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


def _top(m: _Projection, idx: np.ndarray, scores: np.ndarray, k: int) -> list[Candidate]:
    """The k best of `scores` (for rows `idx`), best first; ties in row order."""
    top = min(k, idx.size)
    best = np.argpartition(-scores, top - 1)[:top]
    best = best[np.lexsort((idx[best], -scores[best]))]
    return [
        Candidate(
            chunk_id=m.chunk_ids[idx[b]],
            document_id=m.doc_ids[m.document[idx[b]]],
            chunk_index=int(m.chunk_index[idx[b]]),
            score=float(scores[b]),
            created_at=datetime.fromtimestamp(float(m.created[idx[b]]), UTC),
        )
        for b in best
    ]
