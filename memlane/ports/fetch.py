"""The crawler's port and its result type (memlane.crawl).

`Fetcher` is the port the docset service and the page worker depend on; `SafeFetcher`
(memlane.crawl.fetcher) is the production adapter, and unit tests hand in an in-memory fake with
the same method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

#: Statuses returned as a result (not raised): the page is gone or closed to us, so the caller
#: marks it skipped rather than failed or retried.
SKIP_STATUSES = frozenset({401, 403, 404, 410})


@dataclass(frozen=True)
class FetchResult:
    """What one fetch produced.

    `url` is the final URL after redirects; `redirected_from` is the URL originally asked for
    when at least one redirect was followed. On 304 `not_modified` is True and `content` empty;
    for a status in SKIP_STATUSES `content` is empty too.
    """

    url: str
    status: int
    content: bytes
    content_type: str | None
    etag: str | None
    last_modified: str | None
    not_modified: bool = False
    redirected_from: str | None = None

    @property
    def skipped(self) -> bool:
        """The page should be marked skipped (401/403/404/410)."""
        return self.status in SKIP_STATUSES

    @property
    def ok(self) -> bool:
        """A fresh body was received (2xx)."""
        return 200 <= self.status < 300


@runtime_checkable
class Fetcher(Protocol):
    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        """Fetch `url`, conditionally when `etag`/`last_modified` from an earlier fetch are given.

        Raises UnsafeURLError for a URL (or redirect hop) the SSRF guard refuses and FetchError
        (with `transient`) for network errors, 5xx, 429 and other failures.
        """
        ...
