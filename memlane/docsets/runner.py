"""The local crawl runner: fetch threads, one embedding thread, and a maintenance thread.

Why this shape: on a laptop the embedder is the bottleneck (tens of chunks per second on two
cores), so fetching and extraction run ahead in a few threads while a single thread embeds the
chunks of many pages per call and writes them with one index transaction per batch. The queue
between them is bounded, so claimed pages never pile up in memory.

Everything durable is in the docset store: a page is claimed (marked `processing`) before it is
fetched, so after a crash or a kill the maintenance thread (and start-up) put unfinished pages
back in the queue and the crawl resumes; deterministic page and chunk ids make a page processed
twice an overwrite. Pages that stay `processing` longer than five minutes are reported as stuck
and, unless a thread here is still working on them, retried.

On AWS the same page steps run in a page-worker Lambda fed by an SQS page queue instead (see
memlane.docsets.pages), and an EventBridge schedule calls refresh-all.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from memlane.crawl.errors import FetchError, UnsafeURLError
from memlane.docsets.pages import CrawlContext, PageWork, crawl_page, finish_page, index_pages
from memlane.domain.docsets import Docset, DocsetPage, PageStatus

log = logging.getLogger(__name__)

MAX_CRAWL_DELAY_S = 10.0
EMBED_QUEUE_PAGES = 16
BATCH_WAIT_S = 0.05


class _HostGate:
    """At most `limit` requests in flight per host, spaced by robots.txt's Crawl-delay."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._semaphores: dict[str, threading.BoundedSemaphore] = {}
        self._next_at: dict[str, float] = {}

    def enter(self, host: str, delay_s: float | None) -> None:
        with self._lock:
            semaphore = self._semaphores.setdefault(host, threading.BoundedSemaphore(self._limit))
        semaphore.acquire()
        if delay_s:
            delay_s = min(delay_s, MAX_CRAWL_DELAY_S)
            with self._lock:
                now = time.monotonic()
                start = max(now, self._next_at.get(host, now))
                self._next_at[host] = start + delay_s
            time.sleep(max(0.0, start - now))

    def leave(self, host: str) -> None:
        with self._lock:
            semaphore = self._semaphores[host]
        semaphore.release()


class CrawlRunner:
    def __init__(self, ctx: CrawlContext, *, maintenance_interval_s: float = 30.0,
                 on_refresh_due: Callable[[], object] | None = None) -> None:
        self.ctx = ctx
        self.settings = ctx.settings
        self.maintenance_interval_s = maintenance_interval_s
        self.on_refresh_due = on_refresh_due
        self._gate = _HostGate(self.settings.per_host_concurrency)
        self._embed_queue: queue.Queue[PageWork] = queue.Queue(maxsize=EMBED_QUEUE_PAGES)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._in_flight: set[str] = set()
        self._lock = threading.Lock()
        self._docsets: dict[str, Docset] = {}
        self.pages_done = 0
        self.chunks_indexed = 0

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        now = self.ctx.clock_ms()
        released = self.ctx.store.release_stuck(now + 1, now)  # nothing is in flight at start-up
        if released:
            log.info("crawl: %d pages left in processing by the last run are queued again", released)
        targets: list[tuple[str, Callable[[], None]]] = [
            *((f"memlane-crawl-{i}", self._fetch_loop) for i in range(self.settings.fetch_workers)),
            ("memlane-crawl-embed", self._embed_loop),
            ("memlane-crawl-maintenance", self._maintenance_loop),
        ]
        for name, target in targets:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        self._threads.clear()

    def wake(self, *_: object) -> None:
        self._wake.set()

    # CrawlDispatcher: what the docset service tells the runner.
    def pages_queued(self, docset: Docset) -> None:
        self._wake.set()

    def pages_found(self, docset: Docset, page_ids: Sequence[str]) -> None:
        self._wake.set()

    def page_due(self, docset: Docset, page_id: str, due_ms: int) -> None:
        """Nothing to send: the maintenance thread wakes the fetch threads when a backoff ends."""

    def docset_deleted(self, docset_id: str) -> None:
        self.forget(docset_id)

    def forget(self, docset_id: str) -> None:
        """A docset was deleted: drop what is in flight for it instead of writing it back."""
        with self._lock:
            self._docsets.pop(docset_id, None)

    def idle(self) -> bool:
        """Nothing due, nothing in flight (tests and the CLI wait for this)."""
        with self._lock:
            busy = bool(self._in_flight)
        due = self.ctx.store.next_due()
        return not busy and self._embed_queue.empty() and (due is None or due > self.ctx.clock_ms())

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.idle():
                return True
            time.sleep(0.05)
        return self.idle()

    # ------------------------------------------------------------------ fetch threads

    def _docset(self, page: DocsetPage) -> Docset | None:
        with self._lock:
            cached = self._docsets.get(page.docset_id)
        if cached is not None:
            return cached
        docset = self.ctx.store.get_docset(page.organization_id, page.docset_id)
        if docset is not None:
            with self._lock:
                self._docsets[docset.id] = docset
        return docset

    def _claim(self) -> DocsetPage | None:
        with self._lock:
            pages = self.ctx.store.claim_pages(self.ctx.clock_ms(), 1)
            if pages:
                self._in_flight.add(pages[0].id)
        return pages[0] if pages else None

    def _done(self, page_id: str) -> None:
        with self._lock:
            self._in_flight.discard(page_id)

    def _fetch_loop(self) -> None:
        while not self._stop.is_set():
            page = None
            try:
                page = self._claim()
                if page is None:
                    self._wake.wait(1.0)
                    self._wake.clear()
                    continue
                self._process(page)
            except Exception:  # the loop survives anything a page throws
                log.exception("crawl worker iteration failed")
                if page is not None:
                    self._done(page.id)

    def _process(self, page: DocsetPage) -> None:
        docset = self._docset(page)
        if docset is None:
            self._done(page.id)
            return
        host = urlsplit(page.url).netloc
        delay = None
        with contextlib.suppress(UnsafeURLError, FetchError):  # crawl_page records the refusal
            delay = self.ctx.robots.policy_for(page.url).crawl_delay
        handed_over = False

        def to_embedding_thread(work: PageWork) -> None:
            """The page is written later, with other pages' chunks, by the embedding thread."""
            nonlocal handed_over
            if work.page.id != page.id:  # redirected within the docset: the target is in flight now
                with self._lock:
                    self._in_flight.add(work.page.id)
                self._done(page.id)
            while not self._stop.is_set():  # waits while the embedder is behind
                try:
                    self._embed_queue.put(work, timeout=0.5)
                    handed_over = True
                    return
                except queue.Full:
                    continue
            # Stopping: the page stays `processing` and is queued again at the next start.
            self._done(work.page.id)
            handed_over = True

        self._gate.enter(host, delay)
        try:
            crawled = crawl_page(self.ctx, docset, page, write=to_embedding_thread)
        finally:
            self._gate.leave(host)
            if not handed_over:
                self._done(page.id)
                self.pages_done += 1
        if crawled.queued:
            self._wake.set()

    # ------------------------------------------------------------------ the embedding thread

    def _next_batch(self) -> list[PageWork]:
        try:
            first = self._embed_queue.get(timeout=0.5)
        except queue.Empty:
            return []
        batch, chunks = [first], len(first.pieces)
        while chunks < self.settings.embed_batch_chunks:
            try:
                work = self._embed_queue.get(timeout=BATCH_WAIT_S)
            except queue.Empty:
                break
            batch.append(work)
            chunks += len(work.pieces)
        return batch

    def _embed_loop(self) -> None:
        while not (self._stop.is_set() and self._embed_queue.empty()):
            batch = self._next_batch()
            if not batch:
                continue
            live = [w for w in batch if self._still_wanted(w)]
            try:
                index_pages(self.ctx, live)
                self.chunks_indexed += sum(len(w.pieces) for w in live)
            except Exception as exc:  # noqa: BLE001 - recorded on the pages, retried with backoff
                log.exception("indexing a batch of %d pages failed", len(live))
                for w in live:
                    finish_page(self.ctx, PageWork(w.page, "error", message=f"{type(exc).__name__}: {exc}",
                                                   transient=True))
            finally:
                for w in batch:
                    self._done(w.page.id)
                self.pages_done += len(batch)

    def _still_wanted(self, work: PageWork) -> bool:
        return self.ctx.store.get_docset(work.page.organization_id, work.page.docset_id) is not None

    # ------------------------------------------------------------------ maintenance

    def reap(self) -> int:
        """Queue again the pages stuck in processing that no thread here is working on."""
        now = self.ctx.clock_ms()
        stuck_before = now - self.settings.stuck_after_s * 1000
        released = 0
        for docset in self.ctx.store.list_docsets():
            for page in self.ctx.store.stuck_pages(docset.id, stuck_before, limit=1000):
                with self._lock:
                    if page.id in self._in_flight:
                        continue
                released += self._release(page, now)
        if released:
            log.info("crawl: %d stuck pages queued again", released)
            self._wake.set()
        return released

    def _release(self, page: DocsetPage, now: int) -> int:
        current = self.ctx.store.get_page(page.docset_id, page.id)
        if current is None or current.claimed_at != page.claimed_at:
            return 0
        self.ctx.store.save_page(current.model_copy(update={
            "status": PageStatus.PENDING, "retry_at": now, "updated_at": now,
            "error": f"retried: stuck in processing for over {self.settings.stuck_after_s // 60} minutes"}))
        return 1

    def _maintenance_loop(self) -> None:
        next_refresh = time.monotonic() + min(60.0, self.maintenance_interval_s)
        interval = self.settings.refresh_interval_hours * 3600
        while not self._stop.wait(self.maintenance_interval_s):
            try:
                self.reap()
                if self.on_refresh_due is not None and interval > 0 and time.monotonic() >= next_refresh:
                    next_refresh = time.monotonic() + interval
                    self.on_refresh_due()
                    self._wake.set()
                due = self.ctx.store.next_due()
                if due is not None and due <= self.ctx.clock_ms():
                    self._wake.set()  # a retry's backoff ran out
            except Exception:  # noqa: BLE001 - maintenance must keep running
                log.exception("crawl maintenance failed")
