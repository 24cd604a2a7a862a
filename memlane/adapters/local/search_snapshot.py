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
from memlane.adapters.local.private_files import open_private, write_private
from memlane.adapters.local.search_projection import ChunkIds, Codes, Projection, RowSlots
from memlane.adapters.local.snapshot_checks import (
    CrcWriter,
    SnapshotDamaged,
    check_file,
    check_manifest,
    file_crc,
    sealed,
)
from memlane.adapters.local.vector_ann import MANIFEST as GRAPHS_MANIFEST
from memlane.adapters.local.vector_ann import locked

log = logging.getLogger(__name__)

MANIFEST = "projection.json"
# 2: the `kind` column; a format-1 snapshot is ignored and rebuilt from SQLite.
# 3: the postings' frequencies in float16 where that is exact (bm25.narrow_freq): a format-2
#    snapshot is converted in place at load (a second or two at a million chunks), or read as it is
#    where the directory is read-only.
# 4: the chunk ids as a fixed-width bytes array (.npy, mapped) instead of a text file read into a
#    Python string per row; formats 2 and 3 are converted at load the same way.
# 5: a checksum of every file and of the manifest (memlane.adapters.local.snapshot_checks); formats
#    2 to 4 are converted and sealed at load (then checked like any snapshot), or read unverified
#    where the directory is read-only.
FORMAT = 5
READABLE = (2, 3, 4, 5)
_CHUNK = 1 << 23  # items per read when a saved array is scanned or converted (32 MB of int32)
_SLOT_ARRAYS = tuple(name for name in Projection._PER_SLOT if name != "vectors")
_POSTINGS = ("keys", "offsets", "rows", "freq")


def save(directory: Path, m: Projection, index_id: str) -> None:
    """Write the projection's arrays under new names, then the manifest naming them (atomic)."""
    if m.postings.pending:
        m.postings.fold(m.alive)
    generation = f"{m.seq}-{os.getpid()}"
    files: dict[str, str] = {}
    crc: dict[str, str] = {}
    with locked(directory, exclusive=True):
        for name in _SLOT_ARRAYS:
            files[name] = f"p-{name}-{generation}.npy"
            crc[files[name]] = _save_array(directory / files[name], getattr(m, name)[: m.size])
        for name in _POSTINGS:
            files[f"postings.{name}"] = f"p-postings-{name}-{generation}.npy"
            crc[files[f"postings.{name}"]] = _save_array(directory / files[f"postings.{name}"],
                                                         getattr(m.postings, name))
        files["chunk_ids"] = f"p-chunk_ids-{generation}.npy"
        crc[files["chunk_ids"]] = _save_array(directory / files["chunk_ids"], m.chunk_ids.ids[: m.size])
        manifest = sealed({
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
            "crc32": crc,
        })
        tmp = directory / f"{MANIFEST}.{os.getpid()}.tmp"
        write_private(tmp, json.dumps(manifest).encode())
        os.replace(tmp, directory / MANIFEST)
        keep = set(files.values())
        for f in directory.glob("p-*"):
            if f.name not in keep:
                with contextlib.suppress(OSError):
                    f.unlink()


def load(directory: Path, index_id: str, dimension: int, context_weight: float, seq: int) -> Projection | None:
    """The saved projection at sequence number `seq` (the graphs'); None when there is none for it
    (missing, another index, another sequence number, empty). SnapshotDamaged when it is there but
    fails its checks or cannot be read: the caller discards it and rebuilds from SQLite."""
    path = directory / MANIFEST
    if not path.exists():
        return None
    try:
        _upgrade(directory)
        with locked(directory, exclusive=False):
            manifest = json.loads(path.read_text())
            m = Projection(dimension, context_weight)
            if (
                manifest.get("format") not in READABLE
                or manifest.get("index_id") != index_id
                or manifest.get("seq") != seq
                or manifest.get("dimension") != dimension
                or tuple(manifest.get("weights", ())) != m.weights
                or int(manifest.get("size", 0)) == 0
            ):
                return None
            if manifest["format"] == FORMAT:
                check_manifest(manifest, "projection's")
                for name in manifest["files"].values():
                    check_file(directory / name, manifest.get("crc32", {}).get(name), "projection's")
            _read_into(m, directory, manifest, seq)
            _check_codes(m)
            return m
    except SnapshotDamaged:
        raise
    except Exception as exc:  # truncated, corrupt or half-deleted files
        raise SnapshotDamaged(f"the saved projection cannot be read ({exc})") from exc


def _read_into(m: Projection, directory: Path, manifest: dict, seq: int) -> None:
    size = int(manifest["size"])
    files = manifest["files"]
    for name in _SLOT_ARRAYS:
        arr = _mapped(directory / files[name])
        if arr.shape[0] != size or arr.dtype != getattr(m, name).dtype:
            raise SnapshotDamaged(f"{files[name]} does not match the manifest")
        setattr(m, name, arr)
    m.vectors = np.zeros((size, 0), dtype=np.float32)  # the graphs hold them
    p = bm25.Postings()
    for name in _POSTINGS:
        setattr(p, name, _mapped(directory / files[f"postings.{name}"]))
    if p.offsets.size != p.keys.size + 1 or p.rows.size != p.freq.size or p.offsets[-1] != p.rows.size:
        raise SnapshotDamaged("the saved postings do not match each other")
    if p.freq.dtype not in (np.float16, np.float32):
        raise SnapshotDamaged("the saved postings' frequencies have another type")
    if p.rows.size and _max(directory / files["postings.rows"]) >= max(size, 1):
        raise SnapshotDamaged("the saved postings name slots the projection does not have")
    m.postings = p
    m.chunk_ids = _chunk_ids(directory / files["chunk_ids"])
    if len(m.chunk_ids) != size:
        raise SnapshotDamaged("the saved chunk ids do not match the manifest")
    m.codes, m.doc_codes = _codes(manifest["codes"]), _codes(manifest["doc_codes"])
    m.doc_ids = list(m.doc_codes.values)
    m.size, m.rows, m.tokens, m.seq = size, int(manifest["rows"]), float(manifest["tokens"]), seq
    live = np.flatnonzero(m.alive[:size])
    m.position = RowSlots.of(m.rowid[live], live)


def _check_codes(m: Projection) -> None:
    """Every live row names an organization, a project, a content type, a kind and a document the
    manifest knows, of the right kind, and no SQLite row twice; the live count is the manifest's."""
    live = np.flatnonzero(m.alive[: m.size])
    if live.size != m.rows:
        raise SnapshotDamaged(f"the projection holds {live.size} live rows, its manifest {m.rows}")
    for column, prefix in (("org", "org:"), ("project", "project:"), ("content_type", "ct:"), ("kind", "kind:")):
        codes = getattr(m, column)[live]
        if codes.size and (codes.min() < 0 or codes.max() >= len(m.codes.values)):
            raise SnapshotDamaged(f"the projection's {column} column names codes its manifest does not have")
        used = np.flatnonzero(np.bincount(codes, minlength=len(m.codes.values)))  # O(rows), no sort
        if not all(m.codes.values[c].startswith(prefix) for c in used):
            raise SnapshotDamaged(f"the projection's {column} column names codes of another kind")
    docs = m.document[live]
    if docs.size and (docs.min() < 0 or docs.max() >= len(m.doc_codes.values)):
        raise SnapshotDamaged("the projection's document column names documents its manifest does not have")
    if len(m.position) != live.size:  # two live slots naming one SQLite row leave fewer entries
        raise SnapshotDamaged("the projection holds a row twice")


def discard(directory: Path) -> None:
    """Remove the saved graphs' and projection's manifests, so no process loads them again (their
    files are replaced by the next save)."""
    with locked(directory, exclusive=True):
        for name in (GRAPHS_MANIFEST, MANIFEST):
            with contextlib.suppress(FileNotFoundError):
                (directory / name).unlink()


def _upgrade(directory: Path) -> None:
    """Convert a snapshot saved by an older memlane to this format, if it is one that converts (2:
    float32 frequencies, 2 and 3: chunk ids as text) and the directory is writable; otherwise it is
    left as it is and read as it is."""
    path = directory / MANIFEST
    if json.loads(path.read_text()).get("format") not in (2, 3, 4):
        return
    try:
        with locked(directory, exclusive=True):
            manifest = json.loads(path.read_text())
            old_format = manifest.get("format")
            if old_format not in (2, 3, 4):
                return  # another process converted it meanwhile
            files = manifest["files"]
            replaced = []
            if old_format == 2:
                old = files["postings.freq"]
                new = old.removesuffix(".npy") + "-f16.npy"
                if _narrowed_copy(directory / old, directory / new):
                    files["postings.freq"] = new
                    replaced.append(old)
            old = files["chunk_ids"]
            if old.endswith(".txt"):
                new = old.removesuffix(".txt") + ".npy"
                ids = ChunkIds.of((directory / old).read_text().split("\n") if manifest.get("size") else [])
                _save_array(directory / new, ids.ids)
                files["chunk_ids"] = new
                replaced.append(old)
            # sealed as they are: the load that follows checks what they hold, as for any snapshot
            manifest["crc32"] = {name: file_crc(directory / name) for name in files.values()}
            manifest["format"] = FORMAT
            manifest = sealed(manifest)
            tmp = directory / f"{MANIFEST}.{os.getpid()}.tmp"
            write_private(tmp, json.dumps(manifest).encode())
            os.replace(tmp, path)
            for name in replaced:
                with contextlib.suppress(OSError):
                    (directory / name).unlink()
            log.info("converted the saved search projection from format %s to %d", old_format, FORMAT)
    except OSError as exc:  # read-only: an older snapshot is read as it is
        log.info("the saved search projection stays in its older format (%s)", exc)


def _save_array(path: Path, arr: np.ndarray) -> str:
    """np.save into a file that is 0600 from its first byte (the data directory's rule); the
    CRC-32 of what was written."""
    with open_private(path) as out:
        writer = CrcWriter(out)
        np.save(writer, arr)  # a file-like object that writes through
    return writer.digest


def _chunk_ids(path: Path) -> ChunkIds:
    """The saved chunk ids: mapped, or from an older snapshot's text file."""
    if path.suffix == ".txt":
        text = path.read_text()
        return ChunkIds.of(text.split("\n") if text else [])
    ids = _mapped(path)
    if ids.dtype.kind != "S" or ids.ndim != 1:
        raise ValueError(f"{path.name} does not hold chunk ids")
    return ChunkIds(ids=ids)


def _narrowed_copy(source: Path, target: Path) -> bool:
    """Write `source`'s float32 frequencies to `target` as float16 if that is exact for all of
    them (bm25.narrow_freq), piece by piece; False (and nothing left written) if it is not.
    Written with write(), not through a mapping: pages dirtied through a shared mapping stay in
    the page cache as 2 MB folios (Linux 6.x), and a process mapping the file later is then
    charged 2 MB of resident memory for each posting list it reads."""
    freq = np.load(source, mmap_mode="r")
    dtype, shape, offset = freq.dtype, freq.shape, freq.offset
    del freq
    if dtype != np.float32:
        return False
    size = int(np.prod(shape))
    done = False
    try:
        with source.open("rb") as f, open_private(target) as out:
            header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float16)), "fortran_order": False,
                      "shape": shape}
            np.lib.format.write_array_header_1_0(out, header)
            f.seek(offset)
            for start in range(0, size, _CHUNK):
                part = np.fromfile(f, dtype=np.float32, count=min(_CHUNK, size - start))
                narrow = part.astype(np.float16)
                if not np.array_equal(narrow.astype(np.float32), part):
                    return False
                out.write(narrow.tobytes())
        done = True
        return True
    finally:
        if not done:
            with contextlib.suppress(OSError):
                target.unlink()


def _max(path: Path) -> int:
    """The largest value of a saved array, read through the file rather than a mapping: the check
    must not leave every page of the array resident in this process (440 MB of posting rows at a
    million chunks)."""
    arr = np.load(path, mmap_mode="r")
    dtype, size, offset = arr.dtype, arr.size, arr.offset
    del arr
    best = np.iinfo(np.int64).min
    with path.open("rb") as f:
        f.seek(offset)
        for start in range(0, size, _CHUNK):
            best = max(best, int(np.fromfile(f, dtype=dtype, count=min(_CHUNK, size - start)).max()))
    return best


def _mapped(path: Path) -> np.ndarray:
    """A saved array mapped copy-on-write, as a plain ndarray over the mapping (np.memmap's own
    indexing goes through Python: 16 µs per element read, which the legs do per result)."""
    return np.load(path, mmap_mode="c").view(np.ndarray)


def _codes(values: list[str]) -> Codes:
    c = Codes()
    for v in values:
        c.code(v)
    return c
