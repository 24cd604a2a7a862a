"""Closing a data directory while its search index loads in the background (`memlane mcp` whose
client hangs up at once, a test's teardown): the load stops at its next batch and the close waits
for it, so no thread reads from a SQLite connection being closed under it. Before, the close could
run beside the load's first read, and CPython's sqlite3 crashed the whole process (a segfault in
CI), not only that thread. The database itself, closed by its owner, closes no connection that a
still-running thread holds (one that overran its stop's timeout)."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from fakes import HashEmbedder
from local_data import save_memories

from memlane.adapters.local import search_index, vector_ann
from memlane.adapters.local.search_index import IndexClosing, SqliteSearchIndex
from memlane.adapters.local.search_projection import Projection
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.config import Settings
from memlane.local.mcp import local_backend
from memlane.local.runtime import LocalRuntime
from memlane.mcp.tools import MemlaneTools

FACTS = [f"Fact number {i}: the courier collects parcel {i} from dock {i % 7} on weekdays." for i in range(40)]


@pytest.fixture
def slow_load(monkeypatch):
    """Loads read one row per batch, each batch slowed a little; `started` is set by the first."""
    monkeypatch.setattr(search_index, "SYNC_BATCH", 1)
    started, batches = threading.Event(), []
    real_apply = Projection.apply

    def apply(self, rows, terms):
        batches.append(threading.current_thread().name)
        started.set()
        threading.Event().wait(0.02)
        return real_apply(self, rows, terms)

    monkeypatch.setattr(Projection, "apply", apply)
    return started, batches


def test_closing_while_the_index_loads_stops_the_load_and_waits_for_it(tmp_path, slow_load, monkeypatch):
    # Given a data directory with 40 saved facts, and loads that take a while
    save_memories(tmp_path, FACTS)
    started, batches = slow_load
    warms: list[threading.Thread] = []
    real_warm = SqliteSearchIndex.warm_in_background

    def warm_in_background(self):
        warms.append(real_warm(self))
        return warms[-1]

    monkeypatch.setattr(SqliteSearchIndex, "warm_in_background", warm_in_background)
    # When `memlane mcp` opens it and the client hangs up while the index is still loading
    backend = local_backend(Settings(data_dir=tmp_path), embedder=HashEmbedder(), docsets=False)
    assert started.wait(10)
    backend.close()
    # Then the close returned only after the load had stopped, well before its 40 rows
    (warm,) = warms
    assert not warm.is_alive()
    loaded = [name for name in batches if name == "memlane-warm"]
    assert 0 < len(loaded) < len(FACTS)
    # and nothing stored was lost: the next open loads every fact and recall finds them
    backend = local_backend(Settings(data_dir=tmp_path), embedder=HashEmbedder(), docsets=False)
    try:
        out = MemlaneTools(backend).call("recall", {"query": "courier parcel 17 dock"})
        assert "parcel 17 " in str(out.structured)
    finally:
        backend.close()


def test_an_index_asked_to_catch_up_after_it_closed_refuses_instead_of_reading(tmp_path):
    # Given a runtime's index that was closed with it (its database closed after it)
    with LocalRuntime(Settings(data_dir=tmp_path), embedder=HashEmbedder(), docsets=False) as rt:
        index = rt.stack.index
        assert index.warm() == 0
    # When anything asks it to catch up, Then it says it is closing rather than touch the database
    with pytest.raises(IndexClosing, match="closing"):
        index.warm()


@pytest.mark.skipif(not vector_ann.available(), reason="usearch is not installed")
def test_closing_during_a_background_graph_build_stops_it_and_the_next_start_builds_again(tmp_path, monkeypatch):
    # Given 40 saved facts, graphs used from 3 rows, and a build that adds one row at a time, slowly
    save_memories(tmp_path, FACTS)
    monkeypatch.setattr(search_index, "ANN_AT", 3)
    monkeypatch.setattr(search_index, "BUILD_BATCH", 1)
    building, added = threading.Event(), []
    real_upsert = vector_ann.Partitions.upsert

    def upsert(self, org_id, project_id, keys, vectors):
        if threading.current_thread().name == "memlane-graphs":
            added.append(len(keys))
            building.set()
            threading.Event().wait(0.02)
        return real_upsert(self, org_id, project_id, keys, vectors)

    monkeypatch.setattr(vector_ann.Partitions, "upsert", upsert)
    # When `memlane serve` loads the index (searches stay exact while the graphs build) and stops
    with LocalRuntime(Settings(data_dir=tmp_path), embedder=HashEmbedder(), docsets=False) as rt:
        index = rt.stack.index
        assert index.warm(background_build=True) == len(FACTS)
        assert building.wait(10)
    # Then the close waited for the build to stop, part way, and saved no half-built graphs
    assert not index._building() and 0 < sum(added) < len(FACTS)
    assert not (tmp_path / search_index.ANN_DIR).exists() or not any((tmp_path / search_index.ANN_DIR).iterdir())
    # and the next start builds them in full and searches through them
    monkeypatch.setattr(vector_ann.Partitions, "upsert", real_upsert)
    with LocalRuntime(Settings(data_dir=tmp_path), embedder=HashEmbedder(), docsets=False) as rt:
        index = rt.stack.index
        assert index.warm(background_build=True) == len(FACTS)
        assert index.wait_for_graphs(30)
        assert index._matrix.ann is not None and len(index._matrix.ann) == len(FACTS)


def test_closing_the_database_leaves_a_still_running_thread_its_connection(tmp_path):
    # Given a thread that opened its connection and is still running, and one that has ended
    db = SqliteDatabase(tmp_path / "x.sqlite3")
    db.set_meta("k", "v")
    opened, go_on, answers = threading.Event(), threading.Event(), []

    def reader() -> None:
        conn = db.connection()
        opened.set()
        go_on.wait(10)
        answers.append(conn.execute("SELECT value FROM meta WHERE key = 'k'").fetchone()[0])

    ended = threading.Thread(target=db.connection)
    ended.start()
    ended.join()
    (ended_conn,) = [conn for thread, conn in db._all if thread is ended]
    running = threading.Thread(target=reader)
    running.start()
    assert opened.wait(10)
    mine = db.connection()
    # When the owner closes the database
    db.close()
    # Then its own connection and the ended thread's are closed
    for conn in (mine, ended_conn):
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            conn.execute("SELECT 1")
    # and the running thread goes on reading on its own connection instead of crashing the process
    go_on.set()
    running.join(10)
    assert answers == ["v"]


def test_opening_and_closing_a_data_directory_over_and_over_never_crashes(tmp_path):
    # Before the fix, 300 cycles of this crashed the interpreter in five runs out of six
    save_memories(tmp_path / "full", FACTS)
    for i in range(100):
        data_dir = tmp_path / "full" if i % 2 else tmp_path / f"empty-{i}"
        local_backend(Settings(data_dir=data_dir), embedder=HashEmbedder(), docsets=False).close()
    backend = local_backend(Settings(data_dir=tmp_path / "full"), embedder=HashEmbedder(), docsets=False)
    try:
        assert "parcel 3 " in str(MemlaneTools(backend).call("recall", {"query": "courier parcel 3 dock"}).structured)
    finally:
        backend.close()
