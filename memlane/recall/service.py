"""Hybrid recall (spec §4): both legs under one scope, fused by memlane.recall.fusion, cached
(§4.7) by ranking.

The cache stores only the ranking — document ids, chunk ids and scores — never content. A hit
reads the documents and chunks from the metadata store, so a deleted or expired document can
never be served from the cache; its key includes each project's generation number, which every
write to the project bumps, so a save is visible in the very next recall.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime

from memlane import observability
from memlane.domain.errors import NotFoundError
from memlane.domain.models import chunk_id_for
from memlane.domain.principal import Principal
from memlane.domain.requests import RecalledChunk, RecalledDocument, RecallIn, RecallOut
from memlane.ports import RecallFilters, SearchScope, Services, project_scope_key
from memlane.recall.fusion import ScoredDocument, fuse_scores, group_by_document, recency_bonus
from memlane.recall.neighbours import add_neighbour_context
from memlane.recall.neighbours import changed as neighbours_changed

CACHE_TTL_SECONDS = 300


@dataclass
class RankedChunk:
    chunk_id: str
    chunk_index: int
    score: float


@dataclass
class RankedDocument:
    document_id: str
    score: float
    chunks: list[RankedChunk]


def _filters(body: RecallIn) -> RecallFilters:
    f = body.filters
    if f is None:
        return RecallFilters(include_superseded=body.include_versions)
    after = f.created_after
    if isinstance(after, date) and not isinstance(after, datetime):
        after = datetime(after.year, after.month, after.day, tzinfo=UTC)
    elif isinstance(after, datetime) and after.tzinfo is None:
        after = after.replace(tzinfo=UTC)
    return RecallFilters(
        content_types=tuple(f.content_type or ()),
        created_after=after,
        tags=tuple(f.tags or ()),
        include_superseded=body.include_versions,
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
    w = svc.settings.fusion
    material = {
        "org": scope.organization_id,
        "projects": [[k, generations.get(k, 0)] for k in scope_keys],
        "query": hashlib.sha256(body.query.encode()).hexdigest(),
        "limit": body.limit,
        "filters": body.filters.model_dump(mode="json") if body.filters else None,
        "versions": body.include_versions,
        "weights": [w.vector, w.text, w.recency, w.recency_days],
        "stages": recall_stages(svc),
        "embedder": svc.embedder.id,
        "format": 2,  # {"ranking", "stages"}
    }
    return "recall:" + hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def rank(svc: Services, scope: SearchScope, body: RecallIn) -> list[RankedDocument]:
    """The ranking for a query, before documents are loaded. Over-fetches so documents deleted
    since they were indexed can be skipped without coming up short."""
    return rank_with_stages(svc, scope, body)[0]


def rank_with_stages(svc: Services, scope: SearchScope, body: RecallIn) -> tuple[list[RankedDocument], list[str]]:
    """`rank`, and the stages that applied: "fusion", then "neighbours" when the neighbour stage
    changed a score (only messages of one conversation lift each other)."""
    now = scope.now or svc.clock.now()
    weights = svc.settings.fusion
    if not body.query.strip():
        docs = svc.metadata.recent_documents(
            scope.organization_id, scope.project_ids, scope.filters, now, body.limit
        )
        out = []
        for d in docs:
            score = recency_bonus(d.created_at, now, weights)
            chunks = [RankedChunk(chunk_id_for(d.id, 0), 0, score)] if d.chunk_count else []
            out.append(RankedDocument(d.id, score, chunks))
        return out, ["recent"]
    query_vector = svc.embedder.embed_query(body.query)
    k = max(svc.settings.candidate_k, body.limit * 5)
    legs = svc.index.search(scope, body.query, query_vector, k)
    groups = group_by_document(fuse_scores(legs, now, weights), svc.settings.max_chunks_per_document)
    fused = groups
    groups = after_fusion(svc, scope, groups)
    stages = ["fusion", *(["neighbours"] if neighbours_changed(fused, groups) else [])]
    return [
        RankedDocument(
            g.document_id, g.score, [RankedChunk(c.chunk_id, c.chunk_index, c.score) for c in g.chunks]
        )
        for g in groups[: body.limit * 2]
    ], stages


def recall_stages(svc: Services) -> dict[str, object]:
    """The stages after the fusion that apply to this composition, with their settings (also part
    of the cache key: a changed setting never serves an old ranking)."""
    stages: dict[str, object] = {}
    n = svc.settings.neighbours
    if n.active:
        stages["neighbours"] = [n.weight, n.window, n.decay, n.lookups]
    return stages


def after_fusion(svc: Services, scope: SearchScope, groups: list[ScoredDocument]) -> list[ScoredDocument]:
    """The spec's fused ranking (§4.5-4.6), then the stages around it."""
    n = svc.settings.neighbours
    if n.active:
        now = scope.now or svc.clock.now()
        groups = add_neighbour_context(
            groups,
            lambda ids: svc.metadata.conversation_around(scope.organization_id, ids, n.window, now),
            n,
        )
    return groups


def recall(svc: Services, who: Principal, body: RecallIn) -> RecallOut:
    started = time.perf_counter()
    now = svc.clock.now()
    scope = SearchScope(
        organization_id=who.organization_id,
        project_ids=resolve_scope(svc, who, body),
        filters=_filters(body),
        now=now,
    )
    key = cache_key(svc, scope, body)
    ranking: list[RankedDocument] | None = None
    stages: list[str] = ["fusion"]
    svc.metrics.count(observability.RECALLS)
    if key is not None and svc.cache is not None:
        cached = svc.cache.get(key, now)
        svc.metrics.count(observability.RECALL_CACHE_HITS if cached is not None else observability.RECALL_CACHE_MISSES)
        if cached is not None:
            entry = json.loads(cached)
            stages = list(entry["stages"])
            ranking = [
                RankedDocument(d["document_id"], d["score"], [RankedChunk(**c) for c in d["chunks"]])
                for d in entry["ranking"]
            ]
    if ranking is None:
        ranking, stages = rank_with_stages(svc, scope, body)
        if key is not None and svc.cache is not None:
            svc.cache.set(
                key,
                json.dumps({"ranking": [asdict(r) for r in ranking], "stages": stages}).encode(),
                CACHE_TTL_SECONDS,
                now,
                document_ids=[r.document_id for r in ranking],
            )
    results = materialize(svc, who, ranking, body, now)
    _touch(svc, who, [r.document_id for r in results], now)
    return RecallOut(
        results=results, total=len(results), query_time_ms=round((time.perf_counter() - started) * 1000, 2),
        stages=stages,
    )


def materialize(
    svc: Services, who: Principal, ranking: list[RankedDocument], body: RecallIn, now: datetime
) -> list[RecalledDocument]:
    """Load what the ranking names from the source of truth; skip whatever has since been
    deleted, expired or superseded."""
    docs = {
        d.id: d for d in svc.metadata.get_documents(who.organization_id, [r.document_id for r in ranking])
    }
    chunk_ids = [c.chunk_id for r in ranking for c in r.chunks]
    chunks = {c.id: c for c in svc.metadata.get_chunks_by_id(who.organization_id, chunk_ids)}
    results: list[RecalledDocument] = []
    for r in ranking:
        d = docs.get(r.document_id)
        if d is None or d.is_expired(now) or (d.superseded_by and not body.include_versions):
            continue
        shown = [
            RecalledChunk(
                memory_id=c.chunk_id,
                content=chunks[c.chunk_id].content,
                chunk_index=c.chunk_index,
                score=round(c.score, 6),
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
                source_url=d.source_url,
                content_type=d.content_type,
                created_at=d.created_at,
                project_id=d.project_id,
                chunks=shown,
                source_changed_at=d.source_changed_at,
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
