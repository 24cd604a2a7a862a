"""Organizations and their API keys on SQLite (memlane.ports.OrganizationStore)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from memlane.adapters.local.metadata.base import SqliteTables
from memlane.adapters.local.sqlite_db import iso, parse_iso, parse_iso_required
from memlane.domain.errors import ConflictError
from memlane.domain.models import ApiKey, Organization


def row_to_key(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        id=row["id"],
        organization_id=row["organization_id"],
        name=row["name"],
        key_hash=row["key_hash"],
        prefix=row["prefix"],
        created_at=parse_iso_required(row["created_at"]),
        revoked_at=parse_iso(row["revoked_at"]),
        rate_limit_per_minute=row["rate_limit_per_minute"],
        can_manage_keys=bool(row["can_manage_keys"]),
    )


class SqliteOrganizationStore(SqliteTables):
    """OrganizationStore on SQLite, plus `list_organizations` (the CLI, reindexing)."""

    def create_organization(self, org: Organization) -> Organization:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES (?,?,?,?,?)",
                    (org.id, org.name, org.slug, iso(org.created_at), iso(org.updated_at)),
                )
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"an organization with slug {org.slug!r} already exists") from exc
        return org

    def get_organization(self, org_id: str) -> Organization | None:
        row = self.db.connection().execute("SELECT * FROM organizations WHERE id = ?", (org_id,)).fetchone()
        return Organization(**dict(row)) if row else None

    def find_organization_by_slug(self, slug: str) -> Organization | None:
        row = self.db.connection().execute("SELECT * FROM organizations WHERE slug = ?", (slug,)).fetchone()
        return Organization(**dict(row)) if row else None

    def list_organizations(self) -> list[Organization]:
        rows = self.db.connection().execute("SELECT * FROM organizations ORDER BY created_at").fetchall()
        return [Organization(**dict(r)) for r in rows]

    def put_api_key(self, key: ApiKey) -> None:
        with self.db.transaction() as conn:
            # INSERT OR REPLACE would silently delete another key holding the same hash
            taken = conn.execute(
                "SELECT 1 FROM api_keys WHERE key_hash = ? AND id != ?", (key.key_hash, key.id)
            ).fetchone()
            if taken:
                raise ConflictError("an API key with this hash already exists")
            conn.execute(
                "INSERT OR REPLACE INTO api_keys (id, organization_id, name, key_hash, prefix, created_at,"
                " revoked_at, rate_limit_per_minute, can_manage_keys) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    key.id,
                    key.organization_id,
                    key.name,
                    key.key_hash,
                    key.prefix,
                    iso(key.created_at),
                    iso(key.revoked_at),
                    key.rate_limit_per_minute,
                    int(key.can_manage_keys),
                ),
            )

    def find_api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        row = (
            self.db.connection().execute("SELECT * FROM api_keys WHERE key_hash = ?", (key_hash,)).fetchone()
        )
        return row_to_key(row) if row else None

    def list_api_keys(self, org_id: str | None = None) -> list[ApiKey]:
        conn = self.db.connection()
        if org_id is None:
            rows = conn.execute("SELECT * FROM api_keys ORDER BY created_at").fetchall()
        else:
            rows = conn.execute(
                "SELECT * FROM api_keys WHERE organization_id = ? ORDER BY created_at", (org_id,)
            ).fetchall()
        return [row_to_key(r) for r in rows]

    def revoke_api_key(self, key_id: str, when: datetime) -> bool:
        """True when the key (by id, or by prefix for the CLI) exists. Revoking again succeeds and
        keeps the first time, as on DynamoDB (the admin function's revoke is idempotent)."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? OR prefix = ?",
                (iso(when), key_id, key_id),
            )
            return cur.rowcount > 0
