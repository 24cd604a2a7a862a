"""What the SQLite metadata store's parts share: the database, and `?` placeholders."""

from __future__ import annotations

from memlane.adapters.local.sqlite_db import SqliteDatabase


class SqliteTables:
    """A part of the metadata store on the embedded database (memlane.adapters.local.sqlite_db)."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db


def placeholders(n: int) -> str:
    return ",".join("?" * n)
