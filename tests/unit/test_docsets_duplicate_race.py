"""The docs duplicate race, forced deterministically: two crawl workers (two processes, each with
its own cache of the set's known texts, as two page-worker Lambdas) prepare pages that repeat each
other at the same moment. Whatever the interleaving, a text is indexed once: the duplicate check
and a page joining the set's known texts are one compare-and-set on the docset's text version
(memlane.docsets.duplicates), and a print page written while its chapters were indexed judges
itself again once written."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from fakes import HashEmbedder

from memlane.adapters.local.docset_store import SqliteDocsetStore
from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.docsets.duplicates import aggregate_reason
from memlane.docsets.pages import CrawlContext, PageWork, RobotsCache, fetch_and_prepare, index_pages
from memlane.domain.docsets import Docset, PageStatus, page_id_for
from memlane.domain.models import Project
from memlane.local.compose import LocalStack, build_local
from memlane.ports import FetchResult, Services
from memlane.services.keys import ensure_organization

SITE = "https://book.example"
CHAPTERS = {"intro": "walrus", "install": "pelican", "tuning": "narwhal"}


def chapter(word: str) -> list[str]:
    return [f"Paragraph {i} about the {word}: the {word} setting number {i} changes how step {i} of the "
            f"{word} procedure behaves, and operators tune it after reading log line {i}." for i in range(1, 8)]


def html(title: str, paragraphs: list[str]) -> bytes:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>{body}</main></body></html>".encode()


PAGES: dict[str, bytes] = {f"{SITE}/book/{name}.html": html(name.title(), chapter(word))
                           for name, word in CHAPTERS.items()}
PAGES[f"{SITE}/book/print.html"] = html("Crane Book", [p for word in CHAPTERS.values() for p in chapter(word)])
PAGES[f"{SITE}/book/copy.html"] = html("Install", chapter("pelican"))  # the install chapter's text again


class Site:
    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        if url in PAGES:
            return FetchResult(url, 200, PAGES[url], "text/html; charset=utf-8", None, None)
        return FetchResult(url, 404, b"", "text/plain", None, None)


class WritingHook:
    """An embedder that runs `during` once, the first time it embeds: what another worker does while
    this one is writing its page (between its duplicate check and its page being recorded)."""

    def __init__(self, inner: HashEmbedder) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.during: Callable[[], None] | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        during, self.during = self.during, None
        if during is not None:
            during()
        return self.inner.embed_documents(texts)


@dataclass
class World:
    stack: LocalStack
    store: SqliteDocsetStore
    docset: Docset
    hook: WritingHook

    def worker(self, svc: Services | None = None) -> CrawlContext:
        """A crawl worker of its own process: its own cache of the set's known texts."""
        return CrawlContext(svc=svc or self.stack.services, store=self.store, fetcher=Site(),
                            settings=DocsetSettings(), robots=RobotsCache(Site()))

    def prepare(self, ctx: CrawlContext, name: str) -> PageWork:
        url = f"{SITE}/book/{name}.html"
        page = self.store.claim_page(self.docset.id, page_id_for(self.docset.id, url), ctx.clock_ms())
        assert page is not None
        work = fetch_and_prepare(ctx, self.docset, page)
        assert work.outcome == "index", (name, work.outcome, work.message)
        return work

    def crawl(self, ctx: CrawlContext, *names: str) -> None:
        index_pages(ctx, [self.prepare(ctx, name) for name in names])

    def page(self, name: str) -> tuple[PageStatus, str | None]:
        found = self.store.get_page(self.docset.id, page_id_for(self.docset.id, f"{SITE}/book/{name}.html"))
        assert found is not None
        return found.status, found.error

    def in_index(self, name: str) -> bool:
        return page_id_for(self.docset.id, f"{SITE}/book/{name}.html") in self.stack.index.document_ids()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    stack = build_local(Settings(data_dir=tmp_path / "data"), embedder=HashEmbedder())
    org, _ = ensure_organization(stack.metadata, "docs-race")
    project = stack.metadata.create_project(Project(organization_id=org.id, name="Crane Book", slug="crane-book"))
    store = SqliteDocsetStore(stack.db)
    docset = store.create_docset(Docset(organization_id=org.id, project_id=project.id, name="Crane Book",
                                        base_url=f"{SITE}/book/", seed_url=f"{SITE}/book/", seed_slug="/book/",
                                        allowed_paths=["/book"], max_pages=50, created_at=0, updated_at=0))
    store.add_pages(docset, list(PAGES), 0)
    yield World(stack, store, docset, WritingHook(HashEmbedder()))
    stack.close()


def test_two_workers_indexing_the_same_text_at_the_same_moment_index_it_once(world: World) -> None:
    # Given two workers whose caches of the set were both read before either indexed anything
    a, b = world.worker(), world.worker()
    for ctx in (a, b):
        assert ctx.sketches is not None and len(ctx.sketches.index(world.docset.id)) == 0
    # When each prepares one of two pages holding the same text, then both write
    first, second = world.prepare(a, "install"), world.prepare(b, "copy")
    index_pages(a, [first])
    index_pages(b, [second])
    # Then the second worker saw the first page join the set, and skipped its copy
    assert world.page("install") == (PageStatus.INDEXED, None)
    assert world.page("copy") == (PageStatus.SKIPPED, f"same text as {SITE}/book/install.html: indexed there")
    assert world.in_index("install") and not world.in_index("copy")


def test_chapters_indexed_while_their_print_page_is_being_written_take_it_out_once_written(world: World) -> None:
    # Given a worker whose writes run the hook, and a second worker
    a = world.worker(replace(world.stack.services, embedder=world.hook))
    b = world.worker()
    printed = world.prepare(a, "print")
    # When the print page has passed its check and, while it is being written, the other worker
    # indexes the three chapters (their check of the aggregates holding them finds it still
    # processing)
    world.hook.during = lambda: world.crawl(b, *CHAPTERS)
    index_pages(a, [printed])
    # Then the print page, once written, found it holds its chapters and left the index
    assert world.hook.during is None, "the chapters were indexed during the print page's write"
    assert {name: world.page(name)[0] for name in CHAPTERS} == dict.fromkeys(CHAPTERS, PageStatus.INDEXED)
    assert world.page("print") == (PageStatus.SKIPPED, aggregate_reason(3))
    assert not world.in_index("print") and all(world.in_index(name) for name in CHAPTERS)


def test_a_print_page_judged_by_a_worker_with_a_stale_cache_still_sees_the_chapters(world: World) -> None:
    # Given a worker that read the (empty) set before another indexed the chapters
    a, b = world.worker(), world.worker()
    assert a.sketches is not None and len(a.sketches.index(world.docset.id)) == 0
    world.crawl(b, *CHAPTERS)
    # When it indexes the print page within its cache's lifetime
    world.crawl(a, "print")
    # Then the print page is judged against the chapters all the same
    assert world.page("print") == (PageStatus.SKIPPED, aggregate_reason(3))
    assert not world.in_index("print")


def test_two_workers_indexing_a_print_page_and_its_last_chapter_at_once_keep_the_chapter_only(world: World) -> None:
    # Given two chapters indexed, and two workers whose caches were read then
    world.crawl(world.worker(), "intro", "install")
    a, b = world.worker(), world.worker()
    for ctx in (a, b):
        assert ctx.sketches is not None and len(ctx.sketches.index(world.docset.id)) == 2
    # When one prepares the print page and the other the last chapter, and the chapter is written
    # first, then the print page
    printed, last = world.prepare(a, "print"), world.prepare(b, "tuning")
    index_pages(b, [last])
    index_pages(a, [printed])
    # Then the print page is not indexed, and every chapter is
    assert world.page("print") == (PageStatus.SKIPPED, aggregate_reason(3))
    assert {name: world.page(name)[0] for name in CHAPTERS} == dict.fromkeys(CHAPTERS, PageStatus.INDEXED)
    assert not world.in_index("print")
