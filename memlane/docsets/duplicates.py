"""A documentation set indexes each text once: a page that repeats others is skipped, with why.

Two kinds of repetition, both judged on the pages' shingle samples (memlane.crawl.similarity)
against the pages of the set already indexed:

- the same text under another URL (each holds ≥ 98 % of the other: a page that differs by a
  word or two, an API stub naming another function, is kept): the later page is skipped,
  "same text as <url>";
- a print or single-page version (mdBook's print.html, Sphinx's singlehtml, any page that is
  mostly the concatenation of others): a page holding ≥ 90 % of the text of two or more indexed
  pages, which together make at least half of it, is skipped. When such a page was indexed first
  (the crawl reached it before the chapters), it is taken out of the index as soon as the chapters
  it holds are indexed.

The samples of a set's indexed pages are read from the docset store and kept for a few seconds
(`SketchCache`), so a page worker judges against what every worker has indexed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memlane.crawl.similarity import Sketch, containment
from memlane.domain.docsets import PageStatus
from memlane.ports import DocsetStore

HOLDS = 0.9  # share of a page's text another page must hold to count as holding it
SAME = 0.98  # share each of two pages must hold of the other to be the same text
AGGREGATE_COVERAGE = 0.5  # share of an aggregate page that the pages it holds make up
CACHE_TTL_S = 10.0
PAGE_BATCH = 1000


@dataclass(frozen=True)
class KnownPage:
    page_id: str
    url: str
    sketch: Sketch


def _holds(outer: Sketch, inner: Sketch, at_least: float = HOLDS) -> bool:
    share = containment(inner, outer)
    return share is not None and share >= at_least


def aggregate_reason(count: int) -> str:
    return (f"holds the text of {count} other pages of the set (a print or single-page version): "
            "indexed on those pages, not twice")


def judge(page_id: str, sketch: Sketch, known: Iterable[KnownPage]) -> str | None:
    """Why the page must not be indexed as itself, or None."""
    if not sketch.judgeable():
        return None
    held: list[KnownPage] = []
    for other in known:
        if other.page_id == page_id:
            continue
        if _holds(other.sketch, sketch, SAME) and _holds(sketch, other.sketch, SAME):
            return f"same text as {other.url}: indexed there"
        if _holds(sketch, other.sketch) and not _holds(other.sketch, sketch):
            held.append(other)
    if _is_aggregate(sketch, held):
        return aggregate_reason(len(held))
    return None


def _is_aggregate(sketch: Sketch, held: list[KnownPage]) -> bool:
    return len(held) >= 2 and sum(k.sketch.size for k in held) >= AGGREGATE_COVERAGE * sketch.size


def aggregates_holding(new: KnownPage, known: Iterable[KnownPage]) -> list[tuple[KnownPage, int]]:
    """Indexed pages that hold the new page's text and, with it, are now aggregates of the set
    (each with how many pages it holds)."""
    pages = [k for k in known if k.page_id != new.page_id] + [new]
    found: list[tuple[KnownPage, int]] = []
    for candidate in pages:
        if candidate is new or not _holds(candidate.sketch, new.sketch) or _holds(new.sketch, candidate.sketch):
            continue
        held = [k for k in pages if k is not candidate and _holds(candidate.sketch, k.sketch)
                and not _holds(k.sketch, candidate.sketch)]
        if _is_aggregate(candidate.sketch, held):
            found.append((candidate, len(held)))
    return found


class SketchCache:
    """The samples of each docset's indexed pages, read from the store at most every `ttl_s`
    seconds and kept up to date with what this process indexes. Thread-safe."""

    def __init__(self, store: DocsetStore, ttl_s: float = CACHE_TTL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._ttl = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._sets: dict[str, tuple[float, dict[str, KnownPage]]] = {}

    def pages(self, docset_id: str) -> list[KnownPage]:
        with self._lock:
            hit = self._sets.get(docset_id)
            if hit is not None and self._clock() - hit[0] < self._ttl:
                return list(hit[1].values())
        loaded = self._load(docset_id)
        with self._lock:
            self._sets[docset_id] = (self._clock(), loaded)
        return list(loaded.values())

    def add(self, docset_id: str, page: KnownPage) -> None:
        with self._lock:
            hit = self._sets.get(docset_id)
            if hit is not None:
                hit[1][page.page_id] = page

    def drop(self, docset_id: str, page_id: str) -> None:
        with self._lock:
            hit = self._sets.get(docset_id)
            if hit is not None:
                hit[1].pop(page_id, None)

    def _load(self, docset_id: str) -> dict[str, KnownPage]:
        out: dict[str, KnownPage] = {}
        offset = 0
        while True:
            pages, total = self._store.list_pages(docset_id, PageStatus.INDEXED, PAGE_BATCH, offset)
            for p in pages:
                if p.sketch:
                    out[p.id] = KnownPage(p.id, p.url, Sketch.of_stored(p.sketch))
            offset += len(pages)
            if not pages or offset >= total:
                return out
