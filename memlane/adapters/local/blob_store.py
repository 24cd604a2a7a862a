"""BlobStore in the embedded database: raw payloads waiting in the queue (S3 on AWS)."""

from __future__ import annotations

from memlane.adapters.local.sqlite_db import SqliteDatabase


class SqliteBlobStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def put(self, key: str, data: bytes) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO blobs (key, data) VALUES (?, ?)", (key, data))

    def get(self, key: str) -> bytes | None:
        row = self.db.connection().execute("SELECT data FROM blobs WHERE key = ?", (key,)).fetchone()
        return bytes(row["data"]) if row else None

    def delete(self, key: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM blobs WHERE key = ?", (key,))

    def delete_prefix(self, prefix: str) -> int:
        if not prefix:
            raise ValueError("delete_prefix needs a prefix; refusing to delete every blob")
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM blobs WHERE key >= ? AND key < ?", (prefix, prefix + "\uffff")
            ).rowcount

    def keys(self, prefix: str = "") -> list[str]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT key FROM blobs WHERE key >= ? AND key < ? ORDER BY key", (prefix, prefix + "\uffff")
            )
            .fetchall()
        )
        return [r["key"] for r in rows]

    def versions(self, prefix: str) -> int:
        """The embedded store keeps one version per key."""
        return len(self.keys(prefix))
