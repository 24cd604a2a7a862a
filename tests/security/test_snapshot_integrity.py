"""Issue 34, finding 14: the saved vector index (the HNSW graphs and the search projection in
`search-ann/`) is checked when it is loaded: each file's checksum, the manifests' own, the
organization and project codes, and the counts against each other and against SQLite. A snapshot
that fails is discarded and rebuilt from SQLite, with a warning in the log and a `memlane doctor`
line, so recall never answers from a partial index (it returned 4 of 41 memories, silently).
Reliability row 34."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fakes import HashEmbedder

from memlane.adapters.local import search_index, search_legs, vector_ann
from memlane.adapters.local.snapshot_checks import file_crc, sealed
from memlane.config import Settings
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.local.doctor import examine
from memlane.local.runtime import LocalRuntime
from memlane.recall.service import recall
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory

pytestmark = pytest.mark.skipif(not vector_ann.available(), reason="usearch is not installed")

MEMORIES = 41


@pytest.fixture(autouse=True)
def through_the_graphs(monkeypatch) -> None:
    monkeypatch.setattr(search_index, "ANN_AT", 1)  # the graphs and their snapshot from the first row
    monkeypatch.setattr(search_legs, "GATHER_AT_MOST", 0)  # every scope searched through the graphs


def runtime(data: Path) -> LocalRuntime:
    return LocalRuntime(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False)


def found(rt: LocalRuntime, who: Principal) -> set[str]:
    """What recall returns, searched now (not the recall cache's answer from before the restart)."""
    out = recall(replace(rt.services, cache=None), who, RecallIn(query="locker code", limit=100))
    return {r.document_id for r in out.results}


@pytest.fixture
def saved(tmp_path) -> Iterator[tuple[Path, Principal, set[str]]]:
    """41 memories of one organization among another's, recalled (the graphs built) and stopped
    (the snapshot saved)."""
    data = tmp_path / "data"
    with runtime(data) as rt:
        acme, _ = ensure_organization(rt.stack.metadata, "acme")
        other, _ = ensure_organization(rt.stack.metadata, "other")
        who = Principal(organization_id=acme.id, key_id="k")
        ids = {save_memory(rt.services, who, MemoryIn(content=f"Locker {i} opens with code {i:04d}.")).id
               for i in range(MEMORIES)}
        theirs = Principal(organization_id=other.id, key_id="k2")
        for i in range(7):
            save_memory(rt.services, theirs, MemoryIn(content=f"Their locker {i} has code {i:04d}."))
        assert found(rt, who) == ids and rt.stack.index._matrix.ann is not None
    assert (data / search_index.ANN_DIR / "projection.json").exists()
    yield data, who, ids


def _projection_file(ann: Path, name: str) -> Path:
    return ann / json.loads((ann / "projection.json").read_text())["files"][name]


def swap_organization_codes(ann: Path) -> None:
    """Rewrite the organization column so most rows name the other organization (a valid array)."""
    path = _projection_file(ann, "org")
    org = np.load(path)
    np.save(path.open("wb"), np.where(org == org[0], org[-1], org[0]).astype(org.dtype))


def swap_manifest_codes(ann: Path) -> None:
    manifest = json.loads((ann / "projection.json").read_text())
    orgs = [i for i, c in enumerate(manifest["codes"]) if c.startswith("org:")]
    manifest["codes"][orgs[0]], manifest["codes"][orgs[1]] = manifest["codes"][orgs[1]], manifest["codes"][orgs[0]]
    (ann / "projection.json").write_text(json.dumps(manifest))


def flip_graph_bytes(ann: Path) -> None:
    graph = max(ann.glob("*.usearch"), key=lambda p: p.stat().st_size)
    data = bytearray(graph.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0xFF
    graph.write_bytes(bytes(data))


def drop_partition_rows(ann: Path) -> None:
    """The graphs' manifest edited to claim fewer rows in a partition (its files untouched)."""
    manifest = json.loads((ann / vector_ann.MANIFEST).read_text())
    manifest["partitions"][0]["count"] -= 1
    (ann / vector_ann.MANIFEST).write_text(json.dumps(manifest))


def swap_organization_codes_and_reseal(ann: Path) -> None:
    """The same damage with every checksum recomputed, as a tool that rewrote the files would: only
    the comparison with SQLite and with the graphs can tell."""
    swap_organization_codes(ann)
    manifest = json.loads((ann / "projection.json").read_text())
    manifest["crc32"] = {name: file_crc(ann / name) for name in manifest["files"].values()}
    (ann / "projection.json").write_text(json.dumps(sealed(manifest)))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "organization codes": swap_organization_codes,
    "manifest codes": swap_manifest_codes,
    "graph bytes": flip_graph_bytes,
    "partition counts": drop_partition_rows,
    "organization codes, checksums recomputed": swap_organization_codes_and_reseal,
}


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_snapshot_is_rebuilt_from_sqlite_and_recall_finds_every_memory(saved, how, caplog) -> None:
    data, who, ids = saved
    # Given the snapshot damaged while memlane was stopped
    DAMAGE[how](data / search_index.ANN_DIR)
    # When memlane starts again and recalls
    with caplog.at_level(logging.WARNING, logger="memlane"), runtime(data) as rt:
        got = found(rt, who)
        # Then every memory is found, through graphs rebuilt from SQLite
        assert got == ids
        assert rt.stack.index._matrix.ann is not None
        # and the log says what was found and done
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert any("damaged" in w and "rebuilt from SQLite" in w for w in warnings), warnings
        # and `memlane doctor` has a line for it
        report = examine(rt.stack)
        line = report.as_dict()["search_snapshot"]
        assert line.startswith("rebuilt from SQLite") and "damaged" in line, line


def test_doctor_reports_a_damaged_snapshot_before_any_start_and_repair_discards_it(saved) -> None:
    data, who, ids = saved
    swap_organization_codes(data / search_index.ANN_DIR)
    with runtime(data) as rt:
        report = examine(rt.stack)  # the doctor does not load the index: it reads the files
        assert report.as_dict()["search_snapshot"].startswith("damaged") and report.total >= 1
        fixed = examine(rt.stack, repair=True)
        assert fixed.repaired and examine(rt.stack).as_dict()["search_snapshot"] == "none"
        assert found(rt, who) == ids


def test_an_intact_snapshot_is_loaded_not_rebuilt(saved, caplog) -> None:
    data, who, ids = saved
    with caplog.at_level(logging.INFO, logger="memlane"), runtime(data) as rt:
        assert found(rt, who) == ids
        assert examine(rt.stack).as_dict()["search_snapshot"] == "ok"
    messages = [r.getMessage() for r in caplog.records]
    assert any("mapped the saved search projection" in m for m in messages), messages
    assert not any("damaged" in m for m in messages), messages
