"""Related memories (spec §8.4): a document's semantic neighbours, for the memory page.

The document's own title, summary and opening text are the query, ranked by recall's pipeline
(memlane.recall.pipeline: the same legs, fusion and stages; the recipe RELATED_MEMORIES,
memlane.recall.recipes), in every project of the organization.
A whole document as the query scores differently from a question, so related memories have their
own relevance floor (`related_floor`, memlane.recall.relevance); each is marked strong or weak by the
same strong threshold as recall. The document itself and the other
versions of it are left out: they are the same memory, shown as its history.
"""

from __future__ import annotations

from memlane.documents.lifecycle import version_chain
from memlane.domain.errors import NotFoundError
from memlane.domain.principal import Principal
from memlane.domain.requests import RecallIn, RelatedDocument, RelatedOut
from memlane.ports import RecallFilters, SearchScope, Services
from memlane.recall.recipes import RELATED_MEMORIES
from memlane.recall.relevance import calibration_for
from memlane.recall.service import materialize, rank

QUERY_CHARS = 1_000  # the embedder reads ~256 tokens; more text only slows the text leg


def related_documents(svc: Services, who: Principal, document_id: str, limit: int) -> RelatedOut:
    now = svc.clock.now()
    doc = svc.metadata.get_document(who.organization_id, document_id)
    if doc is None or doc.is_expired(now):
        raise NotFoundError(f"document {document_id} not found")
    query = "\n".join(p for p in (doc.title, doc.summary or "", doc.content[:QUERY_CHARS]) if p).strip()
    same_memory = {v.id for v in version_chain(svc, doc)}
    projects = tuple(p.id for p in svc.metadata.list_projects(who.organization_id))
    floor = RELATED_MEMORIES.floor_for(calibration_for(svc.embedder.id))
    if not query or not projects:
        return RelatedOut(document_id=doc.id, related=[], floor=floor)
    body = RecallIn(query=query[:10_000], limit=min(limit + len(same_memory), 100))
    scope = SearchScope(organization_id=who.organization_id, project_ids=projects,
                        filters=RecallFilters(), now=now)
    ranking = [r for r in rank(svc, scope, body, RELATED_MEMORIES).documents if r.document_id not in same_memory]
    strong = calibration_for(svc.embedder.id).strong
    found = materialize(svc, who, ranking, body, now, strong)[:limit]
    return RelatedOut(document_id=doc.id, related=[
        RelatedDocument(document_id=r.document_id, title=r.title, summary=r.summary, score=r.score,
                        relevance=r.relevance, match=r.match, content_type=r.content_type, project_id=r.project_id,
                        created_at=r.created_at)
        for r in found
    ], floor=floor)
