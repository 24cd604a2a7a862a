"""The fast copy of the search projection, held by each process: the stored rows in NumPy arrays by
slot (vectors and scope columns for the vector leg, postings and row lengths for BM25), addressed
by SQLite rowid, grown and compacted as rows come and go."""

from __future__ import annotations

import hashlib

import numpy as np

from memlane.adapters.local import bm25
from memlane.adapters.local.vector_ann import Partitions
from memlane.ports import UNKNOWN_KIND


def terms_signature(terms: bytes) -> int:
    """The same in every process (unlike hash()), so a saved projection can compare it."""
    return int.from_bytes(hashlib.blake2b(terms, digest_size=8).digest(), "little", signed=True)


class Codes:
    """Interns strings (organization, project, document ids) to small ints for NumPy masks."""

    def __init__(self) -> None:
        self.by_value: dict[str, int] = {}
        self.values: list[str] = []  # code -> value

    def code(self, value: str) -> int:
        c = self.by_value.get(value)
        if c is None:
            c = len(self.by_value)
            self.by_value[value] = c
            self.values.append(value)
        return c

    def get(self, value: str) -> int:
        return self.by_value.get(value, -1)


class ChunkIds:
    """Each slot's chunk id, in one array of fixed-width bytes rather than a Python string per row
    (90 MB of heap at a million chunks): mapped from the saved snapshot like the other columns and
    decoded only for the rows a search returns. The width grows with the longest id stored."""

    def __init__(self, cap: int = 0, ids: np.ndarray | None = None) -> None:
        self.ids = np.zeros(cap, dtype="S36") if ids is None else ids

    @classmethod
    def of(cls, values: list[str]) -> ChunkIds:
        encoded = [v.encode() for v in values]
        return cls(ids=np.array(encoded, dtype=f"S{max([36, *map(len, encoded)])}"))

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, slot: int) -> str:
        return bytes(self.ids[slot]).decode()

    def set(self, slots: list[int], values: list[str]) -> None:
        encoded = [v.encode() for v in values]
        width = max(map(len, encoded), default=0)
        if width > self.ids.dtype.itemsize:
            self.ids = self.ids.astype(f"S{width}")
        self.ids[slots] = encoded

    def resize(self, cap: int) -> None:
        new = np.zeros(cap, dtype=self.ids.dtype)
        new[: len(self.ids)] = self.ids
        self.ids = new

    def keep(self, live: np.ndarray, size: int) -> None:
        """Slots `live` (ascending) to the front; the rest of the first `size` emptied."""
        self.ids[: live.size] = self.ids[live]
        self.ids[live.size : size] = b""


class RowSlots:
    """SQLite rowid → slot in the projection's arrays, as one int32 array indexed by rowid (-1: no
    slot) rather than a dict of Python ints (94 MB at a million chunks; this is 4 MB). SQLite gives
    a new row the largest rowid plus one, so the array is as long as the table has ever been."""

    def __init__(self, table: np.ndarray | None = None) -> None:
        self.table = np.full(1024, -1, dtype=np.int32) if table is None else table

    @classmethod
    def of(cls, rowids: np.ndarray, slots: np.ndarray) -> RowSlots:
        table = np.full(max(1024, int(rowids.max(initial=0)) + 1), -1, dtype=np.int32)
        table[rowids] = slots
        return cls(table)

    def __len__(self) -> int:
        return int(np.count_nonzero(self.table >= 0))

    def get(self, rowid: int, default: int | None = None) -> int | None:
        if 0 <= rowid < len(self.table):
            slot = int(self.table[rowid])
            if slot >= 0:
                return slot
        return default

    def slots(self, rowids: np.ndarray) -> np.ndarray:
        """The slots of many rowids at once (-1 for those without one)."""
        rowids = np.asarray(rowids, dtype=np.int64)
        out = np.full(rowids.size, -1, dtype=np.int64)
        known = (rowids >= 0) & (rowids < len(self.table))
        out[known] = self.table[rowids[known]]
        return out

    def set_many(self, rowids: np.ndarray, slots: np.ndarray) -> None:
        rowids = np.asarray(rowids, dtype=np.int64)
        if not rowids.size:
            return
        need = int(rowids.max()) + 1
        if need > len(self.table):
            cap = len(self.table)
            while cap < need:
                cap *= 2
            table = np.full(cap, -1, dtype=np.int32)
            table[: len(self.table)] = self.table
            self.table = table
        self.table[rowids] = slots

    def pop(self, rowid: int, default: int | None = None) -> int | None:
        slot = self.get(rowid)
        if slot is None:
            return default
        self.table[rowid] = -1
        return slot

    def remap(self, new_slot: np.ndarray) -> None:
        """After a compaction: every slot s held becomes new_slot[s]."""
        held = self.table >= 0
        self.table[held] = new_slot[self.table[held]]


class Projection:
    """Rows of the search projection held in NumPy arrays by slot, addressed by SQLite rowid: the
    vectors and scope columns for the vector leg, the postings and row lengths for BM25."""

    def __init__(self, dimension: int, context_weight: float = bm25.CONTEXT_WEIGHT) -> None:
        self.dimension = dimension
        self.weights = (*bm25.COLUMN_WEIGHTS, context_weight)  # by bm25.COLUMNS
        self.size = 0
        cap = 1024
        self.vectors = np.zeros((cap, dimension), dtype=np.float32)
        self.alive = np.zeros(cap, dtype=bool)
        self.org = np.full(cap, -1, dtype=np.int32)
        self.project = np.full(cap, -1, dtype=np.int32)
        self.document = np.full(cap, -1, dtype=np.int32)
        self.content_type = np.full(cap, -1, dtype=np.int32)
        self.kind = np.full(cap, -1, dtype=np.int32)  # code of "kind:<kind>" ("kind:" for UNKNOWN_KIND)
        self.created = np.zeros(cap, dtype=np.float64)
        self.forget = np.full(cap, np.inf, dtype=np.float64)
        self.chunk_index = np.zeros(cap, dtype=np.int32)
        self.superseded = np.zeros(cap, dtype=bool)
        self.doclen = np.zeros(cap, dtype=np.float32)  # tokens in the row, all columns (BM25's D)
        self.rowid = np.full(cap, -1, dtype=np.int64)  # slot -> sqlite rowid (the ANN's key)
        self.sig = np.zeros(cap, dtype=np.int64)  # a stable hash of the terms the slot indexes
        self.chunk_ids = ChunkIds(cap)
        self.position = RowSlots()  # sqlite rowid -> slot in the arrays
        self.codes = Codes()  # organizations, projects, content types
        self.doc_codes = Codes()
        self.doc_ids: list[str] = []  # document code -> document id
        self.postings = bm25.Postings()
        self.rows = 0  # live rows (BM25's N)
        self.tokens = 0.0  # tokens in live rows (N · avgdl)
        self.seq = 0
        # Above a size (SqliteSearchIndex.ann_at) the vectors live in HNSW partitions instead of
        # `vectors`, which then has no columns: a million float32 rows would take 1.5 GB here.
        self.ann: Partitions | None = None

    # the arrays indexed by slot, and what an empty slot holds (0 unless named)
    _PER_SLOT = (
        "vectors",
        "alive",
        "org",
        "project",
        "document",
        "content_type",
        "kind",
        "created",
        "forget",
        "chunk_index",
        "superseded",
        "doclen",
        "rowid",
        "sig",
    )
    _FILL = {
        "forget": np.inf, "org": -1, "project": -1, "document": -1, "content_type": -1, "kind": -1, "rowid": -1,
    }

    def reserve(self, extra: int) -> None:
        """Room for `extra` more slots, growing the arrays at most once."""
        need = self.size + extra
        cap = len(self.alive)
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        for name in self._PER_SLOT:
            old = getattr(self, name)
            new = np.full((cap, *old.shape[1:]), self._FILL.get(name, 0), dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)
        self.chunk_ids.resize(cap)

    @property
    def dead(self) -> int:
        """Slots of deleted rows, or of rows whose text changed since."""
        return self.size - self.rows

    def compact(self) -> None:
        """Move the live slots to the front, so a long-running process does not grow with the
        deletes and rewrites it has seen. Rows keep their order; postings follow their rows."""
        self.postings.fold(self.alive)  # first: drops the dead slots' postings, empties the tail
        live = np.flatnonzero(self.alive[: self.size])
        new_slot = np.full(self.size, -1, dtype=np.int64)
        new_slot[live] = np.arange(live.size)
        for name in self._PER_SLOT:
            arr = getattr(self, name)
            arr[: live.size] = arr[live]
            arr[live.size : self.size] = self._FILL.get(name, 0)
        self.chunk_ids.keep(live, self.size)
        self.position.remap(new_slot)
        self.postings.rows = new_slot[self.postings.rows].astype(np.int32)
        self.size = int(live.size)

    def doc_code(self, document_id: str) -> int:
        c = self.doc_codes.code(document_id)
        if c == len(self.doc_ids):
            self.doc_ids.append(document_id)
        return c

    def _kill(self, pos: int) -> None:
        self.alive[pos] = False
        self.rows -= 1
        self.tokens -= float(self.doclen[pos])

    def apply(self, batch: list, terms: list[bytes]) -> None:
        """Apply search_rows rows (with each row's stored terms). A new row, or a row whose text
        changed, takes a new slot: the old slot dies with its postings. Otherwise (a version
        marked superseded, say) the row's slot is updated in place."""
        fresh, fresh_terms, sigs = [], [], []
        held = self.position.slots(np.asarray([row["rowid"] for row in batch], dtype=np.int64)).tolist()
        for row, row_terms, pos in zip(batch, terms, held, strict=True):
            sig = terms_signature(row_terms)
            if pos >= 0:
                if self.sig[pos] == sig:
                    self._set(np.asarray([pos]), [row])
                    continue
                self._kill(pos)
            fresh.append(row)
            fresh_terms.append(row_terms)
            sigs.append(sig)
        if not fresh:
            return
        self.reserve(len(fresh))
        slots = np.arange(self.size, self.size + len(fresh))
        self.size += len(fresh)
        self.position.set_many(np.asarray([row["rowid"] for row in fresh], dtype=np.int64), slots)
        self.sig[slots] = sigs
        self._set(slots, fresh)
        self.alive[slots] = True
        self.rows += len(fresh)
        self._index_terms(slots, fresh_terms)

    def drop_vectors(self) -> None:
        """The vectors now live in the ANN partitions: free the matrix."""
        self.vectors = np.zeros((len(self.alive), 0), dtype=np.float32)

    def partition(self, slot: int) -> tuple[str, str]:
        """The (organization, project) of a slot: its ANN partition."""
        return (
            self.codes.values[self.org[slot]].removeprefix("org:"),
            self.codes.values[self.project[slot]].removeprefix("project:"),
        )

    def _set(self, slots: np.ndarray, rows: list) -> None:
        if self.vectors.shape[1]:
            self.vectors[slots] = np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32).reshape(
                len(rows), self.dimension
            )
        self.rowid[slots] = [r["rowid"] for r in rows]
        code = self.codes.code
        self.org[slots] = [code("org:" + r["organization_id"]) for r in rows]
        self.project[slots] = [code("project:" + r["project_id"]) for r in rows]
        self.content_type[slots] = [code("ct:" + r["content_type"]) for r in rows]
        self.kind[slots] = [code("kind:" + (r["kind"] or UNKNOWN_KIND)) for r in rows]
        self.document[slots] = [self.doc_code(r["document_id"]) for r in rows]
        self.created[slots] = [r["created_at"] for r in rows]
        self.forget[slots] = [r["forget_after"] if r["forget_after"] is not None else np.inf for r in rows]
        self.chunk_index[slots] = [r["chunk_index"] for r in rows]
        self.superseded[slots] = [bool(r["superseded"]) for r in rows]
        self.chunk_ids.set(slots.tolist(), [r["chunk_id"] for r in rows])

    def _index_terms(self, slots: np.ndarray, blobs: list[bytes]) -> None:
        """Postings and lengths of fresh slots, in one vectorised pass."""
        records, per_row = bm25.decode_terms(blobs)
        tokens = np.zeros(len(records), dtype=np.float32)  # the term's tokens in the row's own text
        f = np.zeros(len(records), dtype=np.float32)  # BM25's f: its hits weighted by column
        for column, weight in enumerate(self.weights):
            hits = records["tf"][:, column].astype(np.float32)
            if column < len(bm25.OWN_COLUMNS):  # context hits add evidence, not length
                tokens += hits
            f += weight * hits
        lengths = np.bincount(np.repeat(np.arange(len(blobs)), per_row), weights=tokens, minlength=len(blobs))
        self.doclen[slots] = lengths
        self.tokens += float(lengths.sum())
        keep = f > 0  # a context term at weight 0 is not a posting
        self.postings.add(
            records["term"][keep].copy(), np.repeat(slots.astype(np.int32), per_row)[keep], f[keep]
        )

    def remove(self, rowid: int) -> None:
        pos = self.position.pop(rowid, None)
        if pos is not None:
            self._kill(pos)
