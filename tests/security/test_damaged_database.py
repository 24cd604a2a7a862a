"""Issue 34, "Also:": a damaged database file (garbage, cut short, emptied, a page overwritten) stops
`memlane serve` and every CLI command with one clear message that says how to recover, never a
traceback, and changes nothing. An emptied file is damage, never a fresh install: no new key is
made or printed (reliability row 34)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest_helpers import free_port

from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.cli import main
from memlane.domain.errors import DamagedStoreError
from memlane.local.compose import DB_FILE
from memlane.local.runtime import KEY_FILE
from memlane.services.keys import KEY_PREFIX

DAMAGE = ("garbage", "cut-short", "emptied", "page-overwritten")


def healthy_database(data: Path) -> Path:
    """A data directory's database with something in it, closed cleanly (no write-ahead log left)."""
    db = SqliteDatabase(data / DB_FILE)
    with db.transaction() as conn:
        conn.executemany("INSERT INTO blobs (key, data) VALUES (?, ?)", [(f"k{i}", os.urandom(2000)) for i in range(200)])
    db.close()
    assert not (data / f"{DB_FILE}-wal").exists()
    return data / DB_FILE


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(hashlib.sha256(b"x").digest() * 4000)
    elif how == "cut-short":
        path.write_bytes(data[: len(data) // 2])
    elif how == "emptied":
        path.write_bytes(b"")
    else:  # the first page's table of tables, past its 100-byte header
        path.write_bytes(data[:100] + hashlib.sha256(b"y").digest() * 100 + data[3300:])


@pytest.fixture(params=DAMAGE)
def damaged(request, tmp_path) -> tuple[Path, bytes]:
    data = tmp_path / "data"
    path = healthy_database(data)
    damage(path, request.param)
    return data, path.read_bytes()


def assert_untouched(data: Path, before: bytes) -> None:
    assert (data / DB_FILE).read_bytes() == before
    assert sorted(p.name for p in data.iterdir()) == [DB_FILE]  # no key file, log or half-built copy


def test_opening_a_damaged_database_says_how_to_recover_and_changes_nothing(damaged) -> None:
    data, before = damaged
    with pytest.raises(DamagedStoreError) as caught:
        SqliteDatabase(data / DB_FILE)
    message = caught.value.message
    assert f"the database {data / DB_FILE} is damaged" in message
    assert "from a backup" in message and "new data directory" in message and "memlane import" in message
    assert_untouched(data, before)


def test_a_cli_command_on_a_damaged_database_prints_the_message_not_a_traceback(damaged, capsys) -> None:
    data, before = damaged
    assert main(["--data-dir", str(data), "keys", "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlane: the database") and "is damaged" in err and "Traceback" not in err
    assert_untouched(data, before)


@pytest.mark.parametrize("how", ["garbage", "emptied"])
def test_serve_on_a_damaged_database_stops_with_the_message_and_prints_no_key(tmp_path, how) -> None:
    data = tmp_path / "data"
    path = healthy_database(data)
    damage(path, how)
    before = path.read_bytes()
    env = {**os.environ, "MEMLANE_DATA_DIR": str(data)}
    env.pop("MEMLANE_API_URL", None)
    done = subprocess.run([sys.executable, "-m", "memlane.cli", "serve", "--port", str(free_port())],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "is damaged" in done.stderr and "Traceback" not in done.stderr
    assert KEY_PREFIX not in done.stdout + done.stderr and not (data / KEY_FILE).exists()
    assert_untouched(data, before)


def test_a_new_data_directory_is_created_whole_even_by_two_starts_at_once(tmp_path) -> None:
    # Given no database yet, When two starts create it at the same moment
    path = tmp_path / "data" / DB_FILE
    opened: list[SqliteDatabase] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(SqliteDatabase(path))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then both open the one database, complete, and no half-built copy is left beside it
    assert errors == [] and len(opened) == 2
    opened[0].set_meta("written-by", "first")
    assert opened[1].get_meta("written-by") == "first" and opened[1].get_meta("schema_version") == "1"
    for db in opened:
        db.close()
    assert sorted(p.name for p in path.parent.iterdir()) == [DB_FILE]
