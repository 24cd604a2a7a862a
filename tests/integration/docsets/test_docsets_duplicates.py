"""A site's print or single-page version and pages whose canonical URL is another page are not
indexed twice (issue 23, item 4): every chunk of the site is found once, and the skipped page says
why in its status."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from conftest_helpers import Running
from docsets_site import FAST, index, pages_by_path, retrieve, start_server

pytestmark = pytest.mark.integration

CHAPTERS = {
    "/book/intro.html": ("Introduction", "walrus", "The walrus chapter explains how the harbour crane lifts "
                         "containers onto the night ferry while the pilot checks the tide tables."),
    "/book/install.html": ("Installation", "pelican", "The pelican chapter explains how the installer unpacks "
                           "the archive into the prefix and writes a manifest of every copied file."),
    "/book/tuning.html": ("Tuning", "narwhal", "The narwhal chapter explains how the scheduler weighs queue "
                          "depth against latency budgets when it picks the next batch of jobs."),
}


def chapter_text(word: str, lead: str) -> list[str]:
    return [lead] + [f"Paragraph {i} about the {word}: the {word} setting number {i} changes how step {i} "
                     f"of the {word} procedure behaves, and operators tune it after reading log line {i}."
                     for i in range(1, 7)]


def page(title: str, paragraphs: list[str], *, links: tuple[str, ...] = (), head: str = "") -> bytes:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    nav = " ".join(f'<a href="{link}">{link}</a>' for link in links)
    return (f"<html><head><title>{title} - Crane Book</title>{head}</head><body>"
            f'<nav role="navigation">{nav}</nav><main><h1>{title}</h1>{body}</main></body></html>').encode()


def build_book(site, *, print_links_chapters: bool) -> None:
    html = {"Content-Type": "text/html; charset=utf-8"}
    chapters = tuple(CHAPTERS)
    everything: list[str] = []
    for path, (title, word, lead) in CHAPTERS.items():
        everything += [title, *chapter_text(word, lead)]
        site.raw(path, 200, page(title, chapter_text(word, lead),
                                 links=("/book/print.html",) if not print_links_chapters else ()), html)
    # mdBook's print.html: every chapter, one after the other (no noindex here: recognised by its text)
    site.raw("/book/print.html", 200, page("Crane Book", everything,
                                           links=chapters if print_links_chapters else ()), html)
    seed_links = ("/book/print.html",) if print_links_chapters else chapters
    site.raw("/book/", 200, page("Crane Book", ["Welcome to the crane book, a guide for harbour operators "
                                                "who run the crane, the installer and the scheduler."],
                                 links=seed_links), html)


def crawl(docs_server, site) -> tuple[str, dict[str, dict]]:
    docset_id = index(docs_server, site, seedSlug="/book/", allowedPaths=["/book"], name="Crane Book")["docsetId"]
    docs_server.wait_ready(docset_id)
    return docset_id, pages_by_path(docs_server, docset_id)


@pytest.fixture
def docs_server(tmp_path) -> Iterator[Running]:
    """Several crawl workers, so a print page and its chapters are prepared side by side (the
    interleavings themselves are forced one by one in tests/unit/test_docsets_duplicate_race.py)."""
    running = start_server(tmp_path / "data", settings=FAST.model_copy(update={"fetch_workers": 4}))
    yield running
    running.client.close()
    running.server.shutdown()


@pytest.mark.parametrize("print_links_chapters", [True, False],
                         ids=["print-page-indexed-before-its-chapters", "print-page-found-after-its-chapters"])
def test_a_print_version_is_not_indexed_and_every_chunk_is_found_once(docs_server, site, print_links_chapters):
    build_book(site, print_links_chapters=print_links_chapters)
    docset_id, pages = crawl(docs_server, site)
    printed = pages["/book/print.html"]
    assert printed["status"] == "skipped"
    # (of 2 or 3 chapters: as many as were indexed when it was judged, with several workers)
    assert re.fullmatch(r"holds the text of [23] other pages of the set \(a print or single-page version\): "
                        r"indexed on those pages, not twice", printed["errorMessage"]), printed["errorMessage"]
    assert {p: pages[p]["status"] for p in CHAPTERS} == dict.fromkeys(CHAPTERS, "indexed")
    status = docs_server.client.get(f"/docset/{docset_id}").json()["indexStatus"]
    assert (status["indexedPages"], status["skippedPages"]) == (4, 1)
    for path, (_title, word, _lead) in CHAPTERS.items():
        found = retrieve(docs_server, f"{word} setting procedure operators", topK=50, maxChunksPerPage=50,
                         docsetIds=[docset_id])["results"]
        urls = {r["url"] for r in found if f"the {word} setting number 3" in r["content"]}
        assert urls == {f"{site.url}{path}"}, (path, [r["url"] for r in found])
        contents = [r["content"] for r in found]
        assert len(contents) == len(set(contents))
    # Nothing of the print page is left in the index.
    assert pages["/book/print.html"]["id"] not in docs_server.server.stack.index.document_ids()


def test_a_page_whose_canonical_url_is_another_page_of_the_set_is_skipped(docs_server, site):
    html = {"Content-Type": "text/html; charset=utf-8"}
    walrus = chapter_text("walrus", CHAPTERS["/book/intro.html"][2])
    site.raw("/book/", 200, page("Crane Book", ["Welcome to the crane book for harbour operators."],
                                 links=("/book/v2/intro.html", "/book/elsewhere.html", "/book/guide/")), html)
    # An old copy that names the current page as canonical: skipped, and the canonical page is crawled
    # even though nothing else links to it.
    site.raw("/book/v2/intro.html", 200, page("Introduction", walrus, head=(
        '<link rel="canonical" href="/book/intro.html">')), html)
    site.raw("/book/intro.html", 200, page("Introduction", walrus), html)
    # A canonical URL naming the page itself another way (trailing slash, index.html) is the page.
    site.raw("/book/guide/", 200, page("Guide", chapter_text("pelican", "The pelican guide."), head=(
        '<link rel="canonical" href="/book/guide/index.html">')), html)
    site.raw("/book/guide/index.html", 301, b"", {"Location": "/book/guide/"})
    # A canonical URL on another site is not followed: the page is indexed as itself.
    site.raw("/book/elsewhere.html", 200, page("Tuning", chapter_text("narwhal", "The narwhal chapter."), head=(
        '<link rel="canonical" href="https://mirror.example/book/tuning.html">')), html)
    docset_id, pages = crawl(docs_server, site)
    assert pages["/book/v2/intro.html"]["status"] == "skipped"
    assert pages["/book/v2/intro.html"]["errorMessage"] == (
        f"canonical version is {site.url}/book/intro.html: indexed there")
    assert pages["/book/intro.html"]["status"] == "indexed"
    assert pages["/book/elsewhere.html"]["status"] == "indexed"
    assert pages["/book/guide/"]["status"] == "indexed"
    found = retrieve(docs_server, "walrus setting procedure", topK=50, docsetIds=[docset_id])["results"]
    assert {r["url"] for r in found if "walrus" in r["content"]} == {f"{site.url}/book/intro.html"}


def test_the_same_text_at_two_urls_is_indexed_once(docs_server, site):
    html = {"Content-Type": "text/html; charset=utf-8"}
    text = chapter_text("pelican", CHAPTERS["/book/install.html"][2])
    site.raw("/book/", 200, page("Crane Book", ["Welcome to the crane book for harbour operators."],
                                 links=("/book/install.html",)), html)
    site.raw("/book/install.html", 200, page("Installation", text, links=("/book/install-copy.html",)), html)
    site.raw("/book/install-copy.html", 200, page("Installation", text), html)
    docset_id, pages = crawl(docs_server, site)
    assert pages["/book/install.html"]["status"] == "indexed"
    copy = pages["/book/install-copy.html"]
    assert copy["status"] == "skipped"
    assert copy["errorMessage"] == f"same text as {site.url}/book/install.html: indexed there"
