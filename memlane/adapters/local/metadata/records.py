"""What deletions leave on SQLite, never the content (memlane.ports.DeletionRecordStore):
deletion receipts and the log of forgotten documents."""

from __future__ import annotations

from datetime import datetime

from memlane.adapters.local.metadata.base import SqliteTables
from memlane.adapters.local.sqlite_db import iso
from memlane.domain.models import Document


class SqliteDeletionRecordStore(SqliteTables):
    """DeletionRecordStore on SQLite."""

    def record_forgotten(self, doc: Document, when: datetime, reason: str) -> None:
        """What was forgotten, when and why — never the content."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO forgotten (document_id, organization_id, project_id, forgotten_at, reason)"
                " VALUES (?,?,?,?,?)",
                (doc.id, doc.organization_id, doc.project_id, iso(when), reason),
            )

    def put_receipt(self, org_id: str, receipt_id: str, body: str, when: datetime) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO deletion_receipts (id, organization_id, created_at, body) VALUES (?,?,?,?)",
                (receipt_id, org_id, iso(when), body),
            )

    def get_receipt(self, org_id: str, receipt_id: str) -> str | None:
        row = self.db.connection().execute(
            "SELECT body FROM deletion_receipts WHERE organization_id = ? AND id = ?", (org_id, receipt_id)
        ).fetchone()
        return row["body"] if row else None

    def list_forgotten(self, org_id: str, limit: int | None = None) -> list[dict]:
        """Oldest first; with `limit`, the newest `limit` records (still oldest first)."""
        sql = ("SELECT document_id, project_id, forgotten_at, reason FROM forgotten WHERE organization_id = ?"
               " ORDER BY forgotten_at DESC, rowid DESC")
        args: list[object] = [org_id]
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        rows = self.db.connection().execute(sql, args).fetchall()
        return [dict(r) for r in reversed(rows)]
