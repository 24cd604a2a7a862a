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

Two workers must never judge at the same time against a set that lacks the other's page (a print
page and one of its chapters, or two copies of one text, would both be indexed). So a page that
passes joins the set's known texts by a compare-and-set on the docset's text version
(DocsetStore.register_text): judged against version v, it joins only if the version is still v,
else the worker reads the set again and judges again. The known texts are the pages indexed or
being written (processing) with a sample. A print page that joined before its chapters is written
while they are judged; once written, it judges itself again against the set as it is then and
leaves the index if it now holds its chapters (`aggregate_count`), and each chapter, once written,
retires the indexed aggregates holding it (`aggregates_holding`): whichever is written last sees
the other.
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
KEY_HASHES = 128
# A page this long (in shingles, about as many words) keeps too thin a sample to tell which pages
# it holds one by one; whether the set's other pages cover most of it is measured instead.
GIANT = 16 * 1024
PAGE_BATCH = 1000


@dataclass(frozen=True)
class KnownPage:
    page_id: str
    url: str
    sketch: Sketch


class SketchIndex:
    """A set's indexed pages, found by the hashes they share with a page: each page is listed
    under its KEY_HASHES smallest hashes. A page that holds another holds most of its smallest
    hashes; a page held by a larger one has some of its own smallest hashes among the larger one's
    smallest while the larger one is well under KEY_HASHES times its size (each later page it holds
    gets another chance, and so does a refresh). Only the pages found
    so are compared exactly, so judging a page costs about its own size, not the set's."""

    def __init__(self, pages: Iterable[KnownPage] = ()) -> None:
        self.pages: dict[str, KnownPage] = {}
        self.giants: set[str] = set()
        self._by_hash: dict[int, list[str]] = {}
        for page in pages:
            self.add(page)

    def add(self, page: KnownPage) -> None:
        self.remove(page.page_id)
        self.pages[page.page_id] = page
        if page.sketch.size >= GIANT:
            self.giants.add(page.page_id)
        for h in page.sketch.ordered[:KEY_HASHES]:
            self._by_hash.setdefault(h, []).append(page.page_id)

    def remove(self, page_id: str) -> None:
        page = self.pages.pop(page_id, None)
        if page is None:
            return
        self.giants.discard(page_id)
        for h in page.sketch.ordered[:KEY_HASHES]:
            ids = self._by_hash.get(h)
            if ids is not None and page_id in ids:
                ids.remove(page_id)
                if not ids:
                    del self._by_hash[h]

    def candidates(self, sketch: Sketch) -> list[KnownPage]:
        """The pages that share a listed hash with `sketch`."""
        found: dict[str, None] = {}
        for h in sketch.ordered:
            for page_id in self._by_hash.get(h, ()):
                found[page_id] = None
        return [self.pages[page_id] for page_id in found]

    def covered(self, page: KnownPage) -> tuple[float, int]:
        """For a giant page: the share of its sample found among the other pages' listed hashes,
        and on how many pages. Its sample reaches only its smallest hashes, which, for a page many
        times the size of the others, are all listed for the others too."""
        hit = 0
        holders: set[str] = set()
        for h in page.sketch.ordered:
            others = [i for i in self._by_hash.get(h, ()) if i != page.page_id]
            if others:
                hit += 1
                holders.update(others)
        return (hit / len(page.sketch.ordered) if page.sketch.ordered else 0.0), len(holders)

    def __len__(self) -> int:
        return len(self.pages)


def _holds(outer: Sketch, inner: Sketch, at_least: float = HOLDS) -> bool:
    share = containment(inner, outer)
    return share is not None and share >= at_least


def aggregate_reason(count: int) -> str:
    return (f"holds the text of {count} other pages of the set (a print or single-page version): "
            "indexed on those pages, not twice")


def judge(page_id: str, sketch: Sketch, known: SketchIndex) -> str | None:
    """Why the page must not be indexed as itself, or None."""
    if not sketch.judgeable():
        return None
    held: list[KnownPage] = []
    for other in known.candidates(sketch):
        if other.page_id == page_id:
            continue
        if _holds(other.sketch, sketch, SAME) and _holds(sketch, other.sketch, SAME):
            return f"same text as {other.url}: indexed there"
        if _holds(sketch, other.sketch) and not _holds(other.sketch, sketch):
            held.append(other)
    if _is_aggregate(sketch, held):
        return aggregate_reason(len(held))
    return None


def aggregate_count(page_id: str, sketch: Sketch, known: SketchIndex) -> int:
    """How many pages of the set this page holds when it is a print or single-page version of
    them (0 when it is not): a written page's check of itself against the set as it is now."""
    if not sketch.judgeable():
        return 0
    if sketch.size >= GIANT:
        share, holders = known.covered(KnownPage(page_id, "", sketch))
        return holders if holders >= 2 and share >= AGGREGATE_COVERAGE else 0
    held = [other for other in known.candidates(sketch) if other.page_id != page_id
            and _holds(sketch, other.sketch) and not _holds(other.sketch, sketch)]
    return len(held) if _is_aggregate(sketch, held) else 0


def _is_aggregate(sketch: Sketch, held: list[KnownPage]) -> bool:
    return len(held) >= 2 and sum(k.sketch.size for k in held) >= AGGREGATE_COVERAGE * sketch.size


def aggregates_holding(new: KnownPage, known: SketchIndex) -> list[tuple[KnownPage, int]]:
    """Indexed pages that hold the new page's text and, with it, are now aggregates of the set
    (each with how many pages it holds)."""
    found: list[tuple[KnownPage, int]] = []
    for candidate in known.candidates(new.sketch):
        if (candidate.page_id == new.page_id or candidate.sketch.size <= new.sketch.size
                or not _holds(candidate.sketch, new.sketch) or _holds(new.sketch, candidate.sketch)):
            continue
        others = [k for k in known.candidates(candidate.sketch) if k.page_id not in (candidate.page_id, new.page_id)]
        held = [k for k in [*others, new] if _holds(candidate.sketch, k.sketch) and not _holds(k.sketch, candidate.sketch)]
        if _is_aggregate(candidate.sketch, held):
            found.append((candidate, len(held)))
    for giant_id in sorted(known.giants - {new.page_id} - {f.page_id for f, _ in found}):
        giant = known.pages[giant_id]
        share, holders = known.covered(giant)
        if holders >= 2 and share >= AGGREGATE_COVERAGE and giant.sketch.size > new.sketch.size:
            found.append((giant, holders))
    return found


class SketchCache:
    """The samples of each docset's known texts, read from the store when older than `ttl_s` or
    than the docset's text version, and kept up to date with what this process registers.
    Thread-safe."""

    def __init__(self, store: DocsetStore, ttl_s: float = CACHE_TTL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._ttl = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._sets: dict[str, tuple[float, int, SketchIndex]] = {}

    def index(self, docset_id: str, version: int | None = None) -> SketchIndex:
        """The docset's known texts, holding at least the first `version` registrations (read
        again from the store when older than that, or than `ttl_s`). Hold it under `lock` while
        reading it: add and drop change it in place."""
        with self._lock:
            hit = self._sets.get(docset_id)
            if (hit is not None and self._clock() - hit[0] < self._ttl
                    and (version is None or hit[1] >= version)):
                return hit[2]
        loaded_version, loaded = self._load(docset_id)
        with self._lock:
            hit = self._sets.get(docset_id)
            if hit is None or hit[1] <= loaded_version:
                self._sets[docset_id] = (self._clock(), loaded_version, loaded)
        return loaded

    @property
    def lock(self) -> threading.Lock:
        return self._lock

    def add(self, docset_id: str, page: KnownPage, version: int | None = None) -> None:
        """`page` joined the set; with `version`, the registration that made the set that version."""
        with self._lock:
            hit = self._sets.get(docset_id)
            if hit is not None:
                hit[2].add(page)
                if version is not None and hit[1] == version - 1:  # nothing registered in between
                    self._sets[docset_id] = (hit[0], version, hit[2])

    def drop(self, docset_id: str, page_id: str) -> None:
        with self._lock:
            hit = self._sets.get(docset_id)
            if hit is not None:
                hit[2].remove(page_id)

    def _load(self, docset_id: str) -> tuple[int, SketchIndex]:
        # The version first: pages registered while the listing runs only make the set newer than it says.
        version = self._store.text_version(docset_id)
        out = SketchIndex()
        for status in (PageStatus.INDEXED, PageStatus.PROCESSING):
            offset = 0
            while True:
                pages, total = self._store.list_pages(docset_id, status, PAGE_BATCH, offset)
                for p in pages:
                    if p.sketch:
                        out.add(KnownPage(p.id, p.url, Sketch.of_stored(p.sketch)))
                offset += len(pages)
                if not pages or offset >= total:
                    break
        return version, out
