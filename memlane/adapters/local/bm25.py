"""BM25 for the embedded default, scored in process over an inverted index held in NumPy.

Why not FTS5's own bm25(): an OR-query makes FTS5 score every row that holds any query term (it has
no top-k pruning), at ~2 µs a row including a B-tree lookup of the row's size: 13 ms median and
30+ ms p95 for a 2-6 word query at 100k chunks, more when the cores are busy. Here the postings of
the query terms are gathered from NumPy arrays and scored in one vectorised pass (~1-2 ms), and the
tenant/project/filter scope is the same boolean mask the vector leg applies.

The score is FTS5's bm25() (ext/fts5/fts5_aux.c) with the same column weights, term for term:

    score = Σ_phrases idf · f · (k1 + 1) / (f + k1 · (1 − b + b · D / avgdl))
    f     = Σ_columns weight_c · hits of the term in column c
    idf   = ln((N − n + 0.5) / (n + 0.5)), or 1e-6 when that is ≤ 0

with N the rows, n the rows holding the term, D the tokens of the row and avgdl the mean tokens per
row, as FTS5 counts them, except over which rows: FTS5 counts its whole table, here N, n and avgdl are
counted over the live rows of the searched organization and projects (`ScopeStats`). Counted over the
whole index, one project's ranking moved whenever another project, or another organization, saved:
scores that depended on data outside the searched scope, and one tenant's saves visible in another's
scores. The scope's filters (content types, kinds, tags, dates) are not counted: they choose which
rows are shown, not the corpus a word is rare in, and a filter admitting three documents would leave
an idf with nothing to measure (n > N/2 gives FTS5's 1e-6).

Tokens come from FTS5 itself: text goes through a scratch in-memory FTS5 table with the tokenizer of
`search_fts` and its terms are read back through fts5vocab, so stemming and case folding cannot drift
from the FTS5 index. Each row's terms (64-bit term hashes with per-column counts, TERMS_DTYPE) are
stored with the row in `search_rows.terms`, so a process builds its postings from SQLite without
tokenising again.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np

# Must stay the tokenizer of search_fts (memlane/adapters/local/sqlite_db.py); a unit test checks it.
TOKENIZER = "porter unicode61 remove_diacritics 2"
# The columns of search_fts, then `context`: the text of the memories saved around a short memory
# (memlane.documents.contextual). Its terms are stored with the row's, not in search_fts, which keeps
# the memory's own text.
OWN_COLUMNS = ("title", "headings", "body")
COLUMNS = (*OWN_COLUMNS, "context")
# Per-column weights of the text leg, as bm25(search_fts, 2.0, 1.5, 1.0) had them: a title hit
# counts twice, a heading hit one and a half times.
COLUMN_WEIGHTS = (2.0, 1.5, 1.0)
# A context hit counts half a body hit by default (memlane.config: MEMLANE_CONTEXT_TEXT_WEIGHT).
# Context tokens are left out of the row's length D: a memory's own words do not count for less
# because its neighbours were long. With no context the score is FTS5's bm25(), as below.
CONTEXT_WEIGHT = 0.5
K1 = 1.2
B = 0.75
# One record per distinct term of a row: the term's hash and its hit count in each column.
TERMS_DTYPE = np.dtype([("term", "<i8"), ("tf", "<u2", (len(COLUMNS),))])
# What rows stored before the context column (upgraded in place: memlane.adapters.local.search_index).
TERMS_DTYPE_V1 = np.dtype([("term", "<i8"), ("tf", "<u2", (len(OWN_COLUMNS),))])
_MAX_TF = np.iinfo(np.uint16).max


def term_key(term: str) -> int:
    """A stable 64-bit key for an index term (the same in every process). Two terms would have to
    collide in 64 bits to be confused: at a million distinct terms the odds are ~1 in 30 million."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little", signed=True)


class Fts5Tokenizer:
    """Turns text into index terms with SQLite's FTS5 tokenizer, through a contentless scratch table
    in a private in-memory database (one per thread; nothing is ever committed to it)."""

    _CACHE_LIMIT = 200_000

    def __init__(self) -> None:
        self._local = threading.local()
        self._keys: dict[str, int] = {}
        self._words: dict[str, tuple[int, ...]] = {}

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.execute(
                f"CREATE VIRTUAL TABLE tok USING fts5({', '.join(COLUMNS)}, content='', tokenize='{TOKENIZER}')"
            )
            conn.execute("CREATE VIRTUAL TABLE tok_terms USING fts5vocab(tok, instance)")
            self._local.conn = conn
        return conn

    def _key(self, term: str) -> int:
        key = self._keys.get(term)
        if key is None:
            if len(self._keys) >= self._CACHE_LIMIT:
                self._keys = {}
            key = self._keys[term] = term_key(term)
        return key

    def row_terms(self, rows: Sequence[tuple[str, ...]]) -> list[bytes]:
        """Each row's (title, headings, body[, context]) as TERMS_DTYPE records, ready to store."""
        if not rows:
            return []
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            conn.executemany(
                "INSERT INTO tok (rowid, title, headings, body, context) VALUES (?, ?, ?, ?, ?)",
                [(i, *r, *([""] * (len(COLUMNS) - len(r)))) for i, r in enumerate(rows)],
            )
            found = conn.execute(
                "SELECT doc, term, SUM(col = 'title'), SUM(col = 'headings'), SUM(col = 'body'),"
                " SUM(col = 'context') FROM tok_terms GROUP BY doc, term ORDER BY doc"
            ).fetchall()
        finally:
            conn.execute("ROLLBACK")  # empties the scratch table
        records = np.empty(len(found), dtype=TERMS_DTYPE)
        if found:
            docs = np.fromiter((f[0] for f in found), dtype=np.int64, count=len(found))
            records["term"] = np.fromiter((self._key(f[1]) for f in found), dtype=np.int64, count=len(found))
            tf = np.array([f[2:] for f in found], dtype=np.int64)
            records["tf"] = np.minimum(tf, _MAX_TF)
        else:
            docs = np.empty(0, dtype=np.int64)
        bounds = np.searchsorted(docs, np.arange(len(rows) + 1))
        return [records[bounds[i] : bounds[i + 1]].tobytes() for i in range(len(rows))]

    def word_terms(self, words: Sequence[str]) -> list[tuple[int, ...]]:
        """The index terms of each query word (usually one; `max_length` is two)."""
        resolved = {w: self._words.get(w) for w in words}
        missing = [w for w, t in resolved.items() if t is None]
        if missing:
            conn = self._conn()
            conn.execute("BEGIN")
            try:
                conn.executemany("INSERT INTO tok (rowid, body) VALUES (?, ?)", list(enumerate(missing)))
                found = conn.execute("SELECT doc, term FROM tok_terms ORDER BY doc, offset").fetchall()
            finally:
                conn.execute("ROLLBACK")
            terms: dict[int, list[int]] = {i: [] for i in range(len(missing))}
            for doc, term in found:
                terms[doc].append(self._key(term))
            if len(self._words) >= self._CACHE_LIMIT:
                self._words = {}
            for i, w in enumerate(missing):
                resolved[w] = self._words[w] = tuple(terms[i])
        return [resolved[w] for w in words]  # type: ignore[misc]


def upgrade_terms_v1(blob: bytes) -> bytes:
    """A row's terms stored before the context column, with no context hits."""
    old = np.frombuffer(blob, dtype=TERMS_DTYPE_V1)
    new = np.zeros(len(old), dtype=TERMS_DTYPE)
    new["term"] = old["term"]
    new["tf"][:, : len(OWN_COLUMNS)] = old["tf"]
    return new.tobytes()


def decode_terms(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Stored term records of several rows → (records, records per row)."""
    records = np.frombuffer(b"".join(blobs), dtype=TERMS_DTYPE)
    per_row = np.fromiter((len(b) // TERMS_DTYPE.itemsize for b in blobs), dtype=np.int64, count=len(blobs))
    return records, per_row


def narrow_freq(freq: np.ndarray) -> np.ndarray:
    """`freq` as float16 when every value converts exactly (f is a sum of integer hits weighted by
    2, 1.5, 1 and the context weight, 0.5 by default: multiples of 0.5 are exact up to 1024,
    integers up to 2048), else as float32. Exact means the scores are the same floats either way
    (each f is widened to float64 before use); a context weight such as 0.3, or a term hit
    thousands of times in one row, keeps float32."""
    if freq.dtype == np.float16:
        return freq
    narrow = freq.astype(np.float16)
    if np.array_equal(narrow.astype(np.float32), freq):
        return narrow
    return freq.astype(np.float32, copy=False)


Segment = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # keys (sorted, unique), counts, rows, freq


class Postings:
    """term → rows holding it, with the row's weighted hit count f of that term.

    `freq` is float16 where that is exact for every posting (narrow_freq: half of float32's 4
    bytes a posting, 115 million postings at a million chunks), else float32.

    Compressed-sparse layout, in three tiers, the way a log-structured index keeps its segments:

    * the main arrays: `keys` sorted, the postings of keys[i] at offsets[i]:offsets[i+1] of `rows`
      and `freq` (memory-mapped from the snapshot at start);
    * sorted runs in the same layout, each at most half the size of the run before it: a tail of
      FOLD_AT postings becomes a run, and runs of like size merge (`settle`), so a posting is
      rewritten about log2(n / FOLD_AT) times while the index grows, and a save at a million
      chunks rewrites a few thousand postings instead of the whole main arrays (115 million);
    * an unsorted tail of the newest postings, which lookups scan (cheap while short).

    `fold` merges everything into the main arrays (before a snapshot is written, at the end of a
    whole load), dropping postings of dead rows, as `settle` does for the runs it merges. A row
    whose text changes gets a new row slot, so its old postings die with the old slot. A whole load
    goes through the runs too, so it holds its postings sorted (6 bytes each) rather than as an
    unsorted tail (16 bytes each, then sorted copies of it): 18 GB at 3 million chunks before.
    """

    FOLD_AT = 65_536  # tail postings (≈ 500 chunks) before they become a run: a tail scan stays ~0.1 ms
    _PIECE = 8_388_608  # postings placed at a time by a merge (bounds its index arrays: 64 MB)

    def __init__(self) -> None:
        self.keys = np.empty(0, dtype=np.int64)
        self.offsets = np.zeros(1, dtype=np.int64)
        self.rows = np.empty(0, dtype=np.int32)
        self.freq: np.ndarray = np.empty(0, dtype=np.float32)  # float16 where exact (narrow_freq)
        self._runs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # keys, offsets, rows, freq
        self._tail: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._tail_size = 0
        self._tail_cat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def tail_size(self) -> int:
        return self._tail_size

    @property
    def pending(self) -> int:
        """Postings outside the main arrays (runs and tail): `fold` has work to do when > 0."""
        return self._tail_size + sum(run[2].size for run in self._runs)

    def add(self, keys: np.ndarray, rows: np.ndarray, freq: np.ndarray) -> None:
        if keys.size:
            self._tail.append((keys, rows, freq))
            self._tail_size += keys.size
            self._tail_cat = None

    def _tail_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._tail_cat is None:
            if not self._tail:
                self._tail_cat = (self.keys[:0], self.rows[:0], self.freq[:0])
            else:
                self._tail = [tuple(np.concatenate(a) for a in zip(*self._tail, strict=True))]  # type: ignore[list-item]
                self._tail_cat = self._tail[0]
        return self._tail_cat

    def lookup(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        rows_parts, freq_parts = [], []
        for keys, offsets, rows, freq in ((self.keys, self.offsets, self.rows, self.freq), *self._runs):
            i = int(np.searchsorted(keys, key))
            if i < keys.size and keys[i] == key:
                lo, hi = offsets[i], offsets[i + 1]
                rows_parts.append(rows[lo:hi])
                freq_parts.append(freq[lo:hi])
        if self._tail_size:
            tk, tr, tf = self._tail_arrays()
            hit = tk == key
            if hit.any():
                rows_parts.append(tr[hit])
                freq_parts.append(tf[hit])
        if not rows_parts:
            return self.rows[:0], self.freq[:0]
        if len(rows_parts) == 1:
            return rows_parts[0], freq_parts[0]
        return np.concatenate(rows_parts), np.concatenate(freq_parts)

    def settle(self, alive: np.ndarray) -> None:
        """After writes: a tail past FOLD_AT becomes a sorted run, and the newest run merges with
        the one before it while it is at least half its size. The main arrays are left alone
        until the runs hold as many postings as they do (then `fold`)."""
        if self._tail_size <= self.FOLD_AT:
            return
        segments = self._tail_segments(alive)
        self._tail, self._tail_size, self._tail_cat = [], 0, None
        if segments:
            self._runs.append(self._merge(segments))
        while len(self._runs) >= 2 and 2 * self._runs[-1][2].size >= self._runs[-2][2].size:
            newer, older = self._runs.pop(), self._runs.pop()
            merged = [s for s in (_live(*older, alive), _live(*newer, alive)) if s[2].size]
            if merged:
                self._runs.append(self._merge(merged))
        if self.rows.size and sum(run[2].size for run in self._runs) >= self.rows.size:
            self.fold(alive)

    def fold(self, alive: np.ndarray) -> None:
        """Merge the runs and the tail into the main arrays, dropping postings of rows no longer
        alive. The tail is sorted in pieces of ~256k postings and every piece is merged in one
        linear pass."""
        segments = [s for s in (_live(self.keys, self.offsets, self.rows, self.freq, alive),) if s[2].size]
        segments += [s for s in (_live(*run, alive) for run in self._runs) if s[2].size]
        segments += self._tail_segments(alive)
        self._runs = []
        self._tail, self._tail_size, self._tail_cat = [], 0, None
        self.keys, self.offsets, self.rows, self.freq = self._merge(segments)

    _TAIL_PIECE = 262_144

    def _tail_segments(self, alive: np.ndarray) -> list[Segment]:
        """The tail's live postings as key-sorted segments, one per ~256k postings (sorting a whole
        index piecewise is several times faster than at once)."""
        segments = []
        for t_keys, t_rows, t_freq in self._tail_pieces():
            keep = alive[t_rows]
            t_keys, t_rows, t_freq = t_keys[keep], t_rows[keep], t_freq[keep]
            if not t_keys.size:
                continue
            order = np.argsort(t_keys)  # the order of a term's postings does not matter
            t_keys, t_rows, t_freq = t_keys[order], t_rows[order], narrow_freq(t_freq[order])
            starts = np.flatnonzero(np.concatenate(([True], t_keys[1:] != t_keys[:-1])))
            segments.append((t_keys[starts], np.diff(np.append(starts, t_keys.size)), t_rows, t_freq))
        return segments

    def _tail_pieces(self):
        piece: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        size = 0
        for part in self._tail:
            piece.append(part)
            size += part[0].size
            if size >= self._TAIL_PIECE:
                yield tuple(np.concatenate(a) for a in zip(*piece, strict=True))
                piece, size = [], 0
        if piece:
            yield tuple(np.concatenate(a) for a in zip(*piece, strict=True))

    @classmethod
    def _merge(cls, segments: list[Segment]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """k-way merge of key-sorted segments (keys, counts, rows, freq) into one layout (keys,
        offsets, rows, freq): each posting is written straight to its place, segment after segment
        within a term, _PIECE postings of a segment at a time."""
        if not segments:
            return (np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.int32),
                    np.empty(0, dtype=np.float32))
        keys = np.unique(np.concatenate([seg[0] for seg in segments]))
        places = [np.searchsorted(keys, seg[0]) for seg in segments]
        total = np.zeros(keys.size, dtype=np.int64)
        for place, seg in zip(places, segments, strict=True):
            total[place] += seg[1]
        offsets = np.zeros(keys.size + 1, dtype=np.int64)
        np.cumsum(total, out=offsets[1:])
        cursor = offsets[:-1].copy()
        rows = np.empty(int(offsets[-1]), dtype=np.int32)
        narrowed = [narrow_freq(seg[3]) for seg in segments]
        exact16 = all(f.dtype == np.float16 for f in narrowed)
        freq = np.empty(int(offsets[-1]), dtype=np.float16 if exact16 else np.float32)
        for place, (_, counts, seg_rows, _), seg_freq in zip(places, segments, narrowed, strict=True):
            ends = np.cumsum(counts)  # a term's postings end here within the segment
            first = 0  # the first term of this piece
            while first < counts.size:
                start = int(ends[first] - counts[first])
                last = max(first + 1, int(np.searchsorted(ends, start + cls._PIECE, side="right")))
                c = counts[first:last]
                piece_starts = ends[first:last] - c - start
                dest = np.repeat(cursor[place[first:last]] - piece_starts, c) + np.arange(int(c.sum()))
                end = int(ends[last - 1])
                rows[dest] = seg_rows[start:end]
                freq[dest] = seg_freq[start:end]
                cursor[place[first:last]] += c
                first = last
        return keys, offsets, rows, freq


def _live(keys: np.ndarray, offsets: np.ndarray, rows: np.ndarray, freq: np.ndarray, alive: np.ndarray) -> Segment:
    """One tier's postings of live rows, as a segment (keys, counts, rows, freq)."""
    counts = np.diff(offsets)
    live = alive[rows]
    if not live.all():
        counts = np.bincount(np.repeat(np.arange(keys.size), counts)[live], minlength=keys.size)
        rows, freq = rows[live], freq[live]
        keys, counts = keys[counts > 0], counts[counts > 0]
    return keys, counts, rows, freq


# Below 1/SPARSE_SHARE of the rows, `score_rows` adds up the matching rows' weights over those rows only
# (a sort of the postings) rather than over an array of every row. At 1,010,000 rows, 2 loaded cores:
# 20k matching postings 0.24 against 2.5 ms, 50k 0.8 / 3.3 ms, 250k 3.8 / 4.5 ms.
SPARSE_SHARE = 4


class ScopeStats:
    """BM25's corpus statistics over the rows a search's scope counts (memlane.adapters.local.search_legs:
    the live rows of the searched organization and projects): `counted` marks them (a boolean array by
    slot), `rows` is N and `tokens` is N · avgdl over them. A term's n is its postings counted through
    `counted`, per query."""

    __slots__ = ("counted", "rows", "tokens")

    def __init__(self, counted: np.ndarray, rows: int, tokens: float) -> None:
        self.counted = counted
        self.rows = rows
        self.tokens = tokens


def score_rows(
    postings: Postings,
    phrases: Sequence[int],
    stats: ScopeStats,
    admitted: np.ndarray,
    doclen: np.ndarray,
    size: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """BM25 of the `admitted` rows (a subset of `stats.counted`: the scope with its filters) that match
    the query's phrases (term keys; a term named twice counts twice, as two FTS5 phrases would): (row
    slots ascending, their scores), None when nothing matches. Each row's weights are added in the same
    order whichever way is taken below, so the scores are the same floats; a miss at a million rows
    skips building and scanning an array of every row."""
    found = _weights(postings, phrases, stats, admitted, doclen)
    if found is None:
        return None
    rows, weights = found
    if rows.size * SPARSE_SHARE >= size:
        dense = np.bincount(rows, weights=weights, minlength=size)
        slots = np.flatnonzero(dense)
        return slots, dense[slots]
    slots, inverse = np.unique(rows, return_inverse=True)
    return slots, np.bincount(inverse, weights=weights, minlength=slots.size)


def _idf(n_rows: int, n: int) -> float:
    idf = math.log((n_rows - n + 0.5) / (n + 0.5))
    return idf if idf > 0.0 else 1e-6


def _weights(
    postings: Postings,
    phrases: Sequence[int],
    stats: ScopeStats,
    admitted: np.ndarray,
    doclen: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Each admitted matching posting's BM25 weight (row slots, weights), term after term, with N, n
    and avgdl over the rows `stats` counts."""
    n_rows = stats.rows
    if not phrases or n_rows <= 0:
        return None
    avgdl = stats.tokens / n_rows if stats.tokens > 0 else 1.0
    same = admitted is stats.counted  # no filters: one gather per term, not two
    all_rows, all_weights = [], []
    for key, times in Counter(phrases).items():
        rows, freq = postings.lookup(key)
        if rows.size == 0:
            continue
        counted = stats.counted[rows]
        n = int(np.count_nonzero(counted))
        if n == 0:
            continue
        keep = counted if same else admitted[rows]
        if not keep.all():
            rows, freq = rows[keep], freq[keep]
        if rows.size == 0:
            continue
        f = freq.astype(np.float64)
        length = doclen[rows].astype(np.float64)
        all_rows.append(rows)
        all_weights.append((times * _idf(n_rows, n) * (K1 + 1.0)) * f / (f + K1 * (1.0 - B + B * length / avgdl)))
    if not all_rows:
        return None
    return np.concatenate(all_rows), np.concatenate(all_weights)
