"""The HNSW partitions of the embedded vector leg (memlane.adapters.local.vector_ann): scoped recall
against exact search, persistence and replay through the sequence number, and the faults that must
leave nothing unsearchable (a crash between the SQLite commit and the graphs' update, a corrupt or
missing file, a second process writing to the same data directory)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from numeric import assert_ranking_close

from memlane.adapters.local import search_legs, vector_ann
from memlane.adapters.local.search_index import ANN_DIR, SqliteSearchIndex
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.ports import IndexedChunk, RecallFilters, SearchScope

pytestmark = pytest.mark.skipif(not vector_ann.available(), reason="usearch is not installed")

DIM = 32
NOW = datetime(2026, 11, 1, tzinfo=UTC)
EMB = "test/random/32"


@pytest.fixture(autouse=True)
def through_the_graphs(monkeypatch):
    """Every scope is searched through the graphs, however small (the gather path is exact anyway)."""
    monkeypatch.setattr(search_legs, "GATHER_AT_MOST", 0)


def vectors(n: int, seed: int) -> np.ndarray:
    """Clustered unit vectors (real embeddings cluster; random ones are a graph's worst case)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, n // 50), DIM))
    v = centres[rng.integers(0, len(centres), n)] + 0.4 * rng.standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def items(doc: str, vecs: np.ndarray, org: str = "o", project: str = "p") -> list[IndexedChunk]:
    out = []
    for i, v in enumerate(vecs):
        c = Chunk(
            id=chunk_id_for(doc, i), document_id=doc, organization_id=org, project_id=project,
            content=f"chunk {i} of {doc}", chunk_index=i, chunk_count=len(vecs), start_offset=0, end_offset=0,
            title=doc, content_type=ContentType.TEXT, created_at=NOW,
        )
        out.append(IndexedChunk(c, v.tolist()))
    return out


def scope(*projects: str, org: str = "o") -> SearchScope:
    return SearchScope(organization_id=org, project_ids=projects, now=NOW)


def top_docs(idx: SqliteSearchIndex, q: np.ndarray, *projects: str, k: int = 10) -> list[tuple[str, int]]:
    return [(c.document_id, c.chunk_index) for c in idx.search(scope(*projects), "", q.tolist(), k).vector]


def open_index(path: Path, ann_at: int = 1) -> SqliteSearchIndex:
    return SqliteSearchIndex(SqliteDatabase(path / "m.sqlite3"), DIM, ann_at=ann_at)


def test_a_small_project_gets_its_own_top_10_from_its_partition(tmp_path):
    # Given a project holding 1 % of an organization's rows, the rest in a big project
    big, small = vectors(3_000, 1), vectors(30, 2)
    idx = open_index(tmp_path)
    exact = SqliteSearchIndex(SqliteDatabase(tmp_path / "exact.sqlite3"), DIM)  # no graphs
    for index in (idx, exact):
        index.upsert(EMB, items("big", big, project="big"))
        index.upsert(EMB, items("small", small, project="small"))
    assert idx._sync().ann is not None and exact._sync().ann is None
    # When both search the small project with queries near the big project's rows
    for q in big[:20]:
        # Then the graphs give exactly the exact search's top 10, every one of the small project
        got = top_docs(idx, q, "small")
        assert got == top_docs(exact, q, "small")
        assert len(got) == 10 and {d for d, _ in got} == {"small"}


def test_recall_at_10_of_the_graphs_against_exact_search(tmp_path):
    data = vectors(5_000, 3)
    idx = open_index(tmp_path)
    exact = SqliteSearchIndex(SqliteDatabase(tmp_path / "exact.sqlite3"), DIM)
    for index in (idx, exact):
        index.upsert(EMB, items("d", data))
    queries = vectors(50, 4)
    hits = sum(len(set(top_docs(idx, q, "p")) & set(top_docs(exact, q, "p"))) for q in queries)
    assert hits / (10 * len(queries)) >= 0.98
    # and the scores of what both return are the exact cosines (re-scored from the stored float32)
    got = idx.search(scope("p"), "", queries[0].tolist(), 10).vector
    ref = {c.chunk_id: c.score for c in exact.search(scope("p"), "", queries[0].tolist(), 10).vector}
    assert all(abs(c.score - ref[c.chunk_id]) < 1e-6 for c in got if c.chunk_id in ref)


def test_a_restart_loads_the_saved_graphs_and_replays_later_writes(tmp_path):
    # Given a process that built and saved the graphs, then kept writing without searching again
    # (its process dies between the SQLite commits and the graphs' update)
    first = open_index(tmp_path)
    first.upsert(EMB, items("old", vectors(200, 5)))
    first.upsert(EMB, items("gone", vectors(20, 6)))
    first.warm()  # builds the graphs
    first.save()
    saved = (tmp_path / ANN_DIR / vector_ann.MANIFEST).read_text()
    late = vectors(10, 7)
    first.upsert(EMB, items("late", late))
    first.delete_document("o", "gone")
    # When a new process opens the data directory
    second = open_index(tmp_path)
    m = second._sync()
    # Then it loaded the saved graphs (not a rebuild) and replayed what came after them
    assert m.ann is not None and (tmp_path / ANN_DIR / vector_ann.MANIFEST).read_text() == saved
    assert top_docs(second, late[3], "p", k=1) == [("late", 3)]
    assert "gone" not in {d for d, _ in top_docs(second, vectors(20, 6)[0], "p", k=50)}
    assert len(m.ann) == 210


def test_a_failure_while_updating_the_graphs_is_replayed_by_the_next_search(tmp_path, monkeypatch):
    idx = open_index(tmp_path)
    idx.upsert(EMB, items("a", vectors(100, 8)))
    idx.warm()
    idx.save()
    fresh = vectors(5, 9)
    idx.upsert(EMB, items("b", fresh))  # committed to SQLite
    real = vector_ann.Partitions.upsert

    def crash(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(vector_ann.Partitions, "upsert", crash)
    with pytest.raises(OSError):
        idx.search(scope("p"), "", fresh[0].tolist(), 5)
    monkeypatch.setattr(vector_ann.Partitions, "upsert", real)
    assert top_docs(idx, fresh[0], "p", k=1) == [("b", 0)]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "missing", "manifest"])
def test_a_corrupt_or_missing_graph_file_is_rebuilt_from_the_stored_vectors(tmp_path, damage):
    data = vectors(300, 10)
    idx = open_index(tmp_path)
    idx.upsert(EMB, items("d", data))
    idx.warm()
    idx.save()
    directory = tmp_path / ANN_DIR
    part = next(directory.glob("*.usearch"))
    if damage == "truncated":
        part.write_bytes(part.read_bytes()[:1000])
    elif damage == "garbage":
        part.write_bytes(b"\x00not a graph" * 500)
    elif damage == "missing":
        part.unlink()
    else:
        (directory / vector_ann.MANIFEST).write_text("{not json")
    again = open_index(tmp_path)
    assert top_docs(again, data[42], "p", k=1) == [("d", 42)]
    m = again._sync()
    assert m.ann is not None and len(m.ann) == 300


def test_the_graphs_of_a_cleared_index_are_never_loaded_again(tmp_path):
    idx = open_index(tmp_path)
    idx.upsert(EMB, items("before", vectors(50, 11)))
    idx.warm()
    idx.save()
    idx.clear()
    after = vectors(50, 12)
    idx.upsert(EMB, items("after", after))
    again = open_index(tmp_path)
    assert {d for d, _ in top_docs(again, after[0], "p", k=100)} == {"after"}


def test_a_second_process_writing_to_the_data_directory_is_caught_up(tmp_path):
    # Given this process searching through the graphs
    idx = open_index(tmp_path)
    idx.upsert(EMB, items("here", vectors(100, 13)))
    assert idx._sync().ann is not None
    # When another process (the CLI, say) writes and deletes in the same data directory
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from tests.unit.test_vector_ann import EMB, items, open_index, vectors
        from pathlib import Path
        idx = open_index(Path({str(tmp_path)!r}))
        idx.upsert(EMB, items("there", vectors(10, 14)))
        idx.delete_document("o", "here")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parents[2], timeout=120)
    # Then this process finds its rows and no longer returns the deleted ones
    assert top_docs(idx, vectors(10, 14)[4], "p", k=1) == [("there", 4)]
    assert {d for d, _ in top_docs(idx, vectors(100, 13)[0], "p", k=50)} == {"there"}


def _legs(idx: SqliteSearchIndex, text: str, q: np.ndarray) -> tuple[list, list]:
    legs = idx.search(scope("p", "q"), text, q.tolist(), 500)  # all of them: no cut among ties
    return [[c.chunk_id, c.score] for c in legs.text], [[c.chunk_id, c.score] for c in legs.vector]


@pytest.mark.numeric
def test_a_restart_maps_the_saved_projection_and_both_legs_answer_as_a_rebuild_does(tmp_path):
    # Given an index saved by one process, then changed by writes it never searched after
    first = open_index(tmp_path)
    for d in range(20):
        first.upsert(EMB, items(f"doc{d}", vectors(10, 20 + d), project="p" if d % 3 else "q"))
    first.warm()
    first.save()
    first.upsert(EMB, items("doc3", vectors(10, 99)))  # the same rows with new vectors
    first.delete_document("o", "doc4")
    first.set_superseded("o", "doc5", True)
    # When a new process opens it, and another builds everything from SQLite alone
    second = open_index(tmp_path)
    m = second._sync()
    rebuilt = open_index(tmp_path, ann_at=10**9)
    # Then the new process mapped the saved postings rather than rebuilding them
    assert isinstance(m.postings.keys.base, np.memmap)
    # and both legs give the rebuild's answers
    for text, q in (("chunk 3 of doc7", vectors(1, 27)[0]), ("doc5 chunk", vectors(1, 99)[0])):
        # ties are broken by slot order, which differs between a replayed and a rebuilt projection, and
        # the two matrices' rows sit at other places, which BLAS may sum in another order: a tolerance
        (got_text, got_vector), (want_text, want_vector) = _legs(second, text, q), _legs(rebuilt, text, q)
        assert_ranking_close(got_text, want_text, where=f"text {text}")
        assert_ranking_close(got_vector, want_vector, where=f"vector {text}")
    assert second.holdings("doc4").vector == 0
    assert second.holdings("doc3") == rebuilt.holdings("doc3") and second.holdings("doc3").vector == 20


@pytest.mark.parametrize("damage", ["postings", "chunk_ids", "manifest", "stale"])
def test_a_damaged_or_stale_saved_projection_is_rebuilt_from_sqlite(tmp_path, damage):
    first = open_index(tmp_path)
    for d in range(5):
        first.upsert(EMB, items(f"doc{d}", vectors(10, 40 + d)))
    first.warm()
    first.save()
    directory = tmp_path / ANN_DIR
    if damage == "postings":
        next(directory.glob("p-postings-rows-*")).write_bytes(b"\x93NUMPY broken")
    elif damage == "chunk_ids":
        ids = next(directory.glob("p-chunk_ids-*"))
        np.save(ids, np.load(ids)[:-1])  # one id short
    elif damage == "manifest":
        (directory / "projection.json").write_text("[]")
    else:  # the graphs saved later than the projection (a save interrupted between the two)
        manifest = json.loads((directory / "projection.json").read_text())
        manifest["seq"] -= 1
        (directory / "projection.json").write_text(json.dumps(manifest))
    second = open_index(tmp_path)
    m = second._sync()
    assert not isinstance(m.postings.keys.base, np.memmap)
    assert [c.document_id for c in second.search(scope("p"), "chunk 7 of doc2", None, 1).text] == ["doc2"]
    assert top_docs(second, vectors(10, 42)[7], "p", k=1) == [("doc2", 7)]


@pytest.mark.parametrize("saved", ["current", "before kinds"])
def test_the_kind_of_each_row_survives_a_restart_and_a_snapshot_from_before_kinds_is_rebuilt(tmp_path, saved):
    # Given facts and messages indexed and the projection saved
    first = open_index(tmp_path)
    for d in range(6):
        rows = items(f"doc{d}", vectors(4, 60 + d))
        first.upsert(EMB, [IndexedChunk(i.chunk, i.vector, kind="fact" if d % 3 == 0 else "message") for i in rows])
    first.warm()
    first.save()
    directory = tmp_path / ANN_DIR
    if saved == "before kinds":  # what a memlane from before kinds saved: format 1, no kind array
        manifest = json.loads((directory / "projection.json").read_text())
        manifest["format"] = 1
        (directory / manifest["files"].pop("kind")).unlink()
        (directory / "projection.json").write_text(json.dumps(manifest))
    # When another process opens it
    second = open_index(tmp_path)
    m = second._sync()
    assert isinstance(m.postings.keys.base, np.memmap) == (saved == "current")
    # Then the kind filter holds in both legs
    facts = SearchScope("o", ("p",), RecallFilters(kinds=("fact",)), now=NOW)
    legs = second.search(facts, "chunk", vectors(1, 63)[0].tolist(), 50)
    assert {c.document_id for c in legs.text} == {c.document_id for c in legs.vector} == {"doc0", "doc3"}


@pytest.mark.parametrize("gather", [0, 1_000], ids=["widened graph search", "scored from the graph's vectors"])
def test_a_filter_that_passes_few_rows_of_a_large_graph_still_gives_the_exact_top_k(tmp_path, monkeypatch, gather):
    # Given a graph searched through the graph (not scanned exhaustively) whose rows are mostly
    # filtered out: all but two documents are superseded
    monkeypatch.setattr(vector_ann, "EXACT_PARTITION", 10)
    monkeypatch.setattr(search_legs, "GATHER_AT_MOST", gather)
    idx = open_index(tmp_path)
    exact = SqliteSearchIndex(SqliteDatabase(tmp_path / "exact.sqlite3"), DIM)
    for index in (idx, exact):
        for d in range(30):
            index.upsert(EMB, items(f"doc{d}", vectors(10, 60 + d)))
        for d in range(2, 30):
            index.set_superseded("o", f"doc{d}", True)
    # When the vector leg asks for the top 10 near a superseded document's rows
    for q in vectors(10, 70)[:5]:
        got = top_docs(idx, q, "p")
        # Then it gets the exact top 10 of the rows that pass: both live documents' rows
        assert got == top_docs(exact, q, "p")
        assert len(got) == 10 and {d for d, _ in got} <= {"doc0", "doc1"}


def test_closing_a_stack_saves_the_graphs_it_changed_and_a_cli_that_never_searched_loads_nothing(tmp_path):
    from fakes import HashEmbedder

    from memlane.config import Settings
    from memlane.local.compose import build_local

    settings = Settings(data_dir=tmp_path / "d")
    stack = build_local(settings, embedder=HashEmbedder())
    index = SqliteSearchIndex(stack.db, HashEmbedder.dimension, ann_at=1)
    stack.index = index  # the stack's own index, routed through the graphs
    vec = np.zeros(HashEmbedder.dimension, dtype=np.float32)
    vec[0] = 1.0
    c = items("d", vectors(1, 1))[0].chunk
    index.upsert(HashEmbedder().id, [IndexedChunk(c, vec.tolist())])
    assert index._sync().ann is not None and not (tmp_path / "d" / ANN_DIR / vector_ann.MANIFEST).exists()
    stack.close()
    assert json.loads((tmp_path / "d" / ANN_DIR / vector_ann.MANIFEST).read_text())["partitions"][0]["count"] == 1
    # a process that only writes (the CLI saving a memory) never loads the projection to save it
    cli = build_local(settings, embedder=HashEmbedder())
    cli.close()
    assert cli.index._matrix.size == 0


def test_a_server_start_searches_exactly_while_the_graphs_build_in_the_background(tmp_path, monkeypatch):
    # Given a data directory whose graphs were never built (the first start after the upgrade)
    idx = open_index(tmp_path)
    exact = SqliteSearchIndex(SqliteDatabase(tmp_path / "exact.sqlite3"), DIM)  # no graphs
    old, gone, late = vectors(300, 11), vectors(20, 12), vectors(10, 13)
    for index in (idx, exact):
        index.upsert(EMB, items("old", old))
        index.upsert(EMB, items("gone", gone))
    # and a build held back until the test lets it finish
    release = __import__("threading").Event()
    upsert = vector_ann.Partitions.upsert

    def held(self, *args):
        if __import__("threading").current_thread().name == "memlane-graphs":
            assert release.wait(30)
        return upsert(self, *args)

    monkeypatch.setattr(vector_ann.Partitions, "upsert", held)
    # When the server starts
    idx.warm(background_build=True)
    # Then it answers at once, exactly, from the float32 matrix
    assert idx._sync().ann is None
    for q in old[:10]:
        assert top_docs(idx, q, "p") == top_docs(exact, q, "p")
    # and what is written or deleted during the build is searchable or gone at once
    idx.upsert(EMB, items("late", late))
    idx.delete_document("o", "gone")
    assert top_docs(idx, late[3], "p", k=1) == [("late", 3)]
    assert "gone" not in {d for d, _ in top_docs(idx, gone[0], "p", k=50)}
    # When the build finishes
    release.set()
    assert idx.wait_for_graphs(30)
    # Then searches go through the graphs, which hold every row written meanwhile and none deleted
    m = idx._sync()
    assert m.ann is not None and len(m.ann) == 310 and m.vectors.shape[1] == 0
    assert top_docs(idx, late[3], "p", k=1) == [("late", 3)]
    assert "gone" not in {d for d, _ in top_docs(idx, gone[0], "p", k=50)}
    # and they were saved: the next process maps them instead of building again
    assert (tmp_path / ANN_DIR / vector_ann.MANIFEST).exists()
    again = open_index(tmp_path)
    assert again._sync().ann is not None and len(again._sync().ann) == 310


def test_a_failed_background_build_leaves_the_searches_exact(tmp_path, monkeypatch):
    idx = open_index(tmp_path)
    data = vectors(200, 14)
    idx.upsert(EMB, items("d", data))

    def broken(self, *args):
        raise MemoryError("no room for the graphs")

    monkeypatch.setattr(vector_ann.Partitions, "upsert", broken)
    idx.warm(background_build=True)
    idx.wait_for_graphs(30)
    assert idx._sync().ann is None
    assert top_docs(idx, data[7], "p", k=1) == [("d", 7)]
