"""Approximate k-NN for the embedded default's vector leg once the index is large: an HNSW graph
(usearch) per partition — one partition per (organization, project) — keyed by the SQLite rowid of
`search_rows`, persisted beside the SQLite file with the sequence number it covers.

Why usearch: a maintained HNSW library with a manylinux wheel and no other dependency, float16 and
int8 vector storage (a million 384-dimension vectors in 768 or 384 MB instead of 1.5 GB; int8 is
the default, memlane.adapters.local.search_index.ANN_DTYPE), removal of
keys, save/restore of one file per index, and brute-force (`exact=True`) search over the same
storage, which small partitions use. hnswlib stores float32 only; faiss-cpu is a larger wheel whose
HNSW cannot remove keys.

Why partitions: an HNSW search returns the nearest rows of the whole graph, and post-filtering them
to a project that holds 1 % of the rows would leave almost nothing; a graph per project answers that
project's top k from its own rows. The remaining filters (superseded, forget-after, content types,
dates, tags) are applied to the candidates, with the search widened until k of them pass (or, for a
scope of a few thousand rows, an exact scan of exactly those rows).

The graph is a cache of SQLite: the durable copy of every vector stays in `search_rows`, candidates
are re-scored exactly against it (so a row deleted from SQLite can never be returned, whatever the
graph still holds), and a missing, stale or corrupt file is rebuilt or caught up from SQLite through
the sequence number, as the in-memory projection is.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from memlane.adapters.local.private_files import create_private_file, lock_file, private_dir, write_private
from memlane.adapters.local.snapshot_checks import (
    SnapshotDamaged,
    check_file,
    check_manifest,
    file_crc,
    sealed,
)

log = logging.getLogger(__name__)

# onnxruntime (the embedder) crashes in its import, inside libstdc++, when usearch's extension was
# loaded before it (usearch 2.26.6 with onnxruntime 1.32 from PyPI; the other order works): where
# both are installed it is loaded first.
with contextlib.suppress(ImportError):
    import onnxruntime  # noqa: F401
try:
    from usearch.index import Index
except ImportError:  # the local extra brings it; without it the vector leg stays exact
    Index = None  # type: ignore[assignment,misc]

MANIFEST = "manifest.json"
# 2: a checksum of each partition file and of the manifest (memlane.adapters.local.snapshot_checks).
# A format-1 manifest is loaded unverified and saved again as format 2 by the process that loaded it.
FORMAT = 2
READABLE = (1, 2)
# HNSW parameters: 16 links per node (32 on the base layer), 128 candidates explored per insert and
# 256 per search (at least the number of results asked for). At a million clustered vectors the
# vector leg's recall@10 against exact search is 0.974 exploring 128, 0.994 exploring 192 or 256,
# at the same p50 (2.6-2.9 ms; BENCHMARKS.md, "Scale"). A saved graph takes the current value
# when loaded.
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 256
# Partitions up to this many rows are searched exhaustively (usearch's SIMD scan of its quantised
# vectors), as fast as the graph there; the candidates are then re-scored exactly.
EXACT_PARTITION = 20_000


def available() -> bool:
    return Index is not None


def partition_name(org_id: str, project_id: str) -> str:
    return hashlib.blake2b(f"{org_id}\x00{project_id}".encode(), digest_size=12).hexdigest()


class Partitions:
    """The HNSW indexes of one data directory, by (organization, project)."""

    def __init__(self, dimension: int, dtype: str = "i8") -> None:
        if Index is None:
            raise RuntimeError("usearch is not installed (pip install 'memlane[local]')")
        self.dimension = dimension
        self.dtype = dtype
        self.parts: dict[tuple[str, str], Index] = {}
        self.seq = 0  # every write up to this index_seq is in the graphs
        self.changed = 0  # keys added or removed since the last save

    def _new(self) -> Index:
        return Index(
            ndim=self.dimension,
            metric="ip",  # vectors are L2-normalised: inner product is the cosine
            dtype=self.dtype,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def part(self, org_id: str, project_id: str) -> Index:
        key = (org_id, project_id)
        idx = self.parts.get(key)
        if idx is None:
            idx = self.parts[key] = self._new()
        return idx

    def __len__(self) -> int:
        return sum(len(i) for i in self.parts.values())

    def upsert(self, org_id: str, project_id: str, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Add rows (replacing any with the same keys), on both cores: a first build of a million
        rows goes at the rate the graph inserts them."""
        if not len(keys):
            return
        idx = self.part(org_id, project_id)
        keys = np.asarray(keys, dtype=np.uint64)
        present = np.asarray(idx.contains(keys), dtype=bool).reshape(-1)
        if present.any():
            idx.remove(keys[present])
        idx.add(keys, np.ascontiguousarray(vectors, dtype=np.float32), threads=0)
        self.changed += len(keys)

    def remove(self, org_id: str, project_id: str, keys: np.ndarray) -> None:
        idx = self.parts.get((org_id, project_id))
        if idx is None or not len(keys):
            return
        keys = np.asarray(keys, dtype=np.uint64)
        present = np.asarray(idx.contains(keys), dtype=bool).reshape(-1)
        if present.any():
            idx.remove(keys[present])
            self.changed += int(present.sum())

    def size(self, org_id: str, project_id: str) -> int:
        idx = self.parts.get((org_id, project_id))
        return 0 if idx is None else len(idx)

    def search(self, org_id: str, project_id: str, q: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Up to `count` nearest keys of one partition, best first, with their approximate scores."""
        idx = self.parts.get((org_id, project_id))
        if idx is None or len(idx) == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        n = len(idx)
        count = min(count, n)
        exact = n <= EXACT_PARTITION or count >= n // 4
        found = idx.search(q, count, exact=exact, threads=1)
        return found.keys.astype(np.int64), (1.0 - found.distances).astype(np.float32)

    def vectors(self, org_id: str, project_id: str, keys: np.ndarray) -> np.ndarray:
        """The graph's own (quantised) copies of keys' vectors, as float32."""
        got = self.parts[(org_id, project_id)].get(np.asarray(keys, dtype=np.uint64), dtype="f32")
        rows = got if isinstance(got, tuple) else (got,)
        return np.stack([np.asarray(r, dtype=np.float32) for r in rows]).reshape(len(keys), self.dimension)

    def remove_anywhere(self, keys: np.ndarray) -> None:
        """Remove keys whose partition is not known (rows deleted before this process saw them)."""
        for org_id, project_id in list(self.parts):
            self.remove(org_id, project_id, keys)

    # ------------------------------------------------------------------ persistence

    def save(self, directory: Path, index_id: str) -> None:
        """Write every partition, then the manifest naming them (atomic rename): a process that
        reads the manifest finds complete files, or the previous generation's."""
        private_dir(directory)
        generation = f"{self.seq}-{os.getpid()}"
        parts = []
        with locked(directory, exclusive=True):
            for (org_id, project_id), idx in self.parts.items():
                if len(idx) == 0:
                    continue
                name = f"{partition_name(org_id, project_id)}-{generation}.usearch"
                # created 0600 first: usearch writes into the file as it finds it, mode included
                create_private_file(directory / name)
                idx.save(str(directory / name))
                parts.append({"org": org_id, "project": project_id, "file": name, "count": len(idx),
                              "crc32": file_crc(directory / name)})
            manifest = sealed({
                "format": FORMAT,
                "index_id": index_id,
                "seq": self.seq,
                "dimension": self.dimension,
                "dtype": self.dtype,
                "partitions": parts,
            })
            tmp = directory / f"{MANIFEST}.{os.getpid()}.tmp"
            write_private(tmp, json.dumps(manifest).encode())
            os.replace(tmp, directory / MANIFEST)
            keep = {p["file"] for p in parts} | {MANIFEST, "lock"}
            for f in directory.iterdir():
                if f.name not in keep and (f.suffix == ".usearch" or f.name.endswith(".tmp")):
                    with contextlib.suppress(OSError):
                        f.unlink()
        self.changed = 0

    @classmethod
    def load(cls, directory: Path, index_id: str, dimension: int, dtype: str) -> Partitions | None:
        """The persisted partitions; None when there are none for this index (missing, from another
        index, another dimension or storage type). SnapshotDamaged when they are there but fail their
        checks or cannot be read: the caller discards them and rebuilds from SQLite."""
        if Index is None or not (directory / MANIFEST).exists():
            return None
        with locked(directory, exclusive=False):
            try:
                manifest = json.loads((directory / MANIFEST).read_text())
            except (OSError, ValueError) as exc:
                raise SnapshotDamaged(f"the graphs' manifest cannot be read ({exc})") from exc
            if (
                manifest.get("format") not in READABLE
                or manifest.get("index_id") != index_id
                or manifest.get("dimension") != dimension
                or manifest.get("dtype") != dtype
            ):
                log.info("the persisted vector index is for another index or format: rebuilding it")
                return None
            try:
                return cls._restore(directory, manifest, dimension, dtype)
            except SnapshotDamaged:
                raise
            except Exception as exc:  # a file usearch cannot read, a manifest of the wrong shape
                raise SnapshotDamaged(f"the graphs cannot be read ({exc})") from exc

    @classmethod
    def _restore(cls, directory: Path, manifest: dict, dimension: int, dtype: str) -> Partitions:
        verified = manifest["format"] >= 2
        if verified:
            check_manifest(manifest, "graphs'")
        loaded = cls(dimension, dtype)
        for p in manifest["partitions"]:
            if verified:
                check_file(directory / p["file"], p.get("crc32"), "graphs'")
            idx = Index.restore(str(directory / p["file"]), view=False)
            if idx is None or idx.ndim != dimension or len(idx) != p["count"]:
                raise SnapshotDamaged(f"partition file {p['file']} does not match the manifest")
            idx.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # it has a setter
            loaded.parts[(p["org"], p["project"])] = idx
        loaded.seq = int(manifest["seq"])
        if not verified:
            loaded.changed = max(loaded.changed, 1)  # saved again, with checksums, when this process stops
        return loaded


@contextlib.contextmanager
def locked(directory: Path, exclusive: bool) -> Iterator[None]:
    """Serialises savers against loaders across processes (a loader never reads a half-deleted
    generation)."""
    private_dir(directory)
    fd = lock_file(directory / "lock")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
