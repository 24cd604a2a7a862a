"""Hybrid recall (spec §4): both legs under one scope, fused by memlane.recall.fusion, cached
(§4.7) by ranking.

The cache stores only the ranking — document ids, chunk ids and scores — never content. A hit
reads the documents and chunks from the metadata store, so a deleted or expired document can
never be served from the cache; its key includes each project's generation number, which every
write to the project bumps, so a save is visible in the very next recall.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime

from memlane import observability
from memlane.domain.errors import NotFoundError
from memlane.domain.facts import kind_of, subject_of
from memlane.domain.models import chunk_id_for
from memlane.domain.principal import Principal
from memlane.domain.requests import RecalledChunk, RecalledDocument, RecallIn, RecallOut
from memlane.ports import RecallFilters, SearchScope, Services, project_scope_key
from memlane.recall.fusion import recency_bonus
from memlane.recall.pipeline import memory_stages, retrieve
from memlane.recall.recipes import MEMORY_RECALL, Recipe
from memlane.recall.relevance import calibration_for, match_of
from memlane.recall.rerank import RerankPipelineStage

CACHE_TTL_SECONDS = 300


@dataclass
class RankedChunk:
    chunk_id: str
    chunk_index: int
    score: float
    relevance: float | None = None


@dataclass
class RankedDocument:
    document_id: str
    score: float
    chunks: list[RankedChunk]
    relevance: float | None = None  # None: no query, so no evidence (the most recent documents)


@dataclass
class Ranking:
    documents: list[RankedDocument]
    stages: list[str]
    floor: float | None  # None: no query, so no floor
    rerank: dict[str, object] | None = None  # what the rerank stage did (None: no rerank stage)


def _post_filtered(body: RecallIn, *, query: bool = True) -> bool:
    """Whether materialize drops many of the documents the ranking names, so the ranking names
    more of them (×10). `as_of`: the legs leave out what was created after it (SearchScope.
    created_until) but return every version (the index knows a version is superseded, not since
    when): the versions replaced before `as_of` are dropped per document, hence the over-fetch. A kind
    filter: applied inside both search legs (RecallFilters.kinds), so no over-fetch when there is a
    query; without one the most recent documents come from the metadata store, which does not
    filter by kind. (Chunks indexed before the index held kinds pass the legs' kind filter and are
    dropped here when of another kind: until `memlane reindex`, such a page may come up short.)"""
    return body.as_of is not None or (not query and bool(body.filters and body.filters.kind))


def recall_filters(body: RecallIn) -> RecallFilters:
    f = body.filters
    # as_of reads older versions too: which one was current then is decided per document (materialize)
    versions = body.include_versions or body.as_of is not None
    if f is None:
        return RecallFilters(include_superseded=versions)
    kinds = tuple(dict.fromkeys(f.kind or ()))
    after = f.created_after
    if isinstance(after, date) and not isinstance(after, datetime):
        after = datetime(after.year, after.month, after.day, tzinfo=UTC)
    elif isinstance(after, datetime) and after.tzinfo is None:
        after = after.replace(tzinfo=UTC)
    return RecallFilters(
        content_types=tuple(f.content_type or ()),
        created_after=after,
        tags=tuple(f.tags or ()),
        keyphrases=tuple(f.keyphrases or ()),
        include_superseded=versions,
        kinds=kinds,
    )


def resolve_scope(svc: Services, who: Principal, body: RecallIn) -> tuple[str, ...]:
    """One project, several, or (neither given) all of the caller's projects."""
    wanted = [*([body.project_id] if body.project_id else []), *(body.project_ids or [])]
    if not wanted:
        return tuple(p.id for p in svc.metadata.list_projects(who.organization_id))
    for pid in wanted:
        if svc.metadata.get_project(who.organization_id, pid) is None:
            field = "project_id" if pid == body.project_id else "project_ids"
            raise NotFoundError(f"{field}: project {pid} not found")
    return tuple(dict.fromkeys(wanted))


def cache_key(svc: Services, scope: SearchScope, body: RecallIn) -> str | None:
    if svc.cache is None:
        return None
    scope_keys = [project_scope_key(scope.organization_id, p) for p in sorted(scope.project_ids)]
    generations = svc.cache.generations(scope_keys)
    w = MEMORY_RECALL.weights(svc)
    material = {
        "org": scope.organization_id,
        "projects": [[k, generations.get(k, 0)] for k in scope_keys],
        "query": hashlib.sha256(body.query.encode()).hexdigest(),
        "limit": body.limit,
        "filters": body.filters.model_dump(mode="json") if body.filters else None,
        "versions": body.include_versions,
        "as_of": body.as_of.isoformat() if body.as_of else None,
        # every field of the fusion: a setting changed between two runs never serves the other's ranking
        "weights": dataclasses.asdict(w),
        "stages": recall_stages(svc),
        "embedder": svc.embedder.id,
        "floor": floor_for(svc, body),
    }
    return "recall:" + hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def floor_for(svc: Services, body: RecallIn) -> float:
    """Below this nothing is returned: the request's `min_relevance` (strict abstention at the caller's
    own floor), else the strong threshold for a `strict` request (only strong matches), else the
    embedder's calibrated floor, under which strong and weak matches are both returned, each marked."""
    return MEMORY_RECALL.floor_for(calibration_for(svc.embedder.id), body.min_relevance, body.strict)


def strong_for(svc: Services) -> float:
    """At or above this a result is a strong match, below it (and at or above the floor) a weak one."""
    return calibration_for(svc.embedder.id).strong


def rank(svc: Services, scope: SearchScope, body: RecallIn, recipe: Recipe = MEMORY_RECALL) -> Ranking:
    """The ranking for a query, before documents are loaded (memlane.recall.pipeline). Over-fetches
    so documents deleted since they were indexed can be skipped without coming up short. `recipe`:
    recall's, or related memories' (memlane.services.related)."""
    now = scope.now or svc.clock.now()
    weights = recipe.weights(svc)
    query = bool(body.query.strip())
    post_filtered = _post_filtered(body, query=query)
    wanted = body.limit * (10 if post_filtered else 2)
    if not query:
        docs = svc.metadata.recent_documents(
            scope.organization_id, scope.project_ids, scope.filters, now,
            wanted if post_filtered else body.limit,
        )
        out = []
        for d in docs:
            score = recency_bonus(d.created_at, now, weights)
            chunks = [RankedChunk(chunk_id_for(d.id, 0), 0, score)] if d.chunk_count else []
            out.append(RankedDocument(d.id, score, chunks))
        return Ranking(out, ["recent"], None)
    retrieval = recipe.retrieval(svc, body.query, scope, results=body.limit, post_filtered=post_filtered,
                                 min_relevance=body.min_relevance, strict=body.strict)
    found = retrieve(svc, retrieval)
    return Ranking(
        [
            RankedDocument(
                g.document_id,
                g.score,
                [RankedChunk(c.chunk_id, c.chunk_index, c.score, round(c.relevance, 6)) for c in g.chunks],
                round(g.relevance, 6),
            )
            for g in found.documents[:wanted]
        ],
        found.stages,
        found.floor,
        next((s.report.as_dict() for s in retrieval.stages if isinstance(s, RerankPipelineStage) and s.report), None),
    )


def recall_stages(svc: Services) -> dict[str, object]:
    """The stages after the fusion that apply to this composition, with their settings (also part
    of the cache key: a changed setting never serves an old ranking)."""
    return {stage.name: stage.settings() for stage in memory_stages(svc, query="(any)")}


def recall(svc: Services, who: Principal, body: RecallIn) -> RecallOut:
    started = time.perf_counter()
    now = svc.clock.now()
    scope = SearchScope(
        organization_id=who.organization_id,
        project_ids=resolve_scope(svc, who, body),
        filters=recall_filters(body),
        now=now,
        created_until=body.as_of,
    )
    key = cache_key(svc, scope, body)
    ranking: Ranking | None = None
    svc.metrics.count(observability.RECALLS)
    if key is not None and svc.cache is not None:
        cached = svc.cache.get(key, now)
        svc.metrics.count(observability.RECALL_CACHE_HITS if cached is not None else observability.RECALL_CACHE_MISSES)
        if cached is not None:
            stored = json.loads(cached)
            ranking = Ranking(
                [
                    RankedDocument(d["document_id"], d["score"], [RankedChunk(**c) for c in d["chunks"]],
                                   d.get("relevance"))
                    for d in stored["documents"]
                ],
                stored["stages"],
                stored["floor"],
                stored.get("rerank"),
            )
    if ranking is None:
        ranking = rank(svc, scope, body)
        skipped = ranking.rerank is not None and ranking.rerank.get("status") == "skipped"
        if key is not None and svc.cache is not None and not skipped:  # a skipped rerank is tried again
            svc.cache.set(
                key,
                json.dumps(asdict(ranking)).encode(),
                CACHE_TTL_SECONDS,
                now,
                document_ids=[r.document_id for r in ranking.documents],
            )
    strong = strong_for(svc) if ranking.floor is not None else None
    results = materialize(svc, who, ranking.documents, body, now, strong)
    _touch(svc, who, [r.document_id for r in results], now)
    return RecallOut(
        results=results, total=len(results), query_time_ms=round((time.perf_counter() - started) * 1000, 2),
        floor=ranking.floor, strong=strong, stages=ranking.stages, rerank=ranking.rerank,
    )


def materialize(
    svc: Services, who: Principal, ranking: list[RankedDocument], body: RecallIn, now: datetime,
    strong: float | None = None,
) -> list[RecalledDocument]:
    """Load what the ranking names from the source of truth; skip whatever has since been
    deleted, expired or superseded. `strong`: the threshold that marks each result's `match`."""
    docs = {
        d.id: d for d in svc.metadata.get_documents(who.organization_id, [r.document_id for r in ranking])
    }
    chunk_ids = [c.chunk_id for r in ranking for c in r.chunks]
    chunks = {c.id: c for c in svc.metadata.get_chunks_by_id(who.organization_id, chunk_ids)}
    kinds = set(body.filters.kind) if body.filters and body.filters.kind else None
    as_of = body.as_of
    newer: dict[str, datetime] = {}
    if as_of is not None:  # when each superseding version was saved: the older one was current until then
        later = [d.superseded_by for d in docs.values() if d.superseded_by]
        newer = {d.id: d.created_at for d in svc.metadata.get_documents(who.organization_id, later)}
    results: list[RecalledDocument] = []
    for r in ranking:
        d = docs.get(r.document_id)
        if d is None or d.is_expired(now):
            continue
        if as_of is not None:
            if d.created_at > as_of:
                continue
            replaced_at = newer.get(d.superseded_by or "")
            if d.superseded_by and not body.include_versions and (replaced_at is None or replaced_at <= as_of):
                continue
        elif d.superseded_by and not body.include_versions:
            continue
        kind = kind_of(d)
        if kinds is not None and kind not in kinds:
            continue
        shown = [
            RecalledChunk(
                memory_id=c.chunk_id,
                content=chunks[c.chunk_id].content,
                chunk_index=c.chunk_index,
                score=round(c.score, 6),
                relevance=c.relevance,
                heading_path=chunks[c.chunk_id].heading_path,
                start_seconds=chunks[c.chunk_id].start_seconds,
                end_seconds=chunks[c.chunk_id].end_seconds,
            )
            for c in r.chunks
            if c.chunk_id in chunks
        ]
        results.append(
            RecalledDocument(
                document_id=d.id,
                title=d.title,
                summary=d.summary,
                score=round(r.score, 6),
                relevance=r.relevance,
                match=None if r.relevance is None or strong is None else match_of(r.relevance, strong),
                source_url=d.source_url,
                content_type=d.content_type,
                created_at=d.created_at,
                project_id=d.project_id,
                chunks=shown,
                source_changed_at=d.source_changed_at,
                kind=kind,
                subject=subject_of(d),
                superseded_by=d.superseded_by,
            )
        )
        if len(results) == body.limit:
            break
    return results


def _touch(svc: Services, who: Principal, document_ids: list[str], now: datetime) -> None:
    """last_accessed_at for returned documents: one batched write, off the response path when
    the composition provides a background runner."""
    if not document_ids:
        return
    if svc.background is not None:
        svc.background(svc.metadata.touch_documents, who.organization_id, document_ids, now)
    else:
        svc.metadata.touch_documents(who.organization_id, document_ids, now)
