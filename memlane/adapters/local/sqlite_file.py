"""The database file as memlane finds it at start: created whole when there is none, checked when
there is one, before SQLite is let near it.

A new database is built under a temporary name and linked into place complete, so memlane itself
never leaves an empty or half-made `memlane.sqlite3`: a file that is there but empty, cut short or
not a database at all was damaged (a copy that stopped, a full disk, a restore gone wrong), and is
reported as such with how to recover. It is never taken for a fresh install: that would print a
new key and present an empty memory as if nothing had been lost.

The checks read the file's 100-byte header (https://www.sqlite.org/fileformat.html#the_database_header):
the magic string, the page size and, where the header's page count is valid, that the file holds
that many pages. A write-ahead log beside the file holds pages not yet copied into it, so with a
non-empty log the size is not judged; SQLite reads the log, and what it cannot read is reported
the same way (`damaged`)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

from memlane.adapters.local.private_files import create_private_file
from memlane.domain.errors import DamagedStoreError

MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100


def prepare(path: Path, initialize: Callable[[sqlite3.Connection], object]) -> None:
    """Create the database at `path` with `initialize` run on it if there is none; otherwise check
    the file (DamagedStoreError when it cannot be a database as it is)."""
    if not path.exists():
        _create(path, initialize)
        return
    problem = header_problem(path)
    if problem is not None:
        raise damaged(path, problem)


def header_problem(path: Path) -> str | None:
    """What makes the file unusable as a database, from its size and header; None when nothing does."""
    size = path.stat().st_size
    wal = _wal_bytes(path)
    if size == 0:
        return None if wal else "the file is empty (0 bytes)"
    with path.open("rb") as f:
        header = f.read(HEADER_BYTES)
    if not header.startswith(MAGIC):
        return "it is not a SQLite database (its first bytes are not SQLite's)"
    if len(header) < HEADER_BYTES:
        return f"it is cut short ({size} bytes, less than a database header)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"its header names an impossible page size ({page_size})"
    pages = int.from_bytes(header[28:32], "big")
    header_valid = pages > 0 and header[24:28] == header[92:96]  # the change counter matches
    if not wal and header_valid and size < pages * page_size:
        return f"it is cut short ({size:,} bytes of the {pages * page_size:,} its header records)"
    return None


def damaged(path: Path, problem: str) -> DamagedStoreError:
    """The error for a damaged file: what is wrong, and each way back (copying out what it still
    holds only where there is something to copy)."""
    recovered = path.with_name(path.name + ".recovered")
    salvage = "" if path.stat().st_size == 0 else (
        f"or, if the sqlite3 tool still opens it, copy out what it holds (`sqlite3 {path} .recover | "
        f"sqlite3 {recovered}`), move {recovered.name} in place of {path.name} and run `memlane doctor` "
        "and `memlane reindex`; ")
    return DamagedStoreError(
        f"the database {path} is damaged: {problem}. memlane did not start on it and changed nothing. "
        "To recover, stop every memlane using this data directory, then either: put back a copy of "
        f"{path.name} from a backup; {salvage}or start a new data directory (--data-dir or MEMLANE_DATA_DIR) "
        "and `memlane import` an earlier `memlane export` into it."
    )


def _wal_bytes(path: Path) -> int:
    try:
        return path.with_name(path.name + "-wal").stat().st_size
    except FileNotFoundError:
        return 0


def _create(path: Path, initialize: Callable[[sqlite3.Connection], object]) -> None:
    """Build the database under a name of its own, then link it into place: complete, or not there.
    Two processes starting at once each build one; the first link wins, the other is dropped."""
    building = path.with_name(f".{path.name}.new-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    create_private_file(building)  # SQLite gives the file's companions its mode
    try:
        conn = sqlite3.connect(building, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            initialize(conn)
        finally:
            conn.close()  # the last connection: the log is copied in and removed
        try:
            os.link(building, path)
        except FileExistsError:
            pass  # another process linked its own first: this one is dropped
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(building, path)
    finally:
        for leftover in (building, *(building.with_name(building.name + s) for s in ("-wal", "-shm", "-journal"))):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite's error says the file is damaged (not a database, or corrupt), as opposed to
    busy, locked or read-only."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


COMPANIONS = ("-wal", "-shm")


def companions(path: Path) -> set[str]:
    """The write-ahead log and its index as they are beside the file now."""
    return {suffix for suffix in COMPANIONS if path.with_name(path.name + suffix).exists()}


def remove_new_companions(path: Path, before: set[str]) -> None:
    """Remove the log and index that opening a damaged file made (an empty log: nothing of the
    file's is in it), so refusing the file leaves the directory as it was found."""
    wal = path.with_name(path.name + "-wal")
    if "-wal" in before or (wal.exists() and wal.stat().st_size):
        return
    for suffix in set(COMPANIONS) - before:
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()
