"""Where the vector graphs of a data directory that never had them (the first start after the
upgrade) get built: a one-shot CLI command adds the stored vectors to them in large batches as it
reads them, and says so on stderr, then saves them for every later command; `memlane mcp`, long-lived like `memlane
serve`, loads the index beside its handshake and builds the graphs in the background while its
searches stay exact."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from fakes import HashEmbedder
from local_data import save_memories

import memlane.cli.common as common
from memlane.adapters.local import search_index, search_legs, vector_ann
from memlane.adapters.local.search_index import ANN_DIR, SqliteSearchIndex
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.cli import main
from memlane.config import Settings
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.local.mcp import local_backend
from memlane.mcp.tools import MemlaneTools
from memlane.ports import IndexedChunk, SearchScope

pytestmark = pytest.mark.skipif(not vector_ann.available(), reason="usearch is not installed")

DIM = 16
NOW = datetime(2026, 11, 1, tzinfo=UTC)
FACTS = (
    "The harbour ferry leaves at nine every morning.",
    "Invoices are approved by the finance lead on Thursdays.",
    "The staging database is restored from backup every Sunday night.",
    "Our on-call rotation changes hands at noon on Mondays.",
    "The office wifi password rotates on the first of each month.",
    "Release notes are drafted by whoever merged the last feature.",
)


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _rows(project: str, n: int, seed: int) -> list[IndexedChunk]:
    out = []
    for i, v in enumerate(_vectors(n, seed)):
        c = Chunk(id=chunk_id_for(f"{project}-doc", i), document_id=f"{project}-doc", organization_id="o",
                  project_id=project, content=f"row {i}", chunk_index=i, chunk_count=n, start_offset=0,
                  end_offset=0, title=project, content_type=ContentType.TEXT, created_at=NOW)
        out.append(IndexedChunk(c, v.tolist()))
    return out


def test_a_first_search_without_saved_graphs_builds_them_in_one_go_and_says_so(tmp_path, monkeypatch):
    # Given rows in two projects stored without graphs, read back a few rows at a time
    monkeypatch.setattr(search_legs, "GATHER_AT_MOST", 0)
    monkeypatch.setattr(search_index, "SYNC_BATCH", 4)
    writer = SqliteSearchIndex(SqliteDatabase(tmp_path / "m.sqlite3"), DIM, ann_at=10**9)
    writer.upsert("test/16", _rows("p", 40, 1))
    writer.upsert("test/16", _rows("q", 12, 2))
    exact = writer.search(SearchScope("o", ("p",), now=NOW), "", _vectors(1, 9)[0].tolist(), 10).vector
    # When a one-shot process searches it first
    index = SqliteSearchIndex(SqliteDatabase(tmp_path / "m.sqlite3"), DIM, ann_at=10)
    said: list[str] = []
    index.notice = said.append
    calls: list[int] = []
    real = vector_ann.Partitions.upsert

    def upsert(self, org_id, project_id, keys, vectors):
        calls.append(len(keys))
        return real(self, org_id, project_id, keys, vectors)

    monkeypatch.setattr(vector_ann.Partitions, "upsert", upsert)

    def no_matrix(self, m):
        raise AssertionError("the float32 matrix was loaded to build the graphs")

    monkeypatch.setattr(SqliteSearchIndex, "_build_ann_from_matrix", no_matrix)
    got = index.search(SearchScope("o", ("p",), now=NOW), "", _vectors(1, 9)[0].tolist(), 10).vector
    # Then each partition's graph got its rows in one batch (up to BUILD_BATCH rows), not four rows at a
    # time as they were read, and without a float32 matrix of every row
    assert sorted(calls) == [12, 40]
    # and it said what it was doing, and when it was done
    assert len(said) == 2 and "building the vector index of 52 chunks" in said[0]
    assert said[1].startswith("built the vector index in")
    # and answers as exact search does
    assert [(c.chunk_id, round(c.score, 5)) for c in got] == [(c.chunk_id, round(c.score, 5)) for c in exact]


@pytest.fixture
def data_dir(cli_data_dir, monkeypatch) -> Path:
    real = common.local_runtime

    def runtime(args, **options):
        options.setdefault("embedder", HashEmbedder())
        return real(args, **options)

    monkeypatch.setattr(common, "local_runtime", runtime)
    return cli_data_dir


def test_the_cli_builds_missing_graphs_once_and_says_so_on_stderr(data_dir, monkeypatch, capsys):
    # Given memories saved by a memlane from before the graphs (none saved)
    monkeypatch.setattr(search_index, "ANN_AT", 10**9)
    for fact in FACTS:
        assert main(["remember", fact]) == 0
    assert not (data_dir / ANN_DIR / vector_ann.MANIFEST).exists()
    capsys.readouterr()
    # When the first recall runs with the graphs in use at this size
    monkeypatch.setattr(search_index, "ANN_AT", 3)
    assert main(["recall", "when does the ferry leave"]) == 0
    first = capsys.readouterr()
    # Then it says on stderr that it builds them (once), answers, and saves them for later commands
    assert "memlane: building the vector index of 6 chunks (once" in first.err
    assert "harbour ferry" in first.out
    assert (data_dir / ANN_DIR / vector_ann.MANIFEST).exists()
    # and the next command loads them without a word
    assert main(["recall", "when does the ferry leave"]) == 0
    second = capsys.readouterr()
    assert "vector index" not in second.err and "harbour ferry" in second.out


def test_mcp_loads_the_index_at_start_and_builds_missing_graphs_in_the_background(tmp_path, monkeypatch):
    # Given a data directory with memories and no graphs
    data = tmp_path / "data"
    monkeypatch.setattr(search_index, "ANN_AT", 10**9)
    save_memories(data, FACTS)
    # When `memlane mcp` starts on it with the graphs in use at this size
    monkeypatch.setattr(search_index, "ANN_AT", 3)
    started: list[tuple[SqliteSearchIndex, threading.Thread]] = []
    built_in_background: list[bool] = []
    real_warm, real_build = SqliteSearchIndex.warm_in_background, SqliteSearchIndex._start_build

    def warm_in_background(self):
        thread = real_warm(self)
        started.append((self, thread))
        return thread

    def start_build(self, m, seq):
        built_in_background.append(True)
        return real_build(self, m, seq)

    monkeypatch.setattr(SqliteSearchIndex, "warm_in_background", warm_in_background)
    monkeypatch.setattr(SqliteSearchIndex, "_start_build", start_build)
    backend = local_backend(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False)
    try:
        # Then the index loads at start, in a thread, without waiting for a tool call
        (index, thread), = started
        thread.join(30)
        assert not thread.is_alive() and index._matrix.rows == len(FACTS)
        # and the graphs were built by the background build, not inside a search
        assert index.wait_for_graphs(30) and built_in_background == [True]
        assert index._matrix.ann is not None and len(index._matrix.ann) == len(FACTS)
        # and recall answers through them
        out = MemlaneTools(backend).call("recall", {"query": "when does the ferry leave"})
        assert "harbour ferry" in str(out.structured)
    finally:
        backend.close()
