"""ConnectionStore on SQLite (memlane.ports.connections): connections, their items and pending
OAuth flows, in the data directory's database file.

Records are kept as JSON next to the columns queries need. The sync lease is a column of its own
that only `claim` and `release` write: saving a connection (a pause from the API, a sync's
progress) never takes or drops a lease by accident.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from memlane.adapters.local.sqlite_db import SqliteDatabase, epoch, iso
from memlane.domain.connections import Connection, ConnectionItem, PendingAuthorization

_SCHEMA = """
CREATE TABLE IF NOT EXISTS connections (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, created_at TEXT NOT NULL,
    lease_until REAL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS connections_by_org ON connections (organization_id, created_at);
CREATE TABLE IF NOT EXISTS connection_items (
    connection_id TEXT NOT NULL, external_id TEXT NOT NULL, organization_id TEXT NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (connection_id, external_id));
CREATE TABLE IF NOT EXISTS oauth_pending (
    state_hash TEXT PRIMARY KEY, expires_at REAL NOT NULL, body TEXT NOT NULL);
"""


def _connection(row: sqlite3.Row) -> Connection:
    conn = Connection.model_validate_json(row["body"])
    lease = row["lease_until"]
    return conn.model_copy(update={"lease_until": datetime.fromtimestamp(lease, UTC) if lease else None})


class SqliteConnectionStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        db.connection().executescript(_SCHEMA)

    # ------------------------------------------------------------------ connections

    def put_connection(self, conn: Connection) -> None:
        body = conn.model_copy(update={"lease_until": None}).model_dump_json()
        with self.db.transaction() as c:
            c.execute(
                "INSERT INTO connections (id, organization_id, created_at, lease_until, body) VALUES (?, ?, ?, NULL, ?)"
                " ON CONFLICT(id) DO UPDATE SET body = excluded.body",
                (conn.id, conn.organization_id, iso(conn.created_at), body))

    def get_connection(self, org_id: str, connection_id: str) -> Connection | None:
        row = self.db.connection().execute(
            "SELECT * FROM connections WHERE organization_id = ? AND id = ?", (org_id, connection_id)).fetchone()
        return _connection(row) if row else None

    def list_connections(self, org_id: str) -> list[Connection]:
        rows = self.db.connection().execute(
            "SELECT * FROM connections WHERE organization_id = ? ORDER BY created_at, id", (org_id,))
        return [_connection(r) for r in rows]

    def all_connections(self) -> list[Connection]:
        return [_connection(r) for r in self.db.connection().execute("SELECT * FROM connections ORDER BY created_at")]

    def find_for_webhook(self, connection_id: str) -> Connection | None:
        row = self.db.connection().execute("SELECT * FROM connections WHERE id = ?", (connection_id,)).fetchone()
        return _connection(row) if row else None

    def delete_connection(self, org_id: str, connection_id: str) -> bool:
        with self.db.transaction() as c:
            c.execute("DELETE FROM connection_items WHERE connection_id = ? AND organization_id = ?",
                      (connection_id, org_id))
            cur = c.execute("DELETE FROM connections WHERE organization_id = ? AND id = ?", (org_id, connection_id))
        return cur.rowcount > 0

    def claim(self, org_id: str, connection_id: str, now: datetime, until: datetime) -> Connection | None:
        with self.db.transaction() as c:
            cur = c.execute(
                "UPDATE connections SET lease_until = ? WHERE organization_id = ? AND id = ?"
                " AND (lease_until IS NULL OR lease_until <= ?)",
                (epoch(until), org_id, connection_id, epoch(now)))
            if cur.rowcount == 0:
                return None
            row = c.execute("SELECT * FROM connections WHERE id = ?", (connection_id,)).fetchone()
        return _connection(row)

    def release(self, org_id: str, connection_id: str) -> None:
        with self.db.transaction() as c:
            c.execute("UPDATE connections SET lease_until = NULL WHERE organization_id = ? AND id = ?",
                      (org_id, connection_id))

    # ------------------------------------------------------------------ items

    def put_item(self, item: ConnectionItem) -> None:
        with self.db.transaction() as c:
            c.execute(
                "INSERT INTO connection_items (connection_id, external_id, organization_id, body) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(connection_id, external_id) DO UPDATE SET body = excluded.body",
                (item.connection_id, item.external_id, item.organization_id, item.model_dump_json()))

    def get_item(self, connection_id: str, external_id: str) -> ConnectionItem | None:
        row = self.db.connection().execute(
            "SELECT body FROM connection_items WHERE connection_id = ? AND external_id = ?",
            (connection_id, external_id)).fetchone()
        return ConnectionItem.model_validate_json(row["body"]) if row else None

    def list_items(self, connection_id: str) -> list[ConnectionItem]:
        rows = self.db.connection().execute(
            "SELECT body FROM connection_items WHERE connection_id = ? ORDER BY external_id", (connection_id,))
        return [ConnectionItem.model_validate_json(r["body"]) for r in rows]

    def delete_item(self, connection_id: str, external_id: str) -> None:
        with self.db.transaction() as c:
            c.execute("DELETE FROM connection_items WHERE connection_id = ? AND external_id = ?",
                      (connection_id, external_id))

    # ------------------------------------------------------------------ OAuth flows

    def put_pending(self, pending: PendingAuthorization) -> None:
        with self.db.transaction() as c:
            c.execute("INSERT OR REPLACE INTO oauth_pending (state_hash, expires_at, body) VALUES (?, ?, ?)",
                      (pending.state_hash, epoch(pending.expires_at), pending.model_dump_json()))

    def take_pending(self, state_hash: str, now: datetime) -> PendingAuthorization | None:
        with self.db.transaction() as c:
            row = c.execute("SELECT body, expires_at FROM oauth_pending WHERE state_hash = ?",
                            (state_hash,)).fetchone()
            c.execute("DELETE FROM oauth_pending WHERE state_hash = ? OR expires_at <= ?", (state_hash, epoch(now)))
        if row is None or row["expires_at"] <= (epoch(now) or 0):
            return None
        return PendingAuthorization.model_validate_json(row["body"])
