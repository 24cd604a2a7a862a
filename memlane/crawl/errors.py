"""Typed errors of the crawler. Each subclasses a memlane error so the API's single error table maps
them without matching on message text:

- `UnsafeURLError` is an `InvalidInputError` (400): the URL (given by a client, found in a page or
  in a redirect) points somewhere memlane refuses to go.
- `FetchError` says whether retrying can help (`transient`); the page queue uses that flag to
  choose between "retry later" and "mark the page failed".
- `SitemapError` is a sitemap that cannot be read safely.
"""

from __future__ import annotations

import re

from memlane.domain.errors import InvalidInputError, MemlaneError

_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#]*@)")


def redact_url(url: str) -> str:
    """The URL with any `user:password@` part replaced by `***@`, safe for messages and logs."""
    return _USERINFO.sub(r"\g<scheme>***@", url, count=1)


class UnsafeURLError(InvalidInputError):
    """A URL refused by the SSRF guard. `url` is redacted (no credentials); `reason` says why;
    `category` is the kind of address refused (memlane.crawl.ssrf.AddressCategory), when an address was."""

    def __init__(self, url: str, reason: str, *, field: str = "url", category: str | None = None) -> None:
        safe_url = redact_url(url)
        super().__init__(field, f"refused {safe_url!r}: {reason}")
        self.url = safe_url
        self.reason = reason
        self.category = category


class FetchError(MemlaneError):
    """A page could not be fetched. `transient` is True when a later retry may succeed (network
    errors, timeouts, 5xx, 429); False when it will not (oversized page, too many redirects, an
    unexpected status)."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        url: str | None = None,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.url = redact_url(url) if url is not None else None
        self.status = status
        self.retry_after_s = retry_after_s


class PageTooLargeError(FetchError):
    """The body exceeded the fetcher's size cap; never transient."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message, transient=False, url=url)


class TooManyRedirectsError(FetchError):
    """More redirect hops than allowed, or a redirect loop; never transient."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message, transient=False, url=url)


class SitemapError(MemlaneError):
    """A sitemap that is malformed, too large once decompressed, or declares a DOCTYPE/entities
    (refused to rule out entity-expansion attacks)."""
