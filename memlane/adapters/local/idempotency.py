"""A Powertools idempotency persistence layer on SQLite, so `Idempotency-Key` on saves behaves
the same locally as on AWS (where Powertools' own DynamoDB layer is used)."""

from __future__ import annotations

import time

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from memlane.adapters.local.sqlite_db import SqliteDatabase

_SCHEMA = """CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, expiry INTEGER, in_progress_expiry INTEGER,
    response_data TEXT, payload_hash TEXT)"""


class SqliteIdempotencyLayer(BasePersistenceLayer):
    def __init__(self, db: SqliteDatabase) -> None:
        super().__init__()
        self.db = db
        self.db.connection().execute(_SCHEMA)

    @staticmethod
    def _record(row) -> DataRecord:
        return DataRecord(
            idempotency_key=row["key"],
            status=row["status"],
            expiry_timestamp=row["expiry"],
            in_progress_expiry_timestamp=row["in_progress_expiry"],
            response_data=row["response_data"] or "",
            payload_hash=row["payload_hash"] or "",
        )

    def _get_record(self, idempotency_key) -> DataRecord:
        row = (
            self.db.connection()
            .execute("SELECT * FROM idempotency WHERE key = ?", (idempotency_key,))
            .fetchone()
        )
        if row is None:
            raise IdempotencyItemNotFoundError
        return self._record(row)

    def _put_record(self, data_record: DataRecord) -> None:
        now = time.time()
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT * FROM idempotency WHERE key = ?", (data_record.idempotency_key,)
            ).fetchone()
            if row is not None:
                old = self._record(row)
                expired = old.expiry_timestamp is not None and old.expiry_timestamp < now
                stale = (
                    old.status == "INPROGRESS"
                    and old.in_progress_expiry_timestamp is not None
                    and old.in_progress_expiry_timestamp < now * 1000
                )
                if not (expired or stale):
                    self._validate_payload(data_payload=data_record, stored_data_record=old)
                    raise IdempotencyItemAlreadyExistsError(old_data_record=old)
            conn.execute(
                "INSERT OR REPLACE INTO idempotency (key, status, expiry, in_progress_expiry, response_data,"
                " payload_hash) VALUES (?,?,?,?,?,?)",
                (
                    data_record.idempotency_key,
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.in_progress_expiry_timestamp,
                    data_record.response_data,
                    data_record.payload_hash,
                ),
            )

    def _update_record(self, data_record: DataRecord) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE idempotency SET status = ?, expiry = ?, response_data = ?, payload_hash = ? WHERE key = ?",
                (
                    data_record.status,
                    data_record.expiry_timestamp,
                    data_record.response_data,
                    data_record.payload_hash,
                    data_record.idempotency_key,
                ),
            )

    def _delete_record(self, data_record: DataRecord) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM idempotency WHERE key = ?", (data_record.idempotency_key,))
