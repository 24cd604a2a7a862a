"""`CrawlPlan`: the in-memory crawl frontier of one docset (no I/O).

It decides which URLs join the crawl - normalised, inside the docset's scope, not an obvious
binary, not seen before, under the page cap - and hands them out first-in first-out (breadth
first from the seed). The docset service will back the same decisions with a persistent page
store so a crawl survives a restart; this class is the rule set plus an in-memory queue.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from memlane.crawl.urls import UrlScope, is_probably_html, normalize_url
from memlane.domain.errors import InvalidInputError

DEFAULT_MAX_PAGES = 5000


class CrawlPlan:
    """Plans one docset's crawl from `base_url` + `seed_slug` (Mem-Oracle's baseUrl / seedSlug /
    allowedPaths). Raises InvalidInputError naming the field when the inputs are unusable."""

    def __init__(
        self,
        base_url: str,
        seed_slug: str,
        allowed_paths: Sequence[str] | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        base = normalize_url(base_url)
        if base is None:
            raise InvalidInputError("baseUrl", "must be an absolute http or https URL")
        if "@" in urlsplit(base).netloc:
            raise InvalidInputError("baseUrl", "must not contain credentials")
        if max_pages < 1:
            raise InvalidInputError("maxPages", "must be at least 1")
        seed = normalize_url(seed_slug or "/", base)
        if seed is None:
            raise InvalidInputError("seedSlug", "must be a path (or URL) on the docset's site")
        self.base_url = base
        self.max_pages = max_pages
        self.scope = UrlScope.for_docset(base, allowed_paths)
        if not self.scope.contains(seed):
            raise InvalidInputError("seedSlug", f"{seed} is outside the docset's host or allowedPaths")
        self.seed_url = seed
        self._accepted: dict[str, None] = {}  # insertion-ordered set
        self._queue: deque[str] = deque()
        self.add(seed)

    def add(self, url: str) -> bool:
        """Accept `url` (absolute, or relative to the base URL) into the plan. True when it was
        new, in scope, probably a page, and the plan was not yet full."""
        normalized = normalize_url(url, self.base_url)
        if (
            normalized is None
            or normalized in self._accepted
            or self.is_full
            or not self.scope.contains(normalized)
            or not is_probably_html(None, normalized)
        ):
            return False
        self._accepted[normalized] = None
        self._queue.append(normalized)
        return True

    def add_all(self, urls: Sequence[str]) -> int:
        """Add each URL; the number accepted."""
        return sum(self.add(url) for url in urls)

    def pop(self) -> str | None:
        """The next URL to fetch, or None when the queue is drained."""
        return self._queue.popleft() if self._queue else None

    @property
    def is_full(self) -> bool:
        return len(self._accepted) >= self.max_pages

    @property
    def accepted_count(self) -> int:
        return len(self._accepted)

    @property
    def pending_count(self) -> int:
        return len(self._queue)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and normalize_url(url, self.base_url) in self._accepted

    def __iter__(self) -> Iterator[str]:
        """Every accepted URL, in the order accepted."""
        return iter(tuple(self._accepted))
