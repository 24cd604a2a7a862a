"""The crawl of one page, in steps a worker of any kind can call.

    page = store.claim_page(docset.id, page_id, now)      # or claim_pages(...) for a batch
    work = fetch_and_prepare(ctx, docset, page)           # network + extraction, no writes
    admit_links(ctx, docset, work.links)                  # newly found pages join the crawl
    index_pages(ctx, [work, ...])  or  finish_page(ctx, work)   # embed + write, or record the outcome

`crawl_page` runs them all for one page: that is what an AWS page-worker Lambda calls for each
SQS message (and what /index does for the seed when `waitForSeed` is set). The local runner calls
the same steps from several fetch threads and hands the `index` outcomes to one embedding thread,
so the embedder gets full batches across pages.

A page's document has the page's id, so reprocessing a page overwrites it. Unchanged pages (a
304 for the stored ETag / Last-Modified, or the same SHA-256 of the cleaned content) are not
re-embedded.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

from memlane import observability
from memlane.config.docsets import DocsetSettings
from memlane.crawl.errors import FetchError, UnsafeURLError
from memlane.crawl.head import head_signals
from memlane.crawl.robots import RobotsPolicy, load_robots, robots_url
from memlane.crawl.similarity import Sketch
from memlane.crawl.sitemap import collect_sitemap_urls
from memlane.crawl.urls import UrlScope, extract_links, is_probably_html, normalize_url
from memlane.docsets.duplicates import (
    KnownPage,
    SketchCache,
    aggregate_count,
    aggregate_reason,
    aggregates_holding,
    judge,
)
from memlane.documents.lifecycle import remove_document
from memlane.documents.writer import DocumentWriter, WriteRequest
from memlane.domain.docsets import Docset, DocsetPage, PageStatus, epoch_ms, page_id_for
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType, Document, DocumentStatus
from memlane.ingest.chunking import CHUNKING_KEY, TextChunk, chunk_document
from memlane.ingest.pipeline import content_hash, prepare
from memlane.ports import DocsetStore, Fetcher, FetchResult, Services

log = logging.getLogger(__name__)

CRAWLER_USER = "crawler"
ROBOTS_TTL_S = 3600.0
MAX_ERROR_CHARS = 500

# markdownify writes links as [text](url "title"); the text may hold one level of brackets (index
# pages link "[[1]](...)", API docs "[`round(x[, n])`](...)"), the URL one level of parentheses.
# Link text may wrap across lines (bounded, so a stray "[" cannot swallow a page).
_MD_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\]){0,500})\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")

Outcome = Literal["index", "unchanged", "skipped", "removed", "error"]


class RobotsCache:
    """robots.txt per site, kept for an hour; thread-safe (fetch threads share it)."""

    def __init__(self, fetcher: Fetcher, ttl_s: float = ROBOTS_TTL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._fetcher = fetcher
        self._ttl = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._policies: dict[str, tuple[float, RobotsPolicy]] = {}

    def policy_for(self, url: str) -> RobotsPolicy:
        key = robots_url(url)
        with self._lock:
            hit = self._policies.get(key)
            if hit is not None and self._clock() - hit[0] < self._ttl:
                return hit[1]
        policy = load_robots(self._fetcher, url)
        if not policy.temporary:  # a 5xx robots.txt is asked again on the next page
            with self._lock:
                self._policies[key] = (self._clock(), policy)
        return policy


@dataclass
class CrawlContext:
    """What the page steps need: memlane's ports, the docset store and a fetcher built for the
    deployment's network policy."""

    svc: Services
    store: DocsetStore
    fetcher: Fetcher
    settings: DocsetSettings
    robots: RobotsCache
    # The shingle samples of each docset's indexed pages: what a new page is compared with.
    sketches: SketchCache | None = None

    def __post_init__(self) -> None:
        if self.sketches is None:
            self.sketches = SketchCache(self.store)

    def clock_ms(self) -> int:
        """Now, in the docset records' epoch milliseconds, from memlane's one clock."""
        return epoch_ms(self.svc.clock.now())


@dataclass
class PageWork:
    """What fetching and preparing one page produced; nothing is written yet."""

    page: DocsetPage
    outcome: Outcome
    links: list[str] = field(default_factory=list)
    message: str | None = None
    transient: bool = False
    document: Document | None = None
    pieces: list[TextChunk] = field(default_factory=list)  # the document's text, cut in the fetch thread
    fetched: FetchResult | None = None
    # A page that redirected to another URL of the docset is recorded as skipped; the content is
    # processed under the target page (`page`).
    redirected: DocsetPage | None = None
    # The page was indexed before with other content: memories saved from it learn that it changed.
    changed: bool = False
    # The HTTP status that closed the page to us (401/403/404/410), when that is why it is skipped.
    http_status: int | None = None
    # The shingle sample of the page's text: compared with the set's indexed pages before writing.
    sketch: Sketch | None = None


# --------------------------------------------------------------------------- content


def strip_markdown_links(text: str) -> tuple[str, int]:
    """Links become their text: URLs are noise to both search legs and to a model reading a
    snippet (the snippet names its source). Returns the text and how much of it is link text."""
    linked = 0

    def keep_text(match: re.Match[str]) -> str:
        nonlocal linked
        linked += len(match.group(1))
        return match.group(1)

    return _MD_LINK.sub(keep_text, text), linked


def link_density(linked_chars: int, text: str) -> float:
    visible = len(text.strip())
    return linked_chars / visible if visible else 1.0


def docset_scope(docset: Docset) -> UrlScope:
    return UrlScope.for_docset(docset.base_url, docset.allowed_paths or None)


def admissible(docset: Docset, urls: Sequence[str], scope: UrlScope | None = None,
               robots: RobotsPolicy | None = None) -> list[str]:
    """The normalised URLs, in order and without duplicates, that belong to the docset: same host,
    under allowedPaths, probably a page, and allowed by robots.txt."""
    scope = scope or docset_scope(docset)
    out: dict[str, None] = {}
    for url in urls:
        normalized = normalize_url(url)
        if (normalized is None or normalized in out or not scope.contains(normalized)
                or not is_probably_html(None, normalized)):
            continue
        if robots is not None and not robots.allowed(normalized):
            continue
        out[normalized] = None
    return list(out)


# --------------------------------------------------------------------------- step 1: fetch and prepare


def fetch_and_prepare(ctx: CrawlContext, docset: Docset, page: DocsetPage) -> PageWork:
    """Fetch a claimed page (conditionally when it was indexed before) and turn it into what
    should happen next. Network and CPU only: nothing is written."""
    fetched = _fetch(ctx, page)
    if isinstance(fetched, PageWork):
        return fetched
    result, robots = fetched
    links = _sitemap_links(ctx, docset, robots) if page.url == docset.seed_url else []
    if result.not_modified:
        return PageWork(page, "unchanged", links=links, fetched=result)
    if result.skipped:
        return _gone(page, f"HTTP {result.status}", links, http_status=result.status)
    target: DocsetPage = page
    redirected: DocsetPage | None = None
    final_url = normalize_url(result.url) or page.url
    if final_url != page.url:
        new_target, redirected = _redirect_target(ctx, docset, page, final_url)
        if new_target is None:
            return PageWork(page, "skipped", links=links, message=redirected.error if redirected else None,
                            fetched=result)
        target = new_target
    work = _page_work(ctx, docset, target, result, final_url, links)
    work.redirected = redirected
    return work


def _fetch(ctx: CrawlContext, page: DocsetPage) -> tuple[FetchResult, RobotsPolicy] | PageWork:
    """The page fetched, and the site's robots.txt that let it be; or, when it could not be, the
    page's work: an error (transient or not), or gone (disallowed)."""
    try:
        robots = ctx.robots.policy_for(page.url)
        if robots.temporary:
            return PageWork(page, "error", message=f"robots.txt unavailable: {robots.reason}", transient=True)
        if not robots.allowed(page.url):
            return _gone(page, "disallowed by robots.txt")
        known = page.content_hash is not None and page.document_id is not None
        return ctx.fetcher.fetch(page.url, etag=page.etag if known else None,
                                 last_modified=page.last_modified if known else None), robots
    except UnsafeURLError as exc:
        return PageWork(page, "error", message=exc.message)
    except FetchError as exc:
        return PageWork(page, "error", message=exc.message, transient=exc.transient)


def _page_work(ctx: CrawlContext, docset: Docset, target: DocsetPage, result: FetchResult, final_url: str,
               links: list[str]) -> PageWork:
    """A fetched page at its final URL: not HTML, or declined by its own head (gone, its links
    followed), or prepared to be written."""
    if not is_probably_html(result.content_type, final_url):
        return _gone(target, f"not an HTML page ({result.content_type or 'no content type'})", links)
    links = links + extract_links(result.content, final_url)
    declined = _declined_by_head(docset, result.content, final_url)
    if declined is not None:
        reason, canonical = declined
        work = _gone(target, reason, links + ([canonical] if canonical else []))
        work.fetched = result
        return work
    work = _prepare(ctx, docset, target, result)
    work.links = links + work.links
    return work


def _declined_by_head(docset: Docset, html: bytes, url: str) -> tuple[str, str | None] | None:
    """The page's own head says it is not the page to index: its canonical URL is another page of
    this docset on the same site (that page is queued instead), or it asks for noindex (mdBook's
    print.html does). A canonical URL elsewhere is not followed."""
    signals = head_signals(html, url)
    canonical = signals.canonical
    if canonical is not None and _page_key(canonical) != _page_key(url):
        here, there = urlsplit(url), urlsplit(canonical)
        if (here.scheme, here.netloc) == (there.scheme, there.netloc) and docset_scope(docset).contains(canonical):
            return f"canonical version is {canonical}: indexed there", canonical
    if signals.noindex:
        return "the page asks not to be indexed (robots noindex): links followed, not indexed", None
    return None


def _page_key(url: str) -> str:
    """A URL as the same page: `/guide`, `/guide/` and `/guide/index.html` are one (a site's
    canonical link often names its page so, and the server redirects between them)."""
    for suffix in ("/index.html", "/index.htm", "/"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def _gone(page: DocsetPage, reason: str, links: list[str] | None = None, *,
          http_status: int | None = None) -> PageWork:
    """A page closed to us: skipped, and removed from the index when it had been indexed."""
    outcome: Outcome = "removed" if page.document_id else "skipped"
    return PageWork(page, outcome, links=links or [], message=reason, http_status=http_status)


def _redirect_target(ctx: CrawlContext, docset: Docset, page: DocsetPage,
                     final_url: str) -> tuple[DocsetPage | None, DocsetPage | None]:
    """A page that redirects within the docset is indexed under its target URL, once."""
    now = ctx.clock_ms()
    source = page.model_copy(update={"status": PageStatus.SKIPPED, "retry_at": None, "updated_at": now,
                                     "fetched_at": now, "error": f"redirects to {final_url}"})
    if not docset_scope(docset).contains(final_url):
        source.error = f"redirected outside the docset to {final_url}"
        return None, source
    target = DocsetPage(id=page_id_for(docset.id, final_url), docset_id=docset.id,
                        organization_id=docset.organization_id, url=final_url,
                        path=urlsplit(final_url).path or "/",
                        status=PageStatus.PROCESSING, retry_at=None, claimed_at=now, attempts=1,
                        created_at=now, updated_at=now)
    if not ctx.store.insert_page(target):
        existing = ctx.store.get_page(docset.id, target.id)
        # Already known: indexed under that URL by its own claim (or being so right now).
        if existing is None or existing.status != PageStatus.PENDING:
            return None, source
        claimed = ctx.store.claim_page(docset.id, target.id, now)
        if claimed is None:
            return None, source
        target = claimed
    return target, source


def _prepare(ctx: CrawlContext, docset: Docset, page: DocsetPage, result: FetchResult) -> PageWork:
    try:
        prepared = prepare(result.content, ContentType.HTML, None, page.url)
    except InvalidInputError as exc:
        return PageWork(page, "skipped", message=f"no text content ({exc.message})", fetched=result)
    text, linked = strip_markdown_links(prepared.extracted.text)
    if not text.strip():
        return PageWork(page, "skipped", message="no text content", fetched=result)
    density = link_density(linked, text)
    if density >= ctx.settings.navigation_link_density:
        work = _gone(page, f"navigation page ({density:.0%} of its text is links): links followed, "
                           "not indexed")
        work.fetched = result
        return work
    digest = content_hash(text)
    title = prepared.title
    sketch = Sketch.of_text(text)
    if page.content_hash == digest and page.document_id is not None:
        return PageWork(page.model_copy(update={"title": title, "sketch": sketch.stored()}), "unchanged",
                        fetched=result, sketch=sketch)
    document = _document(ctx, docset, page, title, text, digest)
    pieces = chunk_document(document, ctx.settings.chunk_max_tokens, ctx.settings.chunk_overlap_tokens)
    if not pieces:
        return PageWork(page, "skipped", message="no text content", fetched=result)
    changed = page.content_hash is not None and page.document_id is not None
    page = page.model_copy(update={"title": title, "content_hash": digest, "sketch": sketch.stored()})
    return PageWork(page, "index", document=document, pieces=pieces, fetched=result, changed=changed,
                    sketch=sketch)


def _document(ctx: CrawlContext, docset: Docset, page: DocsetPage, title: str, text: str,
              digest: str) -> Document:
    svc = ctx.svc
    now = svc.clock.now()
    existing = svc.metadata.get_document(docset.organization_id, page.id)
    summary = svc.summarizer.summarize(title, text, ContentType.HTML, None)
    keywords = [str(k) for k in summary.metadata.get("keyphrases") or summary.metadata.get("tags") or []]
    # The page is cut by the docset's chunk size wherever it is written again (a retry, reindex).
    chunking = {"max_tokens": ctx.settings.chunk_max_tokens, "overlap_tokens": ctx.settings.chunk_overlap_tokens}
    metadata = {"docset_id": docset.id, "docset": docset.name, "tags": ["docs"], "keywords": keywords,
                CHUNKING_KEY: chunking}
    return Document(id=page.id, organization_id=docset.organization_id, project_id=docset.project_id,
                    user_id=CRAWLER_USER, title=title, content=text, summary=summary.summary or None,
                    content_type=ContentType.HTML, source_url=page.url, metadata=metadata,
                    content_hash=digest, created_at=existing.created_at if existing else now, updated_at=now,
                    status=DocumentStatus.PROCESSING)


def _sitemap_links(ctx: CrawlContext, docset: Docset, robots: RobotsPolicy) -> list[str]:
    """The seed page also brings the site's sitemaps: those robots.txt names, else /sitemap.xml at
    the site root and in the docset's base directory."""
    listed = list(robots.sitemaps)
    if not listed:
        base = urlsplit(docset.base_url)
        listed = [f"{base.scheme}://{base.netloc}/sitemap.xml"]
        directory = f"{base.scheme}://{base.netloc}{base.path[: base.path.rfind('/') + 1] or '/'}"
        if f"{directory}sitemap.xml" not in listed:
            listed.append(f"{directory}sitemap.xml")
    try:
        found = collect_sitemap_urls(ctx.fetcher, listed, max_urls=docset.max_pages, max_sitemaps=20)
    except Exception:  # noqa: BLE001 - a broken sitemap never fails the seed page
        log.warning("sitemap discovery failed for docset %s", docset.id, exc_info=True)
        return []
    return [entry.url for entry in found.entries]


# --------------------------------------------------------------------------- step 2: admit links


def admit_links(ctx: CrawlContext, docset: Docset, links: Sequence[str]) -> list[str]:
    """Queue the links that belong to the docset and are new to it; returns the URLs queued."""
    if not links:
        return []
    try:
        robots = ctx.robots.policy_for(docset.seed_url)
    except (UnsafeURLError, FetchError):
        robots = None
    urls = admissible(docset, links, robots=robots if robots and not robots.temporary else None)
    return ctx.store.add_pages(docset, urls, ctx.clock_ms())


# --------------------------------------------------------------------------- step 3: write


def index_pages(ctx: CrawlContext, works: Sequence[PageWork]) -> list[DocsetPage | None]:
    """Write the documents of several pages through the one write path (their chunks embedded
    together), then record each page: indexed, or an error retried with backoff. Returns the pages
    as recorded, in order."""
    works = [w for w in works if w.outcome == "index" and w.document is not None]
    if not works:
        return []
    repeats = _repeats(ctx, works)
    writing = [w for w in works if w.page.id not in repeats]
    outcomes = DocumentWriter(ctx.svc).write_many(
        [WriteRequest(w.document, pieces=w.pieces, summarize=False) for w in writing if w.document is not None]
    )
    written = dict(zip((w.page.id for w in writing), outcomes, strict=True))
    now = ctx.clock_ms()
    recorded: list[DocsetPage | None] = []
    for w in works:
        if w.page.id in repeats:
            reason = repeats[w.page.id]
            if reason == JOIN_CONTENDED:
                retry = w.page.model_copy(update={"content_hash": None, "sketch": None})
                recorded.append(finish_page(ctx, PageWork(retry, "error", message=reason, transient=True,
                                                          redirected=w.redirected)))
                continue
            recorded.append(finish_page(ctx, PageWork(w.page, "skipped", message=reason,
                                                      fetched=w.fetched, redirected=w.redirected)))
            continue
        outcome = written[w.page.id]
        if outcome.error is not None:
            message = getattr(outcome.error, "message", None) or f"{type(outcome.error).__name__}: {outcome.error}"
            # The page keeps no content hash, so its retry writes the document again even when the
            # text has not changed since.
            # Nor a sample: its text leaves the set's known texts until it is written.
            retry = w.page.model_copy(update={"content_hash": None, "sketch": None})
            recorded.append(finish_page(ctx, PageWork(retry, "error", message=message, transient=outcome.transient,
                                                      redirected=w.redirected)))
            if ctx.sketches is not None:
                ctx.sketches.drop(w.page.docset_id, w.page.id)
            continue
        assert outcome.document is not None
        page = w.page.model_copy(update={
            "status": PageStatus.INDEXED, "document_id": outcome.document.id,
            "chunk_count": outcome.document.chunk_count, "error": None, "retry_at": None, "indexed_at": now,
            "fetched_at": now, "updated_at": now, **_validators(w.fetched)})
        ctx.store.save_page(page)
        if w.redirected is not None:
            _save_redirected(ctx, w.redirected)
        ctx.svc.metrics.count(observability.PAGES_CRAWLED)
        if w.changed:
            _note_change(ctx, page, now)
        retired = _retire_if_aggregate(ctx, page, w)
        if retired is not None:
            recorded.append(retired)
            continue
        recorded.append(page)
        _retire_aggregates_holding(ctx, w)
    return recorded


# Times a page re-judges after other pages joined its set first; each failed attempt means another
# page joined, so this is reached only under a storm of registrations (the page is retried later).
MAX_JOIN_ATTEMPTS = 50
JOIN_CONTENDED = "other pages of the set kept joining while this one was judged: retried"


def _repeats(ctx: CrawlContext, works: Sequence[PageWork]) -> dict[str, str]:
    """The pages of a batch that repeat pages of their set already known (indexed, being written,
    or earlier in the batch), each with why (memlane.docsets.duplicates); JOIN_CONTENDED for a page
    that could not join. The others join the set's known texts, each by a compare-and-set on the
    docset's text version, so no two workers judge against a set lacking the other's page."""
    cache = ctx.sketches
    if cache is None:
        return {}
    repeats: dict[str, str] = {}
    for w in works:
        if w.sketch is None:
            continue
        docset_id = w.page.docset_id
        joining = KnownPage(w.page.id, w.page.url, _as_stored(w.sketch))
        for _ in range(MAX_JOIN_ATTEMPTS):
            version = ctx.store.text_version(docset_id)
            known = cache.index(docset_id, version)
            with cache.lock:
                reason = judge(w.page.id, w.sketch, known)
            if reason is not None:
                repeats[w.page.id] = reason
                break
            if ctx.store.register_text(docset_id, w.page.id, w.sketch.stored(), version):
                cache.add(docset_id, joining, version + 1)
                break
        else:
            repeats[w.page.id] = JOIN_CONTENDED
    return repeats


def _retire_if_aggregate(ctx: CrawlContext, page: DocsetPage, w: PageWork) -> DocsetPage | None:
    """A page just written judges itself again against its set as it is now: a print version that
    joined before its chapters, whose chapters joined while it was written, leaves the index (the
    chapters, written earlier, could not retire a page still being written). Returns the page as
    recorded when it left."""
    cache = ctx.sketches
    if cache is None or w.sketch is None:
        return None
    known = cache.index(page.docset_id, ctx.store.text_version(page.docset_id))
    with cache.lock:
        held = aggregate_count(page.id, _as_stored(w.sketch), known)
    if not held:
        return None
    cache.drop(page.docset_id, page.id)
    log.info("page %s holds %d pages of its set: taken out of the index", page.url, held)
    return finish_page(ctx, PageWork(page, "skipped", message=aggregate_reason(held)))


def _as_stored(sketch: Sketch) -> Sketch:
    """The sample as the page record keeps it (capped), as other workers will read it."""
    return Sketch.of_stored(sketch.stored())


def _retire_aggregates_holding(ctx: CrawlContext, w: PageWork) -> None:
    """A print or single-page version indexed before its chapters leaves the index once the
    chapters it holds are indexed."""
    cache = ctx.sketches
    if cache is None or w.sketch is None:
        return
    new = KnownPage(w.page.id, w.page.url, _as_stored(w.sketch))
    known = cache.index(w.page.docset_id, ctx.store.text_version(w.page.docset_id))
    with cache.lock:
        retiring = aggregates_holding(new, known)
    for aggregate, held in retiring:
        cache.drop(w.page.docset_id, aggregate.page_id)
        page = ctx.store.get_page(w.page.docset_id, aggregate.page_id)
        if page is None or page.status != PageStatus.INDEXED:
            continue
        log.info("page %s holds %d pages of its set: taken out of the index", page.url, held)
        finish_page(ctx, PageWork(page, "skipped", message=aggregate_reason(held)))


def _note_change(ctx: CrawlContext, page: DocsetPage, now: int) -> None:
    docset = ctx.store.get_docset(page.organization_id, page.docset_id)
    if docset is None:
        return
    try:
        mark_memories_of_changed_page(ctx.svc, docset, page.url, now)
    except Exception:  # noqa: BLE001 - the page is indexed; a missed mark is not worth failing it
        log.warning("could not mark memories saved from %s", page.url, exc_info=True)


def mark_memories_of_changed_page(svc: Services, docset: Docset, url: str, when_ms: int) -> int:
    """Memories saved from `url` (outside the docset's own project) learn that the page changed."""
    when = datetime.fromtimestamp(when_ms / 1000, UTC)
    marked = svc.metadata.mark_source_changed(docset.organization_id, url, when, exclude_project_id=docset.project_id)
    if marked:
        log.info("page %s changed: %d memories saved from it marked", url, marked)
    return marked


def _validators(result: FetchResult | None) -> dict[str, str | None]:
    if result is None:
        return {}
    return {"etag": result.etag, "last_modified": result.last_modified}


def finish_page(ctx: CrawlContext, work: PageWork) -> DocsetPage | None:
    """Record an outcome that needs no embedding. Returns the page as saved (None if removed)."""
    if work.outcome == "unchanged" and work.sketch is not None:
        # Fetched again with the same text: it may repeat pages indexed since (a print version
        # indexed before this check existed leaves the index on its next refresh).
        reason = _repeats(ctx, [work]).get(work.page.id)
        # (a page that could not join stays as it is: indexed, with the sample it has)
        if reason is not None and reason != JOIN_CONTENDED:
            work = PageWork(work.page, "skipped", message=reason, fetched=work.fetched, redirected=work.redirected)
    now = ctx.clock_ms()
    page = work.page
    if work.redirected is not None:
        _save_redirected(ctx, work.redirected)
    if work.outcome == "unchanged":
        page = page.model_copy(update={"status": PageStatus.INDEXED, "error": None, "retry_at": None,
                                       "fetched_at": now, "updated_at": now, **_validators(work.fetched)})
    elif work.outcome in ("skipped", "removed"):
        if page.document_id is not None:
            delete_page_document(ctx, page.organization_id, page.document_id)
        if work.outcome == "removed" and work.http_status is not None:
            # The page disappeared from the site: it leaves the docset (a link to it that is still
            # around brings it back as a skipped broken link).
            ctx.store.delete_page(page.docset_id, page.id)
            return None
        page = page.model_copy(update={"status": PageStatus.SKIPPED, "error": work.message, "retry_at": None,
                                       "document_id": None, "chunk_count": 0, "content_hash": None,
                                       "etag": None, "last_modified": None, "fetched_at": now,
                                       "updated_at": now, "sketch": None})
    elif work.outcome == "error":
        message = (work.message or "failed")[:MAX_ERROR_CHARS]
        retry_at = None
        if work.transient and page.attempts < ctx.settings.max_attempts:
            delay = ctx.settings.retry_base_s * 2 ** max(0, page.attempts - 1)
            retry_at = now + int(delay * 1000)
        page = page.model_copy(update={"status": PageStatus.ERROR, "error": message, "retry_at": retry_at,
                                       "fetched_at": now, "updated_at": now})
    else:  # pragma: no cover - "index" goes through index_pages
        raise ValueError(f"finish_page cannot record outcome {work.outcome!r}")
    ctx.store.save_page(page)
    ctx.svc.metrics.count(observability.PAGE_ERRORS if work.outcome == "error" else observability.PAGES_CRAWLED)
    return page


def _save_redirected(ctx: CrawlContext, source: DocsetPage) -> None:
    """A page that now redirects: its own document (from before the redirect) leaves the index."""
    if source.document_id is not None:
        delete_page_document(ctx, source.organization_id, source.document_id)
        source = source.model_copy(update={"document_id": None, "chunk_count": 0, "content_hash": None,
                                           "etag": None, "last_modified": None})
    ctx.store.save_page(source)


def delete_page_document(ctx: CrawlContext, org_id: str, document_id: str) -> None:
    """A page's document leaves through memlane's one removal path (index, content, metadata,
    cache), like any deleted memory."""
    doc = ctx.svc.metadata.get_document(org_id, document_id)
    if doc is not None:
        remove_document(ctx.svc, doc)


# --------------------------------------------------------------------------- all steps, one page


@dataclass
class PageCrawled:
    """What `crawl_page` did: the page as recorded (the redirect target when the page redirected
    within the docset; None when it disappeared, or when `write` took it to be written later),
    the URLs it queued, and the links the page holds."""

    page: DocsetPage | None
    queued: list[str]
    links: list[str] = field(default_factory=list)


def crawl_page(ctx: CrawlContext, docset: Docset, page: DocsetPage,
               write: Callable[[PageWork], DocsetPage | None] | None = None) -> PageCrawled:
    """The crawl of one claimed page: fetch and prepare it, queue the new pages its links name,
    then write it (or record why not). Every worker crawls a page with this: the SQS page worker
    and /index's seed write at once; the local runner passes `write` to hand the page to its
    embedding thread, which writes the pages of several fetch threads together (index_pages)."""
    try:
        work = fetch_and_prepare(ctx, docset, page)
    except Exception as exc:  # noqa: BLE001 - one bad page never stops a crawl; it is recorded
        log.exception("page %s failed", page.url)
        work = PageWork(page, "error", message=f"{type(exc).__name__}: {exc}", transient=True)
    queued = admit_links(ctx, docset, work.links)
    if work.outcome == "index":
        recorded = write(work) if write is not None else index_pages(ctx, [work])[0]
    else:
        recorded = finish_page(ctx, work)
    return PageCrawled(recorded, queued, work.links)
