"""raged collections on memlane: ingest items as documents, query them by strategy.

Mapping: collection → project (found or created by name); item → document whose id is derived
from (project, baseId), so re-ingesting an item replaces it; chunk → `<baseId>:<chunkIndex>`.

Filters (`repoId`, `lang`, `path` prefix) are pushed into both search legs through synthetic
document tags (the one document filter every SearchIndex applies inside both legs, locally and on
OpenSearch), then checked exactly on the stored item fields. Tags are lowercase because the AWS
engine matches them case-sensitively; the exact check restores case sensitivity.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memlane.collections.chunking import normalize_item_text
from memlane.collections.models import (
    IngestIn,
    IngestItem,
    IngestOut,
    QueryFilter,
    QueryIn,
    QueryOut,
    QueryResult,
    Routing,
)
from memlane.collections.router import RoutingDecision, Strategy, route
from memlane.documents.writer import WriteRequest
from memlane.documents.writing import write_in_request
from memlane.domain.answer_budget import MAX_ANSWER_BYTES, fit_answer, json_bytes
from memlane.domain.collection_items import RAGED_KEY, filter_tags_for, item_tag
from memlane.domain.errors import DependencyUnavailableError, NotFoundError
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus
from memlane.domain.principal import Principal
from memlane.ingest.chunking import CHUNKING_KEY
from memlane.ports import RecallFilters, SearchScope, Services
from memlane.recall.pipeline import retrieve
from memlane.recall.recipes import COLLECTION_HYBRID, COLLECTION_SEMANTIC
from memlane.services.projects import find_project_by_name

log = logging.getLogger(__name__)

METADATA_SCAN_DOCUMENTS = 1000  # documents a metadata query looks at (newest first)

_ITEM_NAMESPACE = uuid.UUID("0b7a4c52-6d8e-4f0a-9c4e-7261676564aa")


def document_id_for(project_id: str, base_id: str) -> str:
    """Deterministic, so the same item in the same collection is always the same document."""
    return str(uuid.uuid5(_ITEM_NAMESPACE, f"{project_id}\x00{base_id}"))


def pushdown_tag(flt: QueryFilter) -> str | None:
    """The one tag that narrows the search most surely (tags match any-of, so only one is sent);
    the exact check on every field follows."""
    if flt.repoId is not None and (t := item_tag("raged-repo:", flt.repoId)):
        return t
    if flt.path is not None and flt.path.endswith("/") and (t := item_tag("raged-path:", flt.path)):
        return t
    if flt.lang is not None and (t := item_tag("raged-lang:", flt.lang)):
        return t
    return None


def matches(fields: dict[str, Any], flt: QueryFilter | None) -> bool:
    if flt is None:
        return True
    if flt.repoId is not None and fields.get("repoId") != flt.repoId:
        return False
    if flt.lang is not None and fields.get("lang") != flt.lang:
        return False
    path = fields.get("path")
    return flt.path is None or (isinstance(path, str) and path.startswith(flt.path))


# ------------------------------------------------------------------------------------------ ingest


def _document(who: Principal, project_id: str, item: IngestItem, now: datetime) -> Document:
    text = normalize_item_text(item.text)
    meta = {k: v for k, v in item.metadata.items() if k != RAGED_KEY}
    fields = {"baseId": item.base_id, "source": item.source or item.base_id,
              "repoId": meta.get("repoId"), "path": meta.get("path"), "lang": meta.get("lang")}
    given_tags = meta.get("tags")
    user_tags = [t for t in given_tags if isinstance(t, str)] if isinstance(given_tags, list) else []
    synthetic = filter_tags_for(fields)
    metadata = {**meta, RAGED_KEY: {**fields, "tags": synthetic}, "tags": [*user_tags, *synthetic],
                CHUNKING_KEY: "lines"}
    title = fields["path"] or item.base_id
    return Document(
        id=document_id_for(project_id, item.base_id),
        organization_id=who.organization_id,
        project_id=project_id,
        user_id=who.user_id,
        title=title[:500],
        content=text,
        content_type=ContentType.CODE if fields["lang"] else ContentType.TEXT,
        source_url=None,
        metadata=metadata,
        content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        created_at=now,
        updated_at=now,
        status=DocumentStatus.PROCESSING,
    )


def ingest(svc: Services, who: Principal, body: IngestIn) -> IngestOut:
    """Write every item through the one write path, embedded together. Items that cannot be
    written now because the embedder or the index is down stay stored as `queued` and the job
    worker writes them later; the request answers 503 so the client knows they are not searchable
    yet."""
    project = find_project_by_name(svc, who, body.collection, create=True)
    now = svc.clock.now()
    latest: dict[str, IngestItem] = {item.base_id: item for item in body.items}  # a repeated id: last wins
    docs = [_document(who, project.id, item, now) for item in latest.values()]
    outcomes = write_in_request(svc, [WriteRequest(d, summarize=False) for d in docs])
    failed = [(d, o) for d, o in zip(docs, outcomes, strict=True) if not o.ok]
    if failed:
        error = failed[0][1].error
        assert error is not None
        if any(o.transient for _, o in failed):
            raise DependencyUnavailableError(
                f"{len(failed)} of {len(docs)} items are not searchable yet ({error}); they are kept "
                "and indexed when the service recovers"
            ) from error
        raise error
    return IngestOut(ok=True, upserted=sum(o.document.chunk_count for o in outcomes if o.document))


# ------------------------------------------------------------------------------------------- query


@dataclass
class _Hit:
    chunk: Chunk
    document: Document
    score: float


def query(svc: Services, who: Principal, body: QueryIn) -> QueryOut:
    started = time.perf_counter()
    decision = route(body.query, body.filter is not None, body.strategy)
    try:
        project = find_project_by_name(svc, who, body.collection)
    except NotFoundError:
        hits: list[_Hit] = []  # an unknown collection holds nothing, as in raged
    else:
        if decision.strategy is Strategy.METADATA:
            hits = _metadata_hits(svc, who, project.id, body)
        else:
            hits = _ranked_hits(svc, who, project.id, body, decision.strategy)
    fitted = fit_answer([_result(h) for h in hits], _without_metadata, _result_bytes)
    if fitted.metadata_omitted or fitted.left_out:
        log.info("query answer fitted to %d bytes: %d results without metadata, %d left out",
                 MAX_ANSWER_BYTES, fitted.metadata_omitted, fitted.left_out)
    return QueryOut(ok=True, results=fitted.results, routing=_routing(decision, started))


def _routing(decision: RoutingDecision, started: float) -> Routing:
    return Routing(strategy=decision.strategy, method=decision.method, confidence=decision.confidence,
                   durationMs=round((time.perf_counter() - started) * 1000), rule=decision.rule)


def fields_of(doc: Document) -> dict[str, Any]:
    stored = doc.metadata.get(RAGED_KEY)
    if isinstance(stored, dict):
        return stored
    # A document saved through /v3 into a project also used as a collection.
    return {"baseId": doc.id, "source": doc.source_url or doc.title,
            "repoId": None, "path": None, "lang": None, "tags": []}


def _result(hit: _Hit) -> QueryResult:
    fields = fields_of(hit.document)
    extra = {k: v for k, v in hit.document.metadata.items() if k not in (RAGED_KEY, "tags", CHUNKING_KEY)}
    synthetic = set(fields.get("tags") or [])
    user_tags = [t for t in hit.document.tags if t not in synthetic]
    if user_tags:
        extra["tags"] = user_tags
    payload = {**extra, "text": hit.chunk.content, "source": fields["source"],
               "chunkIndex": hit.chunk.chunk_index, "baseId": fields["baseId"],
               "repoId": fields.get("repoId"), "path": fields.get("path"), "lang": fields.get("lang")}
    return QueryResult(id=f"{fields['baseId']}:{hit.chunk.chunk_index}", score=round(hit.score, 6),
                       source=fields["source"], text=hit.chunk.content, payload=payload)


# The payload fields raged documents (plus baseId): what a result keeps when its answer is too big
# to echo every item's metadata (memlane.domain.answer_budget).
DOCUMENTED_PAYLOAD = ("text", "source", "chunkIndex", "baseId", "repoId", "path", "lang")


def _without_metadata(result: QueryResult) -> QueryResult:
    payload = {k: result.payload.get(k) for k in DOCUMENTED_PAYLOAD}
    return result.model_copy(update={"payload": {**payload, "metadataOmitted": True}})


def _result_bytes(result: QueryResult) -> int:
    return json_bytes(result.model_dump(mode="json"))


def _metadata_hits(svc: Services, who: Principal, project_id: str, body: QueryIn) -> list[_Hit]:
    """Filter-only: newest items first, their chunks in order, every score 1.0 (as raged)."""
    tag = pushdown_tag(body.filter) if body.filter else None
    docs = svc.metadata.recent_documents(who.organization_id, [project_id],
                                         RecallFilters(tags=(tag,) if tag else ()), svc.clock.now(),
                                         METADATA_SCAN_DOCUMENTS)
    hits: list[_Hit] = []
    for doc in docs:
        if not matches(fields_of(doc), body.filter):
            continue
        for chunk in svc.metadata.get_chunks(who.organization_id, doc.id):
            hits.append(_Hit(chunk=chunk, document=doc, score=1.0))
            if len(hits) == body.topK:
                return hits
    return hits


def _ranked_hits(svc: Services, who: Principal, project_id: str, body: QueryIn,
                 strategy: Strategy) -> list[_Hit]:
    """Semantic or hybrid: both run the one retrieval pipeline; semantic keeps only the vector leg and
    weighs only it, so the score is the cosine, as in raged."""
    now = svc.clock.now()
    text = body.query or ""
    tag = pushdown_tag(body.filter) if body.filter else None
    exact_pushdown = body.filter is None or (tag is not None and _single_field(body.filter))
    scope = SearchScope(organization_id=who.organization_id, project_ids=(project_id,),
                        filters=RecallFilters(tags=(tag,) if tag else ()), now=now)
    # No stages and no floor: raged's semantics (every match, ranked) and its result shape (exactly
    # id, score, source, text, payload: no room for `relevance`) stay; hybrid keeps the spec's formula
    # for code too (COLLECTION_HYBRID, memlane.recall.recipes).
    recipe = COLLECTION_SEMANTIC if strategy is Strategy.SEMANTIC else COLLECTION_HYBRID
    found = retrieve(svc, recipe.retrieval(svc, text, scope, results=body.topK, post_filtered=not exact_pushdown))
    return _materialize(svc, who, found.chunks, body, now)


def _single_field(flt: QueryFilter) -> bool:
    """A filter on one field whose tag is exact (repoId, lang, or a directory path)."""
    given = [v for v in (flt.repoId, flt.lang, flt.path) if v is not None]
    return len(given) == 1 and (flt.path is None or flt.path.endswith("/"))


def _materialize(svc: Services, who: Principal, scored: Iterable, body: QueryIn, now: datetime) -> list[_Hit]:
    ranked = list(scored)
    docs = {d.id: d for d in svc.metadata.get_documents(who.organization_id,
                                                        list(dict.fromkeys(s.document_id for s in ranked)))}
    keep = [s for s in ranked if (d := docs.get(s.document_id)) is not None and not d.is_expired(now)
            and d.status == DocumentStatus.READY and matches(fields_of(d), body.filter)][: body.topK]
    chunks = {c.id: c for c in svc.metadata.get_chunks_by_id(who.organization_id, [s.chunk_id for s in keep])}
    return [_Hit(chunk=chunks[s.chunk_id], document=docs[s.document_id], score=s.score)
            for s in keep if s.chunk_id in chunks]
