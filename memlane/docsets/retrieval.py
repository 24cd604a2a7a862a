"""POST /retrieve: documentation snippets sized for a model's context.

Ranking is memlane's one retrieval pipeline (memlane.recall.pipeline) over the search index's two
legs (k-NN and BM25), scoped to the docsets' projects inside both legs, with the docsets' fusion
weights; chunks below the documentation relevance floor (or `minRelevance`) are left out. On top of the ranking: at most
`maxChunksPerPage` chunks per page (so one long page cannot fill the answer), then a character
budget - results are added best first until the next one would not fit; that one is cut to the
room left (when a useful amount is left) and `truncated` says so.
"""

from __future__ import annotations

from memlane.docsets import schemas as s
from memlane.docsets.freshness import is_stale, refresh_pages
from memlane.docsets.service import DocsetContext
from memlane.domain.docsets import Docset, DocsetPage
from memlane.domain.errors import NotFoundError
from memlane.domain.models import Chunk
from memlane.domain.principal import Principal
from memlane.domain.quoting import escape_line_breaks
from memlane.ports import RecallFilters, SearchScope
from memlane.recall import pipeline
from memlane.recall.fusion import ScoredChunk
from memlane.recall.recipes import DOCS_RETRIEVE
from memlane.recall.relevance import calibration_for

# A result cut to fewer characters than this is not worth sending.
MIN_TRUNCATED_CONTENT = 200
ELLIPSIS = "…"


def format_snippet(title: str, url: str, breadcrumb: str, content: str) -> str:
    """The seed's layout: `## Title`, `Source: url`, `Section: breadcrumb` (when there is one), a
    blank line, the content."""
    # Title, URL and breadcrumb come from the crawled page: line breaks escaped, so none of them
    # can start a line of its own in the seed's layout (memlane.domain.quoting).
    lines = [f"## {escape_line_breaks(title)}", f"Source: {escape_line_breaks(url)}"]
    if breadcrumb:
        lines.append(f"Section: {escape_line_breaks(breadcrumb)}")
    return "\n".join(lines) + "\n\n" + content


def _docsets(dctx: DocsetContext, who: Principal, ids: list[str] | None) -> list[Docset]:
    if not ids:
        return dctx.store.list_docsets(who.organization_id)
    found = []
    for docset_id in dict.fromkeys(ids):
        docset = dctx.store.get_docset(who.organization_id, docset_id)
        if docset is None:
            raise NotFoundError(f"docsetIds: docset {docset_id} not found")
        found.append(docset)
    return found


def docs_floor(dctx: DocsetContext, body: s.RetrieveIn) -> float:
    """The request's minRelevance, else the embedder's calibrated floor for documentation."""
    return DOCS_RETRIEVE.floor_for(calibration_for(dctx.svc.embedder.id), body.minRelevance)


def rank_chunks(dctx: DocsetContext, who: Principal, docsets: list[Docset],
                body: s.RetrieveIn) -> list[ScoredChunk]:
    """Both legs under the docsets' scope, through memlane's retrieval pipeline by /retrieve's recipe
    (memlane.recall.recipes.DOCS_RETRIEVE: the docsets' fusion weights, enough candidates that the
    per-page cap still leaves topK results; `mode` keeps one leg, to measure each alone); chunks below
    the floor are left out."""
    svc = dctx.svc
    scope = SearchScope(organization_id=who.organization_id, project_ids=tuple(d.project_id for d in docsets),
                        filters=RecallFilters(), now=svc.clock.now())
    found = pipeline.retrieve(svc, DOCS_RETRIEVE.retrieval(
        svc, body.query, scope, results=body.topK, per_page=body.maxChunksPerPage,
        min_relevance=body.minRelevance, legs=body.mode, docsets=dctx))
    return found.chunks


def diversify(ranked: list[ScoredChunk], top_k: int, per_page: int) -> list[ScoredChunk]:
    picked: list[ScoredChunk] = []
    per_document: dict[str, int] = {}
    for chunk in ranked:
        used = per_document.get(chunk.document_id, 0)
        if used >= per_page:
            continue
        per_document[chunk.document_id] = used + 1
        picked.append(chunk)
        if len(picked) == top_k:
            break
    return picked


def _cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - len(ELLIPSIS))]
    space = cut.rfind(" ")
    if space > len(cut) * 0.8:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def retrieve(dctx: DocsetContext, who: Principal, body: s.RetrieveIn) -> s.RetrieveOut:
    """Ranked snippets with their pages' freshness; with refreshStale, the stale pages among them
    are re-fetched first (within refreshBudgetMs) and, when any changed, ranked again."""
    docsets = _docsets(dctx, who, body.docsetIds)
    if not docsets:
        return s.RetrieveOut(query=body.query, results=[], totalChars=0, truncated=False,
                             floor=docs_floor(dctx, body))
    out = _retrieve(dctx, who, body, docsets)
    if not body.refreshStale:
        return out
    by_id = {d.id: d for d in docsets}
    stale: dict[str, tuple[Docset, DocsetPage]] = {}
    for result in out.results:
        page = dctx.store.get_page(result.docsetId, result.pageId)
        if result.stale and page is not None and page.id not in stale:
            stale[page.id] = (by_id[result.docsetId], page)
    if not stale:
        return out
    refreshed, changed = refresh_pages(dctx, list(stale.values()), body.refreshBudgetMs)
    if changed:
        out = _retrieve(dctx, who, body, docsets)
    for result in out.results:
        result.refreshed = result.pageId in refreshed
    out.refreshedPages, out.changedPages = len(refreshed), len(changed)
    return out


def _retrieve(dctx: DocsetContext, who: Principal, body: s.RetrieveIn, docsets: list[Docset]) -> s.RetrieveOut:
    by_project = {d.project_id: d for d in docsets}
    # Over-fetch a little: a chunk may have been deleted since it was indexed.
    ranked = diversify(rank_chunks(dctx, who, docsets, body), body.topK + 5, body.maxChunksPerPage)
    chunks = {c.id: c for c in dctx.svc.metadata.get_chunks_by_id(who.organization_id,
                                                                   [r.chunk_id for r in ranked])}
    results: list[s.RetrieveResult] = []
    total = 0
    truncated = False
    pages: dict[str, DocsetPage | None] = {}
    now = dctx.crawl.clock_ms()
    for scored in ranked:
        chunk = chunks.get(scored.chunk_id)
        docset = by_project.get(chunk.project_id) if chunk else None
        if chunk is None or docset is None:
            continue
        if len(results) == body.topK:
            break
        page = pages.get(chunk.document_id)
        if page is None:
            page = pages[chunk.document_id] = dctx.store.get_page(docset.id, chunk.document_id)
        result, size = _result(chunk, docset, scored, chunk.content, body.formatSnippets)
        result = _with_freshness(dctx, result, docset, page, now)
        if total + size > body.maxTotalChars:
            truncated = True
            room = body.maxTotalChars - total - (size - len(chunk.content))
            if room < MIN_TRUNCATED_CONTENT:
                break
            cut = _cut(chunk.content, room)
            result, size = _result(chunk, docset, scored, cut, body.formatSnippets)
            results.append(_with_freshness(dctx, result, docset, page, now))
            total += size
            break
        results.append(result)
        total += size
    return s.RetrieveOut(query=body.query, results=results, totalChars=total, truncated=truncated,
                         floor=docs_floor(dctx, body))


def _with_freshness(dctx: DocsetContext, result: s.RetrieveResult, docset: Docset, page: DocsetPage | None,
                    now: int) -> s.RetrieveResult:
    if page is None:
        return result
    return result.model_copy(update={"fetchedAt": page.fetched_at, "lastModified": page.last_modified,
                                     "etag": page.etag, "stale": is_stale(dctx, docset, page, now)})


def _result(chunk: Chunk, docset: Docset, scored: ScoredChunk, content: str,
            with_snippet: bool) -> tuple[s.RetrieveResult, int]:
    title = chunk.title
    url = chunk.source_url or ""
    breadcrumb = " > ".join(chunk.heading_path)
    snippet = None
    size = len(content)
    if with_snippet:
        formatted = format_snippet(title, url, breadcrumb, content)
        size = len(formatted)
        snippet = s.Snippet(formatted=formatted, title=title, url=url, breadcrumb=breadcrumb, content=content,
                            charCount=size)
    heading = chunk.heading_path[-1] if chunk.heading_path else None
    result = s.RetrieveResult(chunkId=chunk.id, pageId=chunk.document_id, docsetId=docset.id, content=content,
                              url=url, title=title, heading=heading, score=round(scored.score, 6), snippet=snippet,
                              relevance=round(scored.relevance, 6))
    return result, size
