"""Hybrid recall (spec §4): both legs under one scope, fused by memlane.recall.fusion."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

from memlane.domain.errors import NotFoundError
from memlane.domain.requests import RecalledChunk, RecalledDocument, RecallIn, RecallOut
from memlane.ports import RecallFilters, SearchScope
from memlane.recall.fusion import fuse_scores, group_by_document, recency_bonus
from memlane.services.context import Principal, Services


def _filters(body: RecallIn) -> RecallFilters:
    f = body.filters
    if f is None:
        return RecallFilters()
    after = f.created_after
    if isinstance(after, date) and not isinstance(after, datetime):
        after = datetime(after.year, after.month, after.day, tzinfo=UTC)
    elif isinstance(after, datetime) and after.tzinfo is None:
        after = after.replace(tzinfo=UTC)
    return RecallFilters(content_types=tuple(f.content_type or ()), created_after=after, tags=tuple(f.tags or ()))


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


def recall(svc: Services, who: Principal, body: RecallIn) -> RecallOut:
    started = time.perf_counter()
    now = svc.clock.now()
    scope = SearchScope(organization_id=who.organization_id, project_ids=resolve_scope(svc, who, body),
                        filters=_filters(body), now=now)
    weights = svc.settings.fusion
    results: list[RecalledDocument] = []

    if not body.query.strip():
        docs = svc.metadata.recent_documents(who.organization_id, scope.project_ids, scope.filters, now, body.limit)
        for d in docs:
            chunks = svc.metadata.get_chunks(who.organization_id, d.id)[:1]
            score = recency_bonus(d.created_at, now, weights)
            results.append(_document(d, score, [RecalledChunk(memory_id=c.id, content=c.content,
                                                              chunk_index=c.chunk_index, score=score,
                                                              heading_path=c.heading_path) for c in chunks]))
    else:
        query_vector = svc.embedder.embed_query(body.query)
        k = max(svc.settings.candidate_k, body.limit * 5)
        legs = svc.index.search(scope, body.query, query_vector, k)
        groups = group_by_document(fuse_scores(legs, now, weights), svc.settings.max_chunks_per_document)
        # Over-fetch documents: one may have been deleted or expired since it was indexed.
        top = groups[: body.limit * 2]
        docs = {d.id: d for d in svc.metadata.get_documents(who.organization_id, [g.document_id for g in top])}
        chunk_ids = [c.chunk_id for g in top for c in g.chunks]
        chunks = {c.id: c for c in svc.metadata.get_chunks_by_id(who.organization_id, chunk_ids)}
        for g in top:
            d = docs.get(g.document_id)
            if d is None or d.is_expired(now):
                continue
            shown = [RecalledChunk(memory_id=c.chunk_id, content=chunks[c.chunk_id].content,
                                   chunk_index=c.chunk_index, score=round(c.score, 6),
                                   heading_path=chunks[c.chunk_id].heading_path)
                     for c in g.chunks if c.chunk_id in chunks]
            results.append(_document(d, g.score, shown))
            if len(results) == body.limit:
                break

    _touch(svc, who, [r.document_id for r in results], now)
    return RecallOut(results=results, total=len(results),
                     query_time_ms=round((time.perf_counter() - started) * 1000, 2))


def _document(d, score: float, chunks: list[RecalledChunk]) -> RecalledDocument:
    return RecalledDocument(document_id=d.id, title=d.title, summary=d.summary, score=round(score, 6),
                            source_url=d.source_url, content_type=d.content_type, created_at=d.created_at,
                            project_id=d.project_id, chunks=chunks)


def _touch(svc: Services, who: Principal, document_ids: list[str], now: datetime) -> None:
    """last_accessed_at for returned documents: one batched write, off the response path when
    the composition provides a background runner."""
    if not document_ids:
        return
    if svc.background is not None:
        svc.background(svc.metadata.touch_documents, who.organization_id, document_ids, now)
    else:
        svc.metadata.touch_documents(who.organization_id, document_ids, now)
