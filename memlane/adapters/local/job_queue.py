"""A durable job queue in SQLite. A claimed job carries a lease: if the worker dies, the lease
runs out and the job is claimed again, so queued work survives a crash or a restart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memlane.adapters.local.sqlite_db import SqliteDatabase, iso, parse_iso_required
from memlane.domain.models import IngestJob


class SqliteJobQueue:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def enqueue(self, job: IngestJob) -> None:
        with self.db.transaction() as conn:
            # one pending job per document: a second save of the same document is not a second job
            exists = conn.execute("SELECT 1 FROM jobs WHERE document_id = ?", (job.document_id,)).fetchone()
            if exists:
                return
            conn.execute(
                "INSERT INTO jobs (id, document_id, organization_id, attempts, not_before, lease_until,"
                " last_error, created_at) VALUES (?,?,?,?,?,NULL,?,?)",
                (
                    job.id,
                    job.document_id,
                    job.organization_id,
                    job.attempts,
                    job.not_before.timestamp(),
                    job.last_error,
                    iso(job.created_at),
                ),
            )

    def claim(self, now: datetime, lease_seconds: int) -> IngestJob | None:
        ts = now.timestamp()
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT * FROM jobs WHERE not_before <= ? AND (lease_until IS NULL OR lease_until < ?)"
                " ORDER BY not_before, created_at LIMIT 1",
                (ts, ts),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE jobs SET lease_until = ?, attempts = attempts + 1 WHERE id = ?",
                (ts + lease_seconds, row["id"]),
            )
        return IngestJob(
            id=row["id"],
            document_id=row["document_id"],
            organization_id=row["organization_id"],
            attempts=row["attempts"] + 1,
            not_before=datetime.fromtimestamp(row["not_before"], UTC),
            last_error=row["last_error"],
            created_at=parse_iso_required(row["created_at"]),
        )

    def complete(self, job_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def retry_later(self, job_id: str, error: str, not_before: datetime) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET lease_until = NULL, last_error = ?, not_before = ? WHERE id = ?",
                (error, not_before.timestamp(), job_id),
            )

    def release_leases(self) -> int:
        """On server start nothing can be in flight, so leases left by a killed worker are void."""
        with self.db.transaction() as conn:
            return conn.execute("UPDATE jobs SET lease_until = NULL WHERE lease_until IS NOT NULL").rowcount

    def pending_count(self) -> int:
        return self.db.connection().execute("SELECT COUNT(*) AS n FROM jobs").fetchone()["n"]

    def next_due(self) -> datetime | None:
        row = self.db.connection().execute("SELECT MIN(not_before) AS t FROM jobs").fetchone()
        return datetime.fromtimestamp(row["t"], UTC) if row and row["t"] is not None else None


def backoff(attempts: int, base_seconds: float = 5.0, cap_seconds: float = 600.0) -> timedelta:
    return timedelta(seconds=min(cap_seconds, base_seconds * (2 ** max(0, attempts - 1))))
