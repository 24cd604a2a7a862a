"""What the saved search projection (memlane.adapters.local.search_snapshot) holds at a million
chunks without costing memory: the postings' frequencies in float16 where that is exact (the same
scores to the last bit), and a snapshot saved by an older memlane converted at load, or read as it
is where the directory cannot be written."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memlane.adapters.local import bm25, search_legs, search_snapshot, vector_ann
from memlane.adapters.local.search_index import ANN_DIR, SqliteSearchIndex
from memlane.adapters.local.search_projection import ChunkIds, RowSlots
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.ports import IndexedChunk, SearchScope

pytestmark = pytest.mark.skipif(not vector_ann.available(), reason="usearch is not installed")

DIM = 16
NOW = datetime(2026, 11, 1, tzinfo=UTC)
EMB = "test/random/16"
WORDS = ("kestrel", "falcon", "meadow", "river", "lantern", "copper", "orbit", "ledger", "beacon", "willow")


@pytest.fixture(autouse=True)
def through_the_graphs(monkeypatch):
    monkeypatch.setattr(search_legs, "GATHER_AT_MOST", 0)


def vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def items(doc: str, n: int, seed: int) -> list[IndexedChunk]:
    rng = np.random.default_rng(seed)
    out = []
    for i, v in enumerate(vectors(n, seed)):
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 12))))
        c = Chunk(
            id=chunk_id_for(doc, i), document_id=doc, organization_id="o", project_id="p",
            content=f"{words} {words.split()[0]}", chunk_index=i, chunk_count=n, start_offset=0, end_offset=0,
            title=f"{doc} {WORDS[i % len(WORDS)]}", content_type=ContentType.TEXT, created_at=NOW,
        )
        out.append(IndexedChunk(c, v.tolist(), context=" ".join(rng.choice(WORDS, size=3))))
    return out


def open_index(path: Path, ann_at: int = 1, context_weight: float = bm25.CONTEXT_WEIGHT) -> SqliteSearchIndex:
    return SqliteSearchIndex(SqliteDatabase(path / "m.sqlite3"), DIM, context_weight, ann_at=ann_at)


def filled(path: Path, context_weight: float = bm25.CONTEXT_WEIGHT) -> SqliteSearchIndex:
    idx = open_index(path, context_weight=context_weight)
    for d in range(12):
        idx.upsert(EMB, items(f"doc{d}", 8, d))
    idx.warm()
    idx.save()
    return idx


def answers(idx: SqliteSearchIndex) -> list:
    """Both legs for a few queries, scores exact (no rounding: the floats must be the same)."""
    scope = SearchScope(organization_id="o", project_ids=("p",), now=NOW)
    out = []
    for d, text in enumerate(("kestrel river", "lantern copper beacon", "willow doc3 orbit", "meadow")):
        legs = idx.search(scope, text, vectors(1, 100 + d)[0].tolist(), 200)
        out.append((sorted((c.score, c.chunk_id) for c in legs.text), sorted((c.score, c.chunk_id) for c in legs.vector)))
    return out


@pytest.mark.parametrize(
    ("weight", "hits", "narrow"),
    [(0.5, 40, True), (0.25, 40, True), (0.3, 40, False), (0.5, 3_000, False)],
    ids=["default context weight", "quarter weight", "weight 0.3", "a term hit 3000 times in a row"],
)
def test_postings_hold_float16_frequencies_only_where_the_scores_stay_the_same_floats(weight, hits, narrow):
    # Given the weighted hit counts of postings (title 2, headings 1.5, body 1, context `weight`)
    rng = np.random.default_rng(7)
    n = 5_000
    tf = rng.integers(0, hits, size=(n, 4)).astype(np.float32)
    f = (2.0 * tf[:, 0] + 1.5 * tf[:, 1] + tf[:, 2] + weight * tf[:, 3]).astype(np.float32)
    keys = rng.integers(0, 50, size=n).astype(np.int64)
    rows = rng.permutation(n).astype(np.int32)
    # When they are folded into the postings, and into postings forced to float32
    postings = bm25.Postings()
    postings.add(keys, rows, f)
    postings.fold(np.ones(n, dtype=bool))
    wide = bm25.Postings()
    wide.add(keys, rows, f)
    wide.fold(np.ones(n, dtype=bool))
    wide.freq = wide.freq.astype(np.float32)
    # Then float16 is used exactly when it holds every value
    assert postings.freq.dtype == (np.float16 if narrow else np.float32)
    # and every score is the same float either way
    doclen = rng.integers(1, 200, size=n).astype(np.float32)
    every = np.ones(n, dtype=bool)
    stats = bm25.ScopeStats(every, n, float(doclen.sum()))
    for query in ([1, 2, 3], [7], [4, 4, 9, 11, 30]):
        got = bm25.score_rows(postings, query, stats, every, doclen, n)
        want = bm25.score_rows(wide, query, stats, every, doclen, n)
        assert got is not None and want is not None
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_a_saved_projection_maps_float16_frequencies_and_answers_as_a_rebuild_does(tmp_path):
    filled(tmp_path)
    second = open_index(tmp_path)
    m = second._sync()
    assert isinstance(m.postings.freq.base, np.memmap) and m.postings.freq.dtype == np.float16
    assert _heap_free(m)
    rebuilt = open_index(tmp_path, ann_at=10**9)
    rebuilt.warm()  # folds what it read into the sorted postings
    assert rebuilt._matrix.postings.freq.dtype == np.float16
    assert answers(second) == answers(rebuilt)


def _as_format(directory: Path, version: int) -> None:
    """What memlane saved before: format 3, chunk ids in a text file; format 2, float32
    frequencies as well."""
    manifest = json.loads((directory / "projection.json").read_text())
    if version == 2:
        path = directory / manifest["files"]["postings.freq"]
        np.save(path, np.load(path).astype(np.float32))
    ids = directory / manifest["files"]["chunk_ids"]
    text = ids.with_suffix(".txt")
    text.write_text("\n".join(i.decode() for i in np.load(ids)))
    ids.unlink()
    manifest["files"]["chunk_ids"] = text.name
    manifest["format"] = version
    (directory / "projection.json").write_text(json.dumps(manifest))


def _heap_free(m) -> bool:
    """The chunk ids and the rowid → slot map are arrays (the ids mapped), not a Python object per row."""
    return isinstance(m.chunk_ids.ids.base, np.memmap) and isinstance(m.position.table, np.ndarray)


@pytest.mark.parametrize("version", [2, 3])
def test_a_snapshot_from_an_older_memlane_is_converted_at_load(tmp_path, version):
    # Given a snapshot saved with float32 frequencies (format 2) or chunk ids as text (2 and 3)
    filled(tmp_path)
    directory = tmp_path / ANN_DIR
    _as_format(directory, version)
    # When a process opens the directory
    second = open_index(tmp_path)
    m = second._sync()
    # Then it mapped the converted snapshot (not a rebuild from SQLite), saved as the new format
    assert isinstance(m.postings.freq.base, np.memmap) and m.postings.freq.dtype == np.float16
    manifest = json.loads((directory / "projection.json").read_text())
    assert manifest["format"] == search_snapshot.FORMAT
    assert len(list(directory.glob("p-postings-freq-*"))) == 1  # the float32 file is gone
    assert [f.suffix for f in directory.glob("p-chunk_ids-*")] == [".npy"] and _heap_free(m)
    # and both legs answer as a rebuild from SQLite does, to the last bit
    assert answers(second) == answers(open_index(tmp_path, ann_at=10**9))


def test_a_snapshot_from_before_float16_in_a_directory_that_cannot_be_written_is_read_as_it_is(
    tmp_path, monkeypatch
):
    filled(tmp_path)
    directory = tmp_path / ANN_DIR
    _as_format(directory, 2)

    def read_only(source, target):
        raise PermissionError(13, "Read-only file system", str(target))

    monkeypatch.setattr(search_snapshot, "_narrowed_copy", read_only)
    second = open_index(tmp_path)
    m = second._sync()
    assert isinstance(m.postings.freq.base, np.memmap) and m.postings.freq.dtype == np.float32
    assert isinstance(m.postings.rows.base, np.memmap)  # mapped, not rebuilt from SQLite
    assert json.loads((directory / "projection.json").read_text())["format"] == 2
    assert answers(second) == answers(open_index(tmp_path, ann_at=10**9))


def test_a_context_weight_without_exact_float16_keeps_float32_through_a_restart(tmp_path):
    filled(tmp_path, context_weight=0.3)
    second = open_index(tmp_path, context_weight=0.3)
    m = second._sync()
    assert isinstance(m.postings.freq.base, np.memmap) and m.postings.freq.dtype == np.float32
    assert answers(second) == answers(open_index(tmp_path, ann_at=10**9, context_weight=0.3))


def test_chunk_ids_longer_than_a_uuid_widen_the_array_and_read_back_whole():
    ids = ChunkIds(4)
    ids.set([0, 1], ["a" * 36, "b"])
    ids.set([2], ["c" * 80 + "é"])
    assert [ids[i] for i in range(3)] == ["a" * 36, "b", "c" * 80 + "é"]
    ids.keep(np.asarray([0, 2]), 3)
    assert [ids[i] for i in range(3)] == ["a" * 36, "c" * 80 + "é", ""]


def test_row_slots_follow_inserts_removals_and_a_compaction():
    slots = RowSlots()
    slots.set_many(np.asarray([5, 3000, 7]), np.asarray([0, 1, 2]))
    assert slots.get(3000) == 1 and slots.get(6) is None and slots.get(10**9) is None
    assert slots.pop(5) == 0 and slots.pop(5) is None
    assert slots.slots(np.asarray([7, 5, 3000, -1, 10**12])).tolist() == [2, -1, 1, -1, -1]
    slots.remap(np.asarray([-1, 0, 1]))  # slot 0 died; 1 and 2 move down
    assert slots.slots(np.asarray([3000, 7])).tolist() == [0, 1] and len(slots) == 2
