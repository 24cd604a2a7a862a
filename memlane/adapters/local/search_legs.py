"""The two search legs over the in-memory projection, under one scope mask: exact k-NN on the
vectors (cosine, vectors being L2-normalised) and BM25 on the postings; each returns its top k, and
`complete_legs` then gives each leg's list the other leg's candidates with their scores on it
(memlane.ports.SearchIndex.search)."""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NamedTuple

import numpy as np

try:
    from threadpoolctl import ThreadpoolController
except ImportError:  # an optimisation only (it comes with the local extra)
    ThreadpoolController = None

from memlane.adapters.local import bm25, vector_ann
from memlane.adapters.local.search_projection import Projection
from memlane.adapters.local.sqlite_db import epoch
from memlane.ports import UNKNOWN_KIND, Candidate, SearchScope


class Leg(NamedTuple):
    """A leg's candidates, best first, and their slots in the projection (the same order)."""

    candidates: list[Candidate]
    slots: np.ndarray


NO_LEG = Leg([], np.empty(0, dtype=np.int64))

_BLAS: list = []  # the process's BLAS thread-pool controller, found on first use


def _one_blas_thread():
    """The matrix-vector product of the vector leg on one BLAS thread. It is memory-bound, so a
    second thread gains little on an idle machine (11.4 vs 12.1 ms at 100k rows), but when the other
    core is busy the product waits for that thread's time slice: 8 ms instead of 0.7 ms at 10k
    rows, 16 instead of 12 ms at 100k, measured with a niced job on the second core."""
    if ThreadpoolController is None:
        return contextlib.nullcontext()
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


# The scope statistics of the last few scopes searched, per projection, valid while it is unchanged
# (its sequence number, slots and live rows): a boolean array by slot (1 MB at a million rows), N and
# N · avgdl. Counting them is one pass over the rows (~2-4 ms at a million), once per write, not per query.
_STATS: weakref.WeakKeyDictionary[Projection, tuple[tuple[int, int, int], dict]] = weakref.WeakKeyDictionary()
_STATS_SCOPES = 8


def scope_stats(m: Projection, scope: SearchScope) -> bm25.ScopeStats:
    """BM25's statistics over the live rows of the scope's organization and projects (not its filters:
    memlane.adapters.local.bm25); cached until the projection changes."""
    version = (m.seq, m.size, m.rows)
    held = _STATS.get(m)
    if held is None or held[0] != version:
        held = (version, {})
        _STATS[m] = held
    cache = held[1]
    key = (scope.organization_id, tuple(sorted(set(scope.project_ids))))
    stats = cache.get(key)
    if stats is None:
        counted = _project_rows(m, scope, _organization_rows(m, scope))
        rows = int(np.count_nonzero(counted))
        # a sum of whole token counts in float64: exact, as FTS5's integer totals (einsum does not copy
        # the rows out as a boolean index would: ~1 ms at a million rows instead of ~5)
        tokens = float(np.einsum("i,i->", m.doclen[: m.size], counted, dtype=np.float64)) if rows else 0.0
        stats = bm25.ScopeStats(counted, rows, tokens)
        if len(cache) >= _STATS_SCOPES:
            cache.pop(next(iter(cache)))
        cache[key] = stats
    return stats


def _organization_rows(m: Projection, scope: SearchScope) -> np.ndarray:
    """The live rows of the scope's organization."""
    n = m.size
    org = m.codes.get("org:" + scope.organization_id)
    if org < 0:
        return np.zeros(n, dtype=bool)
    return m.alive[:n] & (m.org[:n] == org)


def _project_rows(m: Projection, scope: SearchScope, organization_rows: np.ndarray) -> np.ndarray:
    """Of the organization's live rows, those of the scope's projects."""
    n = m.size
    projects = [c for c in (m.codes.get("project:" + p) for p in scope.project_ids) if c >= 0]
    if len(projects) == 1:  # the usual scope: a comparison is several times cheaper than isin
        return organization_rows & (m.project[:n] == projects[0])
    return organization_rows & np.isin(m.project[:n], projects)


def scope_mask(m: Projection, scope: SearchScope, allowed_docs: set[str] | None) -> np.ndarray:
    """The rows both legs may return: the scope's organization and projects (`scope_stats`'s rows),
    then its filters. With no filter that applies, the very array `scope_stats` counts (not a copy):
    callers only read it."""
    n = m.size
    base = scope_stats(m, scope).counted
    mask = base
    f = scope.filters

    def narrow(other: np.ndarray) -> None:
        nonlocal mask
        mask = (mask & other) if mask is base else np.logical_and(mask, other, out=mask)

    if scope.now is not None:
        forget = m.forget[:n] > scope.now.timestamp()
        if not forget.all():
            narrow(forget)
    if not f.include_superseded:
        narrow(~m.superseded[:n])
    if f.content_types:
        narrow(np.isin(m.content_type[:n], [m.codes.get("ct:" + ct.value) for ct in f.content_types]))
    if f.kinds:  # rows indexed before kinds were (UNKNOWN_KIND) pass: recall checks the document's kind
        kinds = [m.codes.get("kind:" + k) for k in (*f.kinds, UNKNOWN_KIND)]
        narrow(np.isin(m.kind[:n], [c for c in kinds if c >= 0]))
    created_until = epoch(scope.created_until)
    if created_until is not None:
        narrow(m.created[:n] <= created_until)
    created_after = epoch(f.created_after)
    if created_after is not None:
        narrow(m.created[:n] > created_after)  # strictly after, as in recent_documents
    if allowed_docs is not None:
        codes = [m.doc_codes.get(d) for d in allowed_docs]
        narrow(np.isin(m.document[:n], [c for c in codes if c >= 0]))
    return mask


def vector_leg(m: Projection, mask: np.ndarray, q: np.ndarray, k: int) -> Leg:
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return NO_LEG
    n = m.size
    # Vectors are L2-normalised at embedding time, so the dot product is the cosine. The
    # product runs over a view of the matrix; gathering the in-scope rows first copies them,
    # which only pays off when the scope holds a small part of the rows.
    with _one_blas_thread():
        scores = m.vectors[idx] @ q if idx.size < n // 4 else (m.vectors[:n] @ q)[idx]
    return _top(m, idx, scores, k)


# With the ANN: each project's graph is searched for OVERSAMPLE × k candidates that pass the scope's
# filters (widening the search while fewer than k pass); when at most GATHER_AT_MOST rows of a large
# graph pass them (a tag or a date filter), those rows are scored directly from the graph's vectors
# instead. Either way the candidates are re-scored exactly against the stored float32 vectors.
GATHER_AT_MOST = 4_096
OVERSAMPLE = 2


def ann_vector_leg(
    m: Projection,
    mask: np.ndarray,
    q: np.ndarray,
    k: int,
    scope: SearchScope,
    stored_vectors: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> Leg:
    """The vector leg over the HNSW partitions of the scope's projects. Candidates are re-scored
    exactly against the stored float32 vectors (`stored_vectors(rowids)` → the rowids still stored
    and their vectors): a row deleted from SQLite is dropped whatever the graph still holds."""
    assert m.ann is not None
    want = k * OVERSAMPLE
    found = []
    for project_id in scope.project_ids:
        code = m.codes.get("project:" + project_id)
        n = m.ann.size(scope.organization_id, project_id)
        if code < 0 or n == 0:
            continue
        # the scope's rows in this project (the mask already holds only them when the scope is one
        # project: no second pass over every row)
        project_mask = mask if len(scope.project_ids) == 1 else mask & (m.project[: m.size] == code)
        in_scope = int(np.count_nonzero(project_mask))
        if in_scope == 0:
            continue
        if in_scope <= GATHER_AT_MOST and n > vector_ann.EXACT_PARTITION:
            keys = m.rowid[np.flatnonzero(project_mask)]
            approx = m.ann.vectors(scope.organization_id, project_id, keys) @ q
            found.append(keys[np.argsort(-approx)[:want]])
            continue
        # as many as it takes for `want` rows of the scope, if the filters pass rows evenly
        count = min(n, max(want, math.ceil(want * n / in_scope)))
        while True:
            keys, _ = m.ann.search(scope.organization_id, project_id, q, count)
            slots = m.position.slots(keys)
            keep = slots >= 0
            keep[keep] = mask[slots[keep]]
            if int(keep.sum()) >= min(k, in_scope) or count >= n:
                break
            count = min(n, count * 4)
        found.append(keys[keep][:want])  # the graph's order: nearest first
    keys = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
    if keys.size == 0:
        return NO_LEG
    rowids, vectors = stored_vectors(keys)
    if rowids.size == 0:
        return NO_LEG
    slots = m.position.slots(rowids)
    ok = slots >= 0
    ok[ok] = mask[slots[ok]]
    if not ok.any():
        return NO_LEG
    scores = vectors[ok] @ q  # a few hundred rows: no BLAS thread pool to limit (that costs ~1 ms)
    return _top(m, slots[ok], scores, k)


def text_leg(
    m: Projection, mask: np.ndarray, phrases: list[int], k: int, scope: SearchScope, also: np.ndarray | None = None,
) -> Leg:
    """BM25 top-k under the scope: every in-scope row holding any query term is scored, with N, df and
    avgdl over the scope's organization and projects (`scope_stats`), so a project's ranking and
    scores, and the relevance read from them (memlane.recall.relevance), do not move when another
    project or another organization saves.

    `also`: row slots (the vector leg's candidates) whose scores join the top k when they hold a query
    term, with the same statistics: every row is scored here anyway, so this costs one lookup."""
    found = bm25.score_rows(m.postings, phrases, scope_stats(m, scope), mask, m.doclen, m.size)
    if found is None:
        return NO_LEG
    idx, scores = found
    keep = scores > 0
    if not keep.all():
        idx, scores = idx[keep], scores[keep]
    if idx.size == 0:
        return NO_LEG
    best = _best(idx, scores, k)
    if also is not None and also.size:
        # idx is ascending (bm25.score_rows): where each wanted slot would sit, and whether it is there
        at = np.minimum(np.searchsorted(idx, also), idx.size - 1)
        held = np.unique(at[idx[at] == also])
        best = np.concatenate([best, np.setdiff1d(held, best, assume_unique=False)])
        best = best[np.lexsort((idx[best], -scores[best]))]
    return _leg(m, idx[best], scores[best])


def cosines(
    m: Projection, slots: np.ndarray, q: np.ndarray,
    stored_vectors: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
) -> Leg:
    """The cosine of these rows to the query (the text leg's candidates the vector leg did not
    return): from the float32 matrix, or where the vectors live in the graphs (`m.ann`), exactly from
    the vectors SQLite stores, as the graphs' own candidates are re-scored."""
    if slots.size == 0:
        return NO_LEG
    if m.ann is None:
        with _one_blas_thread():
            scores = m.vectors[slots] @ q
        return _leg(m, slots, scores)
    assert stored_vectors is not None
    rowids, vectors = stored_vectors(m.rowid[slots])
    if rowids.size == 0:
        return NO_LEG
    found = m.position.slots(rowids)
    ok = found >= 0
    return _leg(m, found[ok], vectors[ok] @ q)


def complete_legs(
    m: Projection, vector: Leg, text: Leg, q: np.ndarray | None,
    stored_vectors: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
) -> Leg:
    """The vector leg with the cosines of the text leg's candidates it did not return, best first (the
    text leg gets the vector leg's candidates from `text_leg(also=...)`, where every row is scored)."""
    if q is None or text.slots.size == 0:
        return vector
    missing = text.slots[~np.isin(text.slots, vector.slots)]
    extra = cosines(m, missing, q, stored_vectors)
    if not extra.candidates:
        return vector
    return merge(vector, extra)


def merge(a: Leg, b: Leg) -> Leg:
    """Two legs' candidates (no chunk in both) as one, best first; equal scores keep `a`'s first."""
    candidates = a.candidates + b.candidates
    order = sorted(range(len(candidates)), key=lambda i: -candidates[i].score)
    slots = np.concatenate([a.slots, b.slots])
    return Leg([candidates[i] for i in order], slots[order])


def _best(idx: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best of `scores` (for rows `idx`), best first; ties in row order."""
    top = min(k, idx.size)
    best = np.argpartition(-scores, top - 1)[:top]
    return best[np.lexsort((idx[best], -scores[best]))]


def _top(m: Projection, idx: np.ndarray, scores: np.ndarray, k: int) -> Leg:
    """The k best of `scores` (for rows `idx`), best first; ties in row order."""
    best = _best(idx, scores, k)
    return _leg(m, idx[best], scores[best])


def _leg(m: Projection, slots: np.ndarray, scores: np.ndarray) -> Leg:
    return Leg(_candidates(m, slots, scores), np.asarray(slots, dtype=np.int64))


def _candidates(m: Projection, slots: np.ndarray, scores: np.ndarray) -> list[Candidate]:
    types = m.codes.values
    return [
        Candidate(
            chunk_id=m.chunk_ids[slot],
            document_id=m.doc_ids[m.document[slot]],
            chunk_index=int(m.chunk_index[slot]),
            score=float(scores[i]),
            created_at=datetime.fromtimestamp(float(m.created[slot]), UTC),
            content_type=_content_type(types, int(m.content_type[slot])),
        )
        for i, slot in enumerate(slots)
    ]


def _content_type(values: list[str], code: int) -> str | None:
    """A row's content type from its interned code ("ct:<value>"), None when not known."""
    if code < 0 or code >= len(values) or not values[code].startswith("ct:"):
        return None
    return values[code][3:]
