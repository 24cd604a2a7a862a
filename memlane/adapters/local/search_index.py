"""SearchIndex for the embedded default: BM25 from SQLite FTS5, exact k-NN over an in-memory
matrix of the stored vectors.

Vectors live in SQLite (the durable copy) and in a NumPy matrix per process (the fast copy). Every
index write bumps `meta.index_seq` and stamps the row (or a tombstone) with it, so any process —
the server, or a CLI writing to the same data directory — catches up by reading only the rows
changed since the sequence number it last saw, never the whole table.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from memlane.adapters.local.sqlite_db import SqliteDatabase, epoch
from memlane.domain.errors import EmbedderMismatchError
from memlane.ports import Candidate, IndexedChunk, LegResults, SearchScope

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
RANK_FIRST = 400  # BM25 candidates ranked by FTS5 alone before the scope filter


def fts_query(text: str) -> str | None:
    """Turn free text into an FTS5 OR-query of quoted terms (quoting makes every word literal, so
    user input can never inject FTS5 syntax)."""
    words = [w.lower() for w in _WORD.findall(text)]
    terms = [w for w in words if w not in STOPWORDS] or words
    unique = list(dict.fromkeys(terms))[:32]
    if not unique:
        return None
    return " OR ".join(f'"{w}"' for w in unique)


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


class _VectorMatrix:
    """Rows of the search projection held in NumPy arrays, addressed by SQLite rowid."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
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
        self.chunk_ids: list[str] = [""] * cap
        self.position: dict[int, int] = {}  # sqlite rowid -> row in the arrays
        self.codes = _Codes()  # organizations, projects, content types
        self.doc_codes = _Codes()
        self.doc_ids: list[str] = []  # document code -> document id
        self.seq = 0

    def _grow(self) -> None:
        cap = len(self.alive) * 2
        for name in (
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
        ):
            old = getattr(self, name)
            shape = (cap, *old.shape[1:])
            fill = {
                "forget": np.inf,
                "created": 0.0,
                "alive": False,
                "vectors": 0.0,
                "chunk_index": 0,
                "superseded": False,
            }.get(name, -1)
            new = np.full(shape, fill, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)
        self.chunk_ids.extend([""] * (cap - len(self.chunk_ids)))

    def doc_code(self, document_id: str) -> int:
        c = self.doc_codes.code(document_id)
        if c == len(self.doc_ids):
            self.doc_ids.append(document_id)
        return c

    def upsert(self, row) -> None:  # row: sqlite3.Row of search_rows
        pos = self.position.get(row["rowid"])
        if pos is None:
            if self.size == len(self.alive):
                self._grow()
            pos = self.size
            self.size += 1
            self.position[row["rowid"]] = pos
        self.vectors[pos] = np.frombuffer(row["vector"], dtype=np.float32)
        self.alive[pos] = True
        self.org[pos] = self.codes.code("org:" + row["organization_id"])
        self.project[pos] = self.codes.code("project:" + row["project_id"])
        self.document[pos] = self.doc_code(row["document_id"])
        self.content_type[pos] = self.codes.code("ct:" + row["content_type"])
        self.created[pos] = row["created_at"]
        self.forget[pos] = row["forget_after"] if row["forget_after"] is not None else np.inf
        self.chunk_index[pos] = row["chunk_index"]
        self.superseded[pos] = bool(row["superseded"])
        self.chunk_ids[pos] = row["chunk_id"]

    def remove(self, rowid: int) -> None:
        pos = self.position.pop(rowid, None)
        if pos is not None:
            self.alive[pos] = False


class SqliteSearchIndex:
    def __init__(self, db: SqliteDatabase, dimension: int) -> None:
        self.db = db
        self.dimension = dimension
        self._matrix = _VectorMatrix(dimension)
        self._lock = threading.Lock()

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
        with self.db.transaction() as conn:
            self._check_embedder(conn, embedder_id)
            seq = int(conn.execute("SELECT value FROM meta WHERE key = 'index_seq'").fetchone()["value"]) + 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'index_seq'", (str(seq),))
            for item in items:
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
                )
                if existing:
                    rowid = existing["rowid"]
                    conn.execute(
                        "UPDATE search_rows SET document_id=?, organization_id=?, project_id=?, chunk_index=?,"
                        " content_type=?, created_at=?, forget_after=?, vector=?, seq=?, superseded=? WHERE rowid=?",
                        (*values, rowid),
                    )
                    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
                else:
                    rowid = conn.execute(
                        "INSERT INTO search_rows (chunk_id, document_id, organization_id, project_id, chunk_index,"
                        " content_type, created_at, forget_after, vector, seq, superseded)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (c.id, *values),
                    ).lastrowid
                conn.execute(
                    "INSERT INTO search_fts (rowid, title, headings, body) VALUES (?,?,?,?)",
                    (rowid, c.title, " ".join(c.heading_path), c.content),
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
            self._matrix = _VectorMatrix(self.dimension)

    # ------------------------------------------------------------------ reads

    def _sync(self) -> _VectorMatrix:
        """Bring the in-memory matrix up to date with the database (cheap when nothing changed)."""
        conn = self.db.connection()
        current = int(self.db.get_meta("index_seq") or 0)
        with self._lock:
            m = self._matrix
            if current < m.seq:  # the index was cleared by another process
                m = self._matrix = _VectorMatrix(self.dimension)
            if current == m.seq:
                return m
            for row in conn.execute("SELECT * FROM search_rows WHERE seq > ?", (m.seq,)):
                m.upsert(row)
            for row in conn.execute(
                "SELECT row_id FROM search_tombstones WHERE seq >= ?", ((m.seq + 1) * 1_000_000,)
            ):
                # a row deleted and later re-added under the same rowid is live again
                if (
                    conn.execute("SELECT 1 FROM search_rows WHERE rowid = ?", (row["row_id"],)).fetchone()
                    is None
                ):
                    m.remove(row["row_id"])
            m.seq = current
            return m

    def warm(self) -> int:
        """Load the vectors now (server start) rather than on the first recall."""
        return int(self._sync().alive.sum())

    def _mask(self, m: _VectorMatrix, scope: SearchScope, allowed_docs: set[str] | None) -> np.ndarray:
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
        if f.created_after is not None:
            mask &= m.created[:n] >= epoch(f.created_after)
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
        vector = self._vector_leg(scope, query_vector, k, allowed_docs) if query_vector is not None else []
        text = self._text_leg(scope, query_text, k, allowed_docs)
        return LegResults(vector=vector, text=text)

    def _vector_leg(self, scope: SearchScope, query_vector, k: int, allowed_docs) -> list[Candidate]:
        m = self._sync()
        q = np.asarray(query_vector, dtype=np.float32)
        with self._lock:
            n = m.size
            mask = self._mask(m, scope, allowed_docs)
            idx = np.flatnonzero(mask)
            if idx.size == 0:
                return []
            # Vectors are L2-normalised at embedding time, so the dot product is the cosine.
            scores = m.vectors[idx] @ q if idx.size < n // 2 else (m.vectors[:n] @ q)[idx]
            top = min(k, idx.size)
            best = np.argpartition(-scores, top - 1)[:top]
            best = best[np.argsort(-scores[best], kind="stable")]
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

    def _text_leg(self, scope: SearchScope, query_text: str, k: int, allowed_docs) -> list[Candidate]:
        """BM25 top-k under the scope, in two phases. FTS5 ranks fastest on its own (ORDER BY
        rank LIMIT inside the FTS query is ~3x cheaper than ranking through a join), so the best
        `RANK_FIRST` matches are taken from FTS5 alone and then filtered by scope. When the scope
        removes so many of them that fewer than k remain (another tenant's matches crowd the top,
        or a narrow filter), the leg falls back to ranking every in-scope match: never fewer
        results, only sometimes slower."""
        match = fts_query(query_text)
        if match is None:
            return []
        if allowed_docs is not None and not allowed_docs:
            return []
        where, args = self._scope_where(scope, allowed_docs)
        conn = self.db.connection()
        first = max(RANK_FIRST, k * 4)
        rows = conn.execute(
            "SELECT r.chunk_id, r.document_id, r.chunk_index, r.created_at, f.rank FROM"
            " (SELECT rowid, bm25(search_fts, 2.0, 1.5, 1.0) AS rank FROM search_fts WHERE search_fts MATCH ?"
            "  ORDER BY rank LIMIT ?) f"
            f" JOIN search_rows r ON r.rowid = f.rowid WHERE {where} ORDER BY f.rank LIMIT ?",
            [match, first, *args, k],
        ).fetchall()
        if len(rows) < k:
            matched = conn.execute(
                "SELECT COUNT(*) AS n FROM (SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT ?)",
                (match, first + 1),
            ).fetchone()["n"]
            if matched > first:  # the first phase saw only part of the matches
                rows = conn.execute(
                    "SELECT r.chunk_id, r.document_id, r.chunk_index, r.created_at,"
                    " bm25(search_fts, 2.0, 1.5, 1.0) AS rank"
                    " FROM search_fts JOIN search_rows r ON r.rowid = search_fts.rowid"
                    f" WHERE search_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
                    [match, *args, k],
                ).fetchall()
        # FTS5's bm25() is negated (more negative = better); flip it to a positive raw score.
        return [
            Candidate(
                chunk_id=r["chunk_id"],
                document_id=r["document_id"],
                chunk_index=r["chunk_index"],
                score=-float(r["rank"]),
                created_at=datetime.fromtimestamp(r["created_at"], UTC),
            )
            for r in rows
        ]

    @staticmethod
    def _scope_where(scope: SearchScope, allowed_docs) -> tuple[str, list[object]]:
        """The scope as SQL over search_rows `r`: the tenant first, always."""
        sql = ["r.organization_id = ?", f"r.project_id IN ({','.join('?' * len(scope.project_ids))})"]
        args: list[object] = [scope.organization_id, *scope.project_ids]
        if scope.now is not None:
            sql.append("(r.forget_after IS NULL OR r.forget_after > ?)")
            args.append(scope.now.timestamp())
        f = scope.filters
        if not f.include_superseded:
            sql.append("r.superseded = 0")
        if f.content_types:
            sql.append(f"r.content_type IN ({','.join('?' * len(f.content_types))})")
            args.extend(ct.value for ct in f.content_types)
        if f.created_after is not None:
            sql.append("r.created_at >= ?")
            args.append(epoch(f.created_after))
        if allowed_docs is not None:
            sql.append(f"r.document_id IN ({','.join('?' * len(allowed_docs))})")
            args.extend(allowed_docs)
        return " AND ".join(sql), args

    def document_ids(self, org_id: str | None = None) -> set[str]:
        conn = self.db.connection()
        if org_id is None:
            rows = conn.execute("SELECT DISTINCT document_id FROM search_rows").fetchall()
        else:
            rows = conn.execute(
                "SELECT DISTINCT document_id FROM search_rows WHERE organization_id = ?", (org_id,)
            ).fetchall()
        return {r["document_id"] for r in rows}

    def chunk_count(self) -> int:
        return self.db.connection().execute("SELECT COUNT(*) AS n FROM search_rows").fetchone()["n"]
