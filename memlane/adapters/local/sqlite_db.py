"""The embedded default's one SQLite file: schema, connections, transactions.

WAL mode lets readers (recall) run while a writer (ingestion) commits. Each thread gets its own
connection; SQLite serialises writers, and busy_timeout makes a second writer wait instead of
failing.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from memlane.adapters.local import sqlite_file
from memlane.adapters.local.private_files import private_dir

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS organizations (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL,
    created_at TEXT NOT NULL, revoked_at TEXT, rate_limit_per_minute INTEGER NOT NULL,
    can_manage_keys INTEGER NOT NULL DEFAULT 0);

CREATE TABLE IF NOT EXISTS projects (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL, slug TEXT NOT NULL, description TEXT, is_default INTEGER NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (organization_id, slug));

CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, project_id TEXT NOT NULL,
    user_id TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL, summary TEXT,
    content_type TEXT NOT NULL, source_url TEXT, metadata TEXT NOT NULL, content_hash TEXT NOT NULL,
    updates_memory_id TEXT, forget_after TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    last_accessed_at TEXT, status TEXT NOT NULL, status_reason TEXT, chunk_count INTEGER NOT NULL,
    embedder TEXT, superseded_by TEXT);
CREATE INDEX IF NOT EXISTS documents_source ON documents (organization_id, project_id, source_url)
    WHERE source_url IS NOT NULL;
CREATE INDEX IF NOT EXISTS documents_recent ON documents (organization_id, project_id, created_at);
CREATE INDEX IF NOT EXISTS documents_hash ON documents (organization_id, project_id, content_hash);
CREATE INDEX IF NOT EXISTS documents_forget ON documents (forget_after) WHERE forget_after IS NOT NULL;

CREATE TABLE IF NOT EXISTS document_tags (
    document_id TEXT NOT NULL, organization_id TEXT NOT NULL, tag TEXT NOT NULL,
    PRIMARY KEY (document_id, tag));
CREATE INDEX IF NOT EXISTS document_tags_by_tag ON document_tags (organization_id, tag);

CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, document_id TEXT NOT NULL, organization_id TEXT NOT NULL,
    project_id TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (document_id);

-- The search projection: one row per indexed chunk with its vector and its BM25 index terms
-- (memlane.adapters.local.bm25), plus an FTS5 table with the same rowid holding the text. `seq`
-- orders changes so other processes' in-memory indexes can catch up.
CREATE TABLE IF NOT EXISTS search_rows (
    rowid INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, document_id TEXT NOT NULL,
    organization_id TEXT NOT NULL, project_id TEXT NOT NULL, chunk_index INTEGER NOT NULL,
    content_type TEXT NOT NULL, created_at REAL NOT NULL, forget_after REAL,
    vector BLOB NOT NULL, seq INTEGER NOT NULL, superseded INTEGER NOT NULL DEFAULT 0, terms BLOB,
    kind TEXT);
CREATE INDEX IF NOT EXISTS search_rows_by_document ON search_rows (document_id);
CREATE INDEX IF NOT EXISTS search_rows_by_seq ON search_rows (seq);
CREATE TABLE IF NOT EXISTS search_tombstones (seq INTEGER PRIMARY KEY, row_id INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    title, headings, body, tokenize = 'porter unicode61 remove_diacritics 2');

CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, document_id TEXT NOT NULL, organization_id TEXT NOT NULL,
    attempts INTEGER NOT NULL, not_before REAL NOT NULL, lease_until REAL, last_error TEXT,
    created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs (not_before);

CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, data BLOB NOT NULL);

-- Documentation sets (memlane.docsets): the docset records, the crawl state of every page (so a
-- crawl survives a restart) and Mem-Oracle client sessions. Timestamps are epoch milliseconds.
CREATE TABLE IF NOT EXISTS docsets (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, project_id TEXT NOT NULL, name TEXT NOT NULL,
    base_url TEXT NOT NULL, seed_url TEXT NOT NULL, seed_slug TEXT NOT NULL, allowed_paths TEXT NOT NULL,
    max_pages INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    last_refreshed_at INTEGER, text_version INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS docsets_by_org ON docsets (organization_id, created_at);
CREATE TABLE IF NOT EXISTS docset_pages (
    id TEXT PRIMARY KEY, docset_id TEXT NOT NULL, organization_id TEXT NOT NULL, url TEXT NOT NULL,
    path TEXT NOT NULL, title TEXT, status TEXT NOT NULL, etag TEXT, last_modified TEXT, content_hash TEXT,
    document_id TEXT, chunk_count INTEGER NOT NULL, attempts INTEGER NOT NULL, error TEXT, retry_at INTEGER,
    claimed_at INTEGER, fetched_at INTEGER, indexed_at INTEGER, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, sketch TEXT, UNIQUE (docset_id, url));
CREATE INDEX IF NOT EXISTS docset_pages_due ON docset_pages (retry_at) WHERE retry_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS docset_pages_by_status ON docset_pages (docset_id, status);
CREATE TABLE IF NOT EXISTS docset_sessions (
    organization_id TEXT NOT NULL, id TEXT NOT NULL, client_type TEXT, connected_at INTEGER NOT NULL,
    last_heartbeat INTEGER NOT NULL, PRIMARY KEY (organization_id, id));

-- Lifecycle (auto-forget records, the recall cache and its per-project generations).
CREATE TABLE IF NOT EXISTS forgotten (
    document_id TEXT NOT NULL, organization_id TEXT NOT NULL, project_id TEXT NOT NULL,
    forgotten_at TEXT NOT NULL, reason TEXT NOT NULL);
-- Deletion receipts (memlane.documents.receipts): which stores were read after a delete and what
-- each still held. Ids and counts only, never content.
CREATE TABLE IF NOT EXISTS deletion_receipts (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, created_at TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cache_entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS cache_entries_expiry ON cache_entries (expires_at);
CREATE TABLE IF NOT EXISTS cache_documents (key TEXT NOT NULL, document_id TEXT NOT NULL,
    PRIMARY KEY (document_id, key));
CREATE TABLE IF NOT EXISTS cache_generations (scope_key TEXT PRIMARY KEY, generation INTEGER NOT NULL);
"""


def iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat()


def parse_iso(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def parse_iso_required(value: str) -> datetime:
    """A NOT NULL timestamp column."""
    return datetime.fromisoformat(value)


def epoch(dt: datetime | None) -> float | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


# Columns added after a table was first shipped: (table, column, declaration). Data directories
# created before get them on open; the code that reads them handles NULL (search_rows.terms is
# backfilled by the search index from the FTS5 text).
_ADDED_COLUMNS = (
    ("search_rows", "terms", "BLOB"),
    # memlane.ports.IndexedChunk.kind; NULL on rows indexed before (ports.UNKNOWN_KIND until a reindex)
    ("search_rows", "kind", "TEXT"),
    ("api_keys", "can_manage_keys", "INTEGER NOT NULL DEFAULT 0"),
    ("documents", "media", "TEXT"),  # memlane.domain.models.MediaInfo as JSON
    ("documents", "source_changed_at", "TEXT"),
    ("docset_pages", "sketch", "TEXT"),  # memlane.domain.docsets.DocsetPage.sketch as JSON
    ("documents", "conversation_id", "TEXT"),  # memlane.domain.models.Document.conversation_id
    ("documents", "message_index", "INTEGER"),
    ("docsets", "text_version", "INTEGER NOT NULL DEFAULT 0"),  # DocsetStore.register_text's counter
)


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Inside the opening write transaction, so two processes opening one old file cannot race."""
    for table, column, decl in _ADDED_COLUMNS:
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


# One-time changes to stored data, each recorded in `meta` so that it runs once: (name, SQL).
_DATA_MIGRATIONS = (
    # raged items were cut into ~1800-character line chunks before a document carried its own
    # chunking (memlane.ingest.chunking.CHUNKING_KEY): say so on them, so that a rewrite (reindex,
    # a retry) cuts them the same way again and their chunk ids keep naming the same text.
    ("raged-chunking",
     "UPDATE documents SET metadata = json_set(metadata, '$.chunking', 'lines') WHERE"
     " json_extract(metadata, '$.raged') IS NOT NULL AND json_extract(metadata, '$.chunking') IS NULL"),
)


def _migrate_data(conn: sqlite3.Connection) -> None:
    for name, sql in _DATA_MIGRATIONS:
        key = f"migration:{name}"
        if conn.execute("SELECT 1 FROM meta WHERE key = ?", (key,)).fetchone() is None:
            conn.execute(sql)
            conn.execute("INSERT INTO meta (key, value) VALUES (?, 'done')", (key,))


class SqliteDatabase:
    """Owns the file and hands each thread its own connection."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            private_dir(self.path.parent)
            # created whole (0600: SQLite gives -wal/-shm the database file's mode), or checked
            sqlite_file.prepare(self.path, lambda conn: conn.executescript(_SCHEMA))
        self._local = threading.local()
        # every connection handed out, with the thread it was handed to (see close)
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._lock = threading.Lock()
        companions = sqlite_file.companions(self.path)
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            if not sqlite_file.is_damage(exc):
                raise
            self.close()
            sqlite_file.remove_new_companions(self.path, companions)  # leave the directory as found
            raise sqlite_file.damaged(self.path, f"SQLite cannot read it ({exc})") from exc

    def _open(self) -> None:
        # executescript manages its own transaction (it commits first), so it runs on its own.
        self.connection().executescript(_SCHEMA)
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('index_seq', '0')")
            _add_missing_columns(conn)
            # after the columns it names exist (an old file gains them just above)
            conn.execute(
                "CREATE INDEX IF NOT EXISTS documents_conversation ON documents"
                " (organization_id, project_id, conversation_id, message_index, created_at)"
                " WHERE conversation_id IS NOT NULL"
            )
            _migrate_data(conn)

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a transaction is exactly
            # the `with transaction()` block.
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._lock:
                self._all.append((threading.current_thread(), conn))
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction. BEGIN IMMEDIATE takes the write lock up front, so two writers
        never deadlock upgrading from a read lock."""
        conn = self.connection()
        if conn.in_transaction:  # nested use joins the outer transaction
            yield conn
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def get_meta(self, key: str) -> str | None:
        row = self.connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row["value"] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = ?",
                (key, value, value),
            )

    def close(self) -> None:
        """Close this thread's connection and those of threads that have ended. A thread still
        running keeps its own, released when it lets go of it: closing a connection while another
        thread runs a statement on it crashes the whole process in CPython's sqlite3. The owner
        stops its threads first (memlane.local.runtime), so this is the rule for one that overran
        its stop's timeout, not the usual path."""
        me = threading.current_thread()
        with self._lock:
            for thread, conn in self._all:
                if thread is me or not thread.is_alive():
                    with suppress(sqlite3.ProgrammingError):
                        conn.close()
                else:
                    log.info("closing the database while thread %s still runs: its connection is left to it",
                             thread.name)
            self._all.clear()
        self._local = threading.local()
