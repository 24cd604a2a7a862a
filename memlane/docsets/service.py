"""What the Mem-Oracle routes call: index a docset, report its status, refresh it, delete it, and
keep track of client sessions. Every call is scoped to the caller's organization; another
organization's docset is a 404, like one that does not exist.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from memlane.crawl.errors import FetchError, UnsafeURLError
from memlane.crawl.frontier import CrawlPlan
from memlane.crawl.ssrf import AddressCategory, NetworkPolicy, check_url
from memlane.docsets import schemas as s
from memlane.docsets.pages import CrawlContext, admissible, crawl_page
from memlane.documents.receipts import delete_with_receipt
from memlane.domain.docsets import (
    ClientSession,
    Docset,
    DocsetPage,
    DocsetStatus,
    PageCounts,
    PageStatus,
    page_id_for,
)
from memlane.domain.errors import InvalidInputError, NotFoundError
from memlane.domain.models import Project
from memlane.domain.principal import Principal
from memlane.domain.tuning import FusionWeights
from memlane.ports import CrawlDispatcher, DocsetStore, Services

HOUR_MS = 3_600_000

log = logging.getLogger(__name__)

# Refused addresses that a flag of the local server can allow (link-local and cloud metadata never).
PRIVATE_CATEGORIES = frozenset({AddressCategory.LOOPBACK, AddressCategory.PRIVATE})


@dataclass
class DocsetContext:
    """The docset service's dependencies, composed at the edge (the local server, a Lambda)."""

    crawl: CrawlContext
    policy: NetworkPolicy
    dispatcher: CrawlDispatcher | None = None
    # What a host that can allow loopback and private addresses says when it refuses one (the local
    # server's flag); None where nothing can allow them (AWS).
    private_network_hint: str | None = None

    @property
    def svc(self) -> Services:
        return self.crawl.svc

    @property
    def store(self) -> DocsetStore:
        return self.crawl.store

    @property
    def fusion(self) -> FusionWeights:
        """The weights documentation is ranked with (DocsetSettings.fusion): the DocsetShelf port."""
        return self.crawl.settings.fusion

    @property
    def candidate_k(self) -> int:
        """Candidates per search leg at least (DocsetSettings.candidate_k): the DocsetShelf port."""
        return self.crawl.settings.candidate_k


# --------------------------------------------------------------------------- docsets


def _docset_or_404(dctx: DocsetContext, who: Principal, docset_id: str, field: str = "docsetId") -> Docset:
    docset = dctx.store.get_docset(who.organization_id, docset_id)
    if docset is None:
        raise NotFoundError(f"{field}: docset {docset_id} not found")
    return docset


def index_docset(dctx: DocsetContext, who: Principal, body: s.IndexIn) -> s.IndexOut:
    """Create the docset (or return the existing one for the same site and seed) and start its
    crawl. With waitForSeed the seed page is crawled in this request, so it is searchable when
    the response arrives."""
    max_pages = body.maxPages or dctx.crawl.settings.max_pages
    plan = CrawlPlan(body.baseUrl.strip(), body.seedSlug.strip(), body.allowedPaths, max_pages=max_pages)
    try:
        check_url(plan.seed_url, policy=dctx.policy)
    except UnsafeURLError as exc:
        hint = dctx.private_network_hint if exc.category in PRIVATE_CATEGORIES else None
        raise UnsafeURLError(plan.seed_url, f"{exc.reason}; {hint}" if hint else exc.reason, field="baseUrl",
                             category=exc.category) from exc
    except FetchError as exc:
        raise InvalidInputError("baseUrl", f"cannot be reached: {exc.message}") from exc

    existing = next((d for d in dctx.store.list_docsets(who.organization_id) if d.seed_url == plan.seed_url
                     and d.allowed_paths == list(body.allowedPaths or [])), None)
    docset = existing if existing is not None else _create(dctx, who, body, plan, max_pages)
    seed_indexed = _seed_state(dctx, docset) == PageStatus.INDEXED
    if body.waitForSeed and not seed_indexed:
        seed_indexed = _crawl_seed(dctx, docset)
    if dctx.dispatcher is not None:
        dctx.dispatcher.pages_queued(docset)
    counts = _counts(dctx, docset)
    return s.IndexOut(docsetId=docset.id, status=counts.status().value, seedIndexed=seed_indexed)


def _create(dctx: DocsetContext, who: Principal, body: s.IndexIn, plan: CrawlPlan, max_pages: int) -> Docset:
    name = (body.name or "").strip() or urlsplit(plan.base_url).netloc
    now = dctx.crawl.clock_ms()
    docset = Docset(organization_id=who.organization_id, project_id="", name=name, base_url=plan.base_url,
                    seed_url=plan.seed_url, seed_slug=body.seedSlug.strip(),
                    allowed_paths=list(body.allowedPaths or []), max_pages=max_pages, created_at=now,
                    updated_at=now, last_refreshed_at=now)
    # One project per docset: its scope in both search legs, and what /v3/recall can name.
    project = dctx.svc.metadata.create_project(Project(
        organization_id=who.organization_id, name=name, slug=f"docs-{docset.id}",
        description=f"Documentation crawled from {plan.seed_url}"))
    docset = docset.model_copy(update={"project_id": project.id})
    dctx.store.create_docset(docset)
    dctx.store.add_pages(docset, [plan.seed_url], now)
    return docset


def _seed_state(dctx: DocsetContext, docset: Docset) -> PageStatus | None:
    page = dctx.store.get_page(docset.id, page_id_for(docset.id, docset.seed_url))
    redirect = "redirects to "
    if page is not None and page.status == PageStatus.SKIPPED and (page.error or "").startswith(redirect):
        target_url = (page.error or "").removeprefix(redirect)
        target = dctx.store.get_page(docset.id, page_id_for(docset.id, target_url))
        return target.status if target else None
    return page.status if page else None


def _crawl_seed(dctx: DocsetContext, docset: Docset) -> bool:
    seed_id = page_id_for(docset.id, docset.seed_url)
    page = dctx.store.claim_page(docset.id, seed_id, dctx.crawl.clock_ms())
    if page is not None:
        final = crawl_page(dctx.crawl, docset, page).page
        return final is not None and final.status == PageStatus.INDEXED
    # Another worker has it: wait (within the API's time budget) for it to finish.
    deadline = time.monotonic() + dctx.crawl.settings.wait_for_seed_timeout_s
    while time.monotonic() < deadline:
        state = _seed_state(dctx, docset)
        if state in (PageStatus.INDEXED, PageStatus.SKIPPED) or state is None:
            return state == PageStatus.INDEXED
        time.sleep(0.1)
    return False


class PageSkip(StrEnum):
    """Why a queued page was not crawled by this worker."""

    DOCSET_DELETED = "skipped: docset deleted"
    NOT_PENDING = "skipped: not pending (done or claimed)"
    PAGE_REMOVED = "skipped: page removed"


@dataclass
class PageOutcome:
    page_id: str
    status: PageStatus | PageSkip  # the page's status after this crawl, or why it was not crawled
    links_dispatched: int = 0

    @property
    def skipped(self) -> bool:
        """Not crawled here (another worker holds or did it, or it is gone), or crawled and skipped."""
        return isinstance(self.status, PageSkip) or self.status is PageStatus.SKIPPED


def crawl_queued_page(dctx: DocsetContext, org_id: str, docset_id: str, page_id: str) -> PageOutcome:
    """A page worker's whole job for one queued page (an SQS message on AWS): claim it, crawl it
    (memlane.docsets.pages.crawl_page), hand its links to the dispatcher and, when it failed
    transiently, ask for it again after its backoff. A page id is deterministic and the claim is
    atomic, so a duplicate message finds the page claimed or done and does nothing; a message
    redelivered after its worker died reclaims the page once it has been `processing` for longer
    than any live worker holds one."""
    store = dctx.store
    docset = store.get_docset(org_id, docset_id)
    if docset is None:
        return PageOutcome(page_id, PageSkip.DOCSET_DELETED)
    now = dctx.crawl.clock_ms()
    stuck_before = now - dctx.crawl.settings.stuck_after_s * 1000
    page = store.claim_page(docset.id, page_id, now, stuck_before=stuck_before)
    if page is None:
        return PageOutcome(page_id, PageSkip.NOT_PENDING)
    crawled = crawl_page(dctx.crawl, docset, page)
    dispatched = 0
    if crawled.queued and dctx.dispatcher is not None:
        # Every page this one links to, normalised as the store keys them: a message for a page
        # that is already known is dropped by its claim, and one whose first message was lost
        # gets another chance.
        linked = [page_id_for(docset.id, url) for url in admissible(docset, crawled.links)]
        dctx.dispatcher.pages_found(docset, linked)
        dispatched = len(linked)
    recorded = crawled.page
    if recorded is not None and recorded.status == PageStatus.ERROR and recorded.retry_at and dctx.dispatcher:
        dctx.dispatcher.page_due(docset, recorded.id, recorded.retry_at)
    return PageOutcome(page.id, recorded.status if recorded is not None else PageSkip.PAGE_REMOVED,
                       dispatched)


def _counts(dctx: DocsetContext, docset: Docset) -> PageCounts:
    stuck_before = dctx.crawl.clock_ms() - dctx.crawl.settings.stuck_after_s * 1000
    return dctx.store.page_counts(docset.id, stuck_before)


def docset_out(dctx: DocsetContext, docset: Docset, *, show_stuck: bool | None = None,
               stuck_details: bool = False) -> s.DocsetOut:
    """`show_stuck` None: stuckPages only when there are some (GET /status without includeStuck)."""
    counts = _counts(dctx, docset)
    status = counts.status().value
    include = show_stuck if show_stuck is not None else counts.stuck > 0
    index_status = s.IndexStatusOut(
        docsetId=docset.id, totalPages=counts.total, indexedPages=counts.indexed, pendingPages=counts.pending,
        errorPages=counts.error, skippedPages=counts.skipped, totalChunks=counts.chunks, status=status,
        stuckPages=counts.stuck if include else None, retriedPages=counts.retried)
    details = None
    if stuck_details:
        stuck_before = dctx.crawl.clock_ms() - dctx.crawl.settings.stuck_after_s * 1000
        details = [s.StuckPageOut(id=p.id, url=p.url, status=p.status.value, attempts=p.attempts,
                                  claimedAt=p.claimed_at, errorMessage=p.error)
                   for p in dctx.store.stuck_pages(docset.id, stuck_before)]
    return s.DocsetOut(id=docset.id, name=docset.name, projectId=docset.project_id, baseUrl=docset.base_url,
                       seedSlug=docset.seed_slug,
                       allowedPaths=docset.allowed_paths, createdAt=docset.created_at,
                       updatedAt=max(docset.updated_at, counts.last_update or 0), status=status,
                       indexStatus=index_status, stuckPageDetails=details)


def status(dctx: DocsetContext, who: Principal, docset_id: str | None, include_stuck: bool) -> s.StatusOut:
    docsets = ([_docset_or_404(dctx, who, docset_id)] if docset_id
               else dctx.store.list_docsets(who.organization_id))
    return s.StatusOut(docsets=[docset_out(dctx, d, show_stuck=True if include_stuck else None,
                                           stuck_details=include_stuck) for d in docsets])


def get_docset(dctx: DocsetContext, who: Principal, docset_id: str) -> s.DocsetOut:
    return docset_out(dctx, _docset_or_404(dctx, who, docset_id, "id"), show_stuck=True)


def list_pages(dctx: DocsetContext, who: Principal, docset_id: str, status_filter: str | None,
               limit: int, offset: int) -> s.PagesOut:
    docset = _docset_or_404(dctx, who, docset_id, "id")
    wanted = None
    if status_filter:
        try:
            wanted = PageStatus(status_filter)
        except ValueError as exc:
            choices = ", ".join(p.value for p in PageStatus)
            raise InvalidInputError("status", f"must be one of {choices}") from exc
    limit = max(1, min(s.MAX_PAGES_LIMIT, limit))
    offset = max(0, offset)
    pages, total = dctx.store.list_pages(docset.id, wanted, limit, offset)
    return s.PagesOut(pages=[_page_out(p) for p in pages], total=total, limit=limit, offset=offset)


def _page_out(p: DocsetPage) -> s.PageOut:
    return s.PageOut(id=p.id, url=p.url, path=p.path, title=p.title, status=p.status.value,
                     errorMessage=p.error, fetchedAt=p.fetched_at, indexedAt=p.indexed_at)


def delete_docset(dctx: DocsetContext, who: Principal, docset_id: str) -> s.DeleteOut:
    """Pages, their documents, chunks and vectors (memlane's one removal path, which also drops
    cached results), then the page records, the docset and its project."""
    docset = _docset_or_404(dctx, who, docset_id, "id")
    if dctx.dispatcher is not None:
        dctx.dispatcher.docset_deleted(docset.id)
    requested = dctx.svc.clock.now()
    pages = [doc for _, document_id in dctx.store.page_ids(docset.id) if document_id
             and (doc := dctx.svc.metadata.get_document(who.organization_id, document_id)) is not None]
    receipt = delete_with_receipt(dctx.svc, who.organization_id, pages, "docset", subject=docset.id,
                                  requested_at=requested)
    dctx.store.delete_docset(who.organization_id, docset.id)
    return s.DeleteOut(success=True, docsetId=docset.id, receiptId=receipt.id, verified=receipt.verified)


# --------------------------------------------------------------------------- refresh


def _refresh_one(dctx: DocsetContext, docset: Docset, *, force: bool, max_age_h: float, full: bool,
                 queued_wording: bool) -> s.RefreshOut:
    now = dctx.crawl.clock_ms()
    counts = _counts(dctx, docset)
    last = docset.last_refreshed_at or docset.created_at
    age_h = (now - last) / HOUR_MS
    if not force and counts.active:
        return s.RefreshOut(docsetId=docset.id, status=DocsetStatus.INDEXING.value, refreshed=False,
                            message=f"{docset.name} is being indexed ({counts.active} pages to go)")
    if not force and age_h < max_age_h:
        return s.RefreshOut(docsetId=docset.id, status=counts.status().value, refreshed=False,
                            message=f"{docset.name} is fresh (refreshed {age_h:.1f} hours ago; "
                                    f"maxAge {max_age_h:g} hours)")
    total, preserved, cleared = dctx.store.requeue_docset(docset.id, now, clear_hashes=full)
    total += len(dctx.store.add_pages(docset, [docset.seed_url], now))  # the seed, if it had disappeared
    updated = docset.model_copy(update={"last_refreshed_at": now, "updated_at": now})
    dctx.store.update_docset(updated)
    if dctx.dispatcher is not None:
        dctx.dispatcher.pages_queued(updated)
    mode = "full reindex" if full else "incremental"
    message = (f"Queued {total} pages for refresh ({mode})" if queued_wording
               else f"Refreshing {total} pages from {docset.name} ({mode} mode)")
    return s.RefreshOut(docsetId=docset.id, status="pending", refreshed=True, message=message,
                        incremental=s.IncrementalOut(preservedHashes=preserved, clearedHashes=cleared))


def refresh(dctx: DocsetContext, who: Principal, body: s.RefreshIn) -> s.RefreshOut:
    if body.docsetId:
        docset = _docset_or_404(dctx, who, body.docsetId)
    elif body.baseUrl:
        docset = _by_base_url(dctx, who, body.baseUrl)
    else:
        raise InvalidInputError("docsetId", "docsetId or baseUrl is required")
    max_age = body.maxAge if body.maxAge is not None else dctx.crawl.settings.default_max_age_hours
    return _refresh_one(dctx, docset, force=body.force, max_age_h=max_age, full=body.fullReindex,
                        queued_wording=False)


def _by_base_url(dctx: DocsetContext, who: Principal, base_url: str) -> Docset:
    wanted = base_url.strip().rstrip("/")
    for docset in dctx.store.list_docsets(who.organization_id):
        if docset.base_url.rstrip("/") == wanted or docset.base_url.rstrip("/") == wanted.lower():
            return docset
    raise NotFoundError(f"baseUrl: no docset for {base_url}")


def refresh_all(dctx: DocsetContext, who: Principal, body: s.RefreshAllIn) -> s.RefreshAllOut:
    docsets = dctx.store.list_docsets(who.organization_id)
    return _refresh_many(dctx, docsets, force=body.force, max_age_h=body.maxAge, full=body.fullReindex)


def _refresh_many(dctx: DocsetContext, docsets: list[Docset], *, force: bool, max_age_h: float | None,
                  full: bool) -> s.RefreshAllOut:
    max_age = max_age_h if max_age_h is not None else dctx.crawl.settings.default_max_age_hours
    outcomes = [_refresh_one(dctx, d, force=force, max_age_h=max_age, full=full, queued_wording=True)
                for d in docsets]
    done = [o for o in outcomes if o.refreshed]
    return s.RefreshAllOut(total=len(docsets), refreshed=len(done), results=done)


def refresh_stale_docsets(dctx: DocsetContext) -> s.RefreshAllOut:
    """The schedule's job (daily by default), across every organization: refresh what is older
    than the default max age. Idempotent: a second run right after finds everything fresh, and
    a missed run is caught up by the next."""
    return _refresh_many(dctx, dctx.store.list_docsets(), force=False, max_age_h=None, full=False)


# --------------------------------------------------------------------------- sessions


def _session_out(x: ClientSession) -> s.SessionOut:
    return s.SessionOut(id=x.id, clientType=x.client_type, connectedAt=x.connected_at,
                        lastHeartbeat=x.last_heartbeat)


def register_session(dctx: DocsetContext, who: Principal, body: s.SessionRegisterIn) -> s.RegisterOut:
    """Registering an id again is a heartbeat: connectedAt is kept, lastHeartbeat moves on."""
    now = dctx.crawl.clock_ms()
    existing = dctx.store.get_session(who.organization_id, body.sessionId)
    session = ClientSession(id=body.sessionId, organization_id=who.organization_id,
                            client_type=body.clientType if body.clientType is not None
                            else (existing.client_type if existing else None),
                            connected_at=existing.connected_at if existing else now, last_heartbeat=now)
    dctx.store.put_session(session)
    total = len(dctx.store.list_sessions(who.organization_id))
    return s.RegisterOut(success=True, session=_session_out(session), totalSessions=total)


def unregister_session(dctx: DocsetContext, who: Principal, body: s.SessionUnregisterIn) -> s.UnregisterOut:
    existed = dctx.store.delete_session(who.organization_id, body.sessionId)
    remaining = len(dctx.store.list_sessions(who.organization_id))
    return s.UnregisterOut(success=True, existed=existed, remainingSessions=remaining,
                           shouldStop=remaining == 0)


def list_sessions(dctx: DocsetContext, who: Principal) -> s.SessionsOut:
    sessions = [_session_out(x) for x in dctx.store.list_sessions(who.organization_id)]
    return s.SessionsOut(sessions=sessions, count=len(sessions))
