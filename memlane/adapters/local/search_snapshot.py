"""The in-memory projection saved beside the SQLite file, so a process starting on a large index maps
it instead of rebuilding it from `search_rows` (at a million chunks the rebuild reads 1.5 GB of
vectors and a hundred million BM25 postings: 40 s; mapping the saved arrays takes well under one).

Saved with the HNSW partitions (memlane.adapters.local.vector_ann) under the same lock and with the
same sequence number, as NumPy files memory-mapped copy-on-write on load: pages are read when a
search touches them, and a process's own updates stay private to it. The projection is a cache of
SQLite like the graphs: anything missing, unreadable, from another index (a `clear`), or not at the
graphs' sequence number is ignored and the projection is rebuilt from SQLite, and writes after the
saved sequence number are replayed from SQLite as they are today.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

import numpy as np

from memlane.adapters.local import bm25
from memlane.adapters.local.search_projection import Codes, Projection
from memlane.adapters.local.vector_ann import locked

log = logging.getLogger(__name__)

MANIFEST = "projection.json"
FORMAT = 2  # 2: the `kind` column; a format-1 snapshot is ignored and rebuilt from SQLite
_SLOT_ARRAYS = tuple(name for name in Projection._PER_SLOT if name != "vectors")
_POSTINGS = ("keys", "offsets", "rows", "freq")


def save(directory: Path, m: Projection, index_id: str) -> None:
    """Write the projection's arrays under new names, then the manifest naming them (atomic)."""
    if m.postings.tail_size:
        m.postings.fold(m.alive)
    generation = f"{m.seq}-{os.getpid()}"
    files = {}
    with locked(directory, exclusive=True):
        for name in _SLOT_ARRAYS:
            files[name] = f"p-{name}-{generation}.npy"
            np.save(directory / files[name], getattr(m, name)[: m.size])
        for name in _POSTINGS:
            files[f"postings.{name}"] = f"p-postings-{name}-{generation}.npy"
            np.save(directory / files[f"postings.{name}"], getattr(m.postings, name))
        files["chunk_ids"] = f"p-chunk_ids-{generation}.txt"
        (directory / files["chunk_ids"]).write_text("\n".join(m.chunk_ids[: m.size]))
        manifest = {
            "format": FORMAT,
            "index_id": index_id,
            "seq": m.seq,
            "dimension": m.dimension,
            "weights": list(m.weights),
            "size": m.size,
            "rows": m.rows,
            "tokens": m.tokens,
            "codes": m.codes.values,
            "doc_codes": m.doc_codes.values,
            "files": files,
        }
        tmp = directory / f"{MANIFEST}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(manifest))
        os.replace(tmp, directory / MANIFEST)
        keep = set(files.values())
        for f in directory.glob("p-*"):
            if f.name not in keep:
                with contextlib.suppress(OSError):
                    f.unlink()


def load(directory: Path, index_id: str, dimension: int, context_weight: float, seq: int) -> Projection | None:
    """The saved projection at sequence number `seq` (the graphs'), or None."""
    path = directory / MANIFEST
    if not path.exists():
        return None
    try:
        with locked(directory, exclusive=False):
            manifest = json.loads(path.read_text())
            m = Projection(dimension, context_weight)
            if (
                manifest.get("format") != FORMAT
                or manifest.get("index_id") != index_id
                or manifest.get("seq") != seq
                or manifest.get("dimension") != dimension
                or tuple(manifest.get("weights", ())) != m.weights
            ):
                return None
            size = int(manifest["size"])
            if size == 0:
                return None
            files = manifest["files"]
            for name in _SLOT_ARRAYS:
                arr = _mapped(directory / files[name])
                if arr.shape[0] != size or arr.dtype != getattr(m, name).dtype:
                    raise ValueError(f"{files[name]} does not match the manifest")
                setattr(m, name, arr)
            m.vectors = np.zeros((size, 0), dtype=np.float32)  # the graphs hold them
            p = bm25.Postings()
            for name in _POSTINGS:
                setattr(p, name, _mapped(directory / files[f"postings.{name}"]))
            if p.offsets.size != p.keys.size + 1 or p.rows.size != p.freq.size or p.offsets[-1] != p.rows.size:
                raise ValueError("the saved postings do not match each other")
            if p.rows.size and int(p.rows.max()) >= max(size, 1):
                raise ValueError("the saved postings name slots the projection does not have")
            m.postings = p
            chunk_ids = (directory / files["chunk_ids"]).read_text().split("\n") if size else []
            if len(chunk_ids) != size:
                raise ValueError("the saved chunk ids do not match the manifest")
            m.chunk_ids = chunk_ids
            m.codes, m.doc_codes = _codes(manifest["codes"]), _codes(manifest["doc_codes"])
            m.doc_ids = list(m.doc_codes.values)
            m.size, m.rows, m.tokens, m.seq = size, int(manifest["rows"]), float(manifest["tokens"]), seq
            live = np.flatnonzero(m.alive[:size])
            m.position = dict(zip(m.rowid[live].tolist(), live.tolist(), strict=True))
            return m
    except Exception as exc:  # truncated, corrupt or half-deleted files: SQLite rebuilds it
        log.warning("the saved search projection could not be read (%s): rebuilding it from SQLite", exc)
        return None


def _mapped(path: Path) -> np.ndarray:
    """A saved array mapped copy-on-write, as a plain ndarray over the mapping (np.memmap's own
    indexing goes through Python: 16 µs per element read, which the legs do per result)."""
    return np.load(path, mmap_mode="c").view(np.ndarray)


def _codes(values: list[str]) -> Codes:
    c = Codes()
    for v in values:
        c.code(v)
    return c
