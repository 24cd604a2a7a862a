"""The recall cache of the embedded default, in the same SQLite file."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime

from memlane.adapters.local.sqlite_db import SqliteDatabase


class SqliteCache:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def get(self, key: str, now: datetime) -> bytes | None:
        row = (
            self.db.connection()
            .execute("SELECT value, expires_at FROM cache_entries WHERE key = ?", (key,))
            .fetchone()
        )
        if row is None or row["expires_at"] <= now.timestamp():
            return None
        return bytes(row["value"])

    def set(
        self, key: str, value: bytes, ttl_seconds: int, now: datetime, document_ids: Sequence[str] = ()
    ) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO cache_entries (key, value, expires_at) VALUES (?,?,?)",
                (key, value, now.timestamp() + ttl_seconds),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO cache_documents (key, document_id) VALUES (?,?)",
                [(key, d) for d in document_ids],
            )

    def generations(self, scope_keys: Sequence[str]) -> dict[str, int]:
        if not scope_keys:
            return {}
        rows = (
            self.db.connection()
            .execute(
                f"SELECT scope_key, generation FROM cache_generations WHERE scope_key IN ({','.join('?' * len(scope_keys))})",
                tuple(scope_keys),
            )
            .fetchall()
        )
        found = {r["scope_key"]: r["generation"] for r in rows}
        return {k: found.get(k, 0) for k in scope_keys}

    def bump_generation(self, scope_key: str) -> int:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO cache_generations (scope_key, generation) VALUES (?, 1)"
                " ON CONFLICT(scope_key) DO UPDATE SET generation = generation + 1",
                (scope_key,),
            )
            return conn.execute(
                "SELECT generation FROM cache_generations WHERE scope_key = ?", (scope_key,)
            ).fetchone()["generation"]

    def purge_document(self, document_id: str) -> int:
        """Drop every cached result that mentions the document (deletion leaves nothing behind)."""
        with self.db.transaction() as conn:
            keys = [
                r["key"]
                for r in conn.execute("SELECT key FROM cache_documents WHERE document_id = ?", (document_id,))
            ]
            for key in keys:
                conn.execute("DELETE FROM cache_entries WHERE key = ?", (key,))
                conn.execute("DELETE FROM cache_documents WHERE key = ?", (key,))
            return len(keys)

    def entries_naming(self, document_id: str) -> int:
        row = self.db.connection().execute(
            "SELECT COUNT(*) AS n FROM cache_documents WHERE document_id = ?", (document_id,)).fetchone()
        return int(row["n"])

    def purge_expired(self, now: datetime) -> int:
        with self.db.transaction() as conn:
            keys = [
                r["key"]
                for r in conn.execute(
                    "SELECT key FROM cache_entries WHERE expires_at <= ?", (now.timestamp(),)
                )
            ]
            for key in keys:
                conn.execute("DELETE FROM cache_entries WHERE key = ?", (key,))
                conn.execute("DELETE FROM cache_documents WHERE key = ?", (key,))
            return len(keys)

    def document_ids(self) -> builtins.set[str]:
        rows = self.db.connection().execute("SELECT DISTINCT document_id FROM cache_documents").fetchall()
        return {r["document_id"] for r in rows}
