"""`SafeFetcher`: the production `Fetcher`. Fetches one page over http(s) treating the URL as hostile.

- Every URL, and every redirect hop, passes `check_url` before a request is made; redirects are
  followed by hand (at most `max_redirects`, loops refused).
- Connections are pinned to the checked addresses (memlane.crawl.transport), and the peer address
  of each response is re-checked when the transport reports it (defence in depth for a client
  handed in by a caller).
- Timeouts: connect 10 s, read 20 s, 30 s for the whole page including redirects. The total is
  enforced between network reads, so it can overshoot by at most one read timeout.
- The body is streamed and capped (5 MB by default) *after* decompression; gzip and deflate are
  decoded here with bounded output, so a compression bomb stops at the cap.
- Conditional requests: `etag` / `last_modified` become If-None-Match / If-Modified-Since (sent on
  every hop; redirects ignore them); a 304 is a result with `not_modified=True`.
- Each hop resolves the host twice - once in `check_url` (for a clear, early refusal) and once
  when the pinned transport connects (the lookup that counts). The OS cache makes the second cheap;
  DNS resolution itself is not bounded by the timeouts above.
- 401/403/404/410 are results (the caller marks the page skipped); 5xx, 408, 425, 429 and network
  errors raise `FetchError(transient=True)`; anything else unexpected raises it non-transient.
"""

from __future__ import annotations

import socket
import ssl
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any
from urllib.parse import urldefrag, urljoin

import httpx

from memlane.crawl.errors import (
    FetchError,
    PageTooLargeError,
    TooManyRedirectsError,
    UnsafeURLError,
    redact_url,
)
from memlane.crawl.ssrf import NetworkPolicy, Resolver, check_peer_address, check_url
from memlane.crawl.transport import pinned_client
from memlane.ports import SKIP_STATUSES, FetchResult

USER_AGENT = "memlane-crawler/0.1 (+https://github.com/memlane)"
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
TRANSIENT_CLIENT_STATUSES = frozenset({408, 425, 429})
MB = 1024 * 1024


@dataclass(frozen=True)
class FetchLimits:
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 20.0
    total_timeout_s: float = 30.0
    max_bytes: int = 5 * MB
    max_redirects: int = 5


def format_size(n_bytes: int) -> str:
    if n_bytes % MB == 0:
        return f"{n_bytes // MB} MB"
    if n_bytes % 1024 == 0:
        return f"{n_bytes // 1024} KB"
    return f"{n_bytes} bytes"


@dataclass(frozen=True)
class _Redirect:
    location: str


class SafeFetcher:
    """Implements `memlane.ports.fetch.Fetcher`.

    Without `client`, builds (and owns, see `close`) a pinned client for `policy` and `resolver`.
    A `client` handed in is used as is and not closed here; build it with
    `memlane.crawl.transport.pinned_client` to keep DNS-rebinding protection - with any other
    transport only the pre-request check and the post-connect peer check apply.
    """

    def __init__(
        self,
        client: httpx.Client | None = None,
        *,
        policy: NetworkPolicy | None = None,
        resolver: Resolver = socket.getaddrinfo,
        limits: FetchLimits | None = None,
        user_agent: str = USER_AGENT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._policy = policy if policy is not None else NetworkPolicy.public_only()
        self._resolver = resolver
        self._limits = limits if limits is not None else FetchLimits()
        self._user_agent = user_agent
        self._clock = clock
        self._owns_client = client is None
        self._client = client if client is not None else pinned_client(self._policy, resolver)

    @property
    def policy(self) -> NetworkPolicy:
        return self._policy

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> SafeFetcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ fetch

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        deadline = self._clock() + self._limits.total_timeout_s
        requested = url.strip()
        current = requested
        previous: str | None = None
        visited = {current}
        for _ in range(self._limits.max_redirects + 1):
            try:
                check_url(current, policy=self._policy, resolver=self._resolver)
                outcome = self._request(current, etag, last_modified, deadline)
            except UnsafeURLError as exc:
                raise self._hop_error(exc, current, previous) from exc
            if isinstance(outcome, FetchResult):
                return outcome if previous is None else replace(outcome, redirected_from=requested)
            if outcome.location in visited:
                raise TooManyRedirectsError(
                    f"redirect loop: {redact_url(current)} redirects back to {redact_url(outcome.location)}",
                    url=requested,
                )
            visited.add(outcome.location)
            previous, current = current, outcome.location
        raise TooManyRedirectsError(
            f"more than {self._limits.max_redirects} redirects starting at {redact_url(requested)}",
            url=requested,
        )

    @staticmethod
    def _hop_error(exc: UnsafeURLError, url: str, previous: str | None) -> UnsafeURLError:
        """Name the URL (and the page that redirected to it) even when the refusal came from the
        connection layer, which only knows host and port."""
        if previous is None and exc.url == redact_url(url):
            return exc
        via = f" (redirected from {redact_url(previous)})" if previous is not None else ""
        return UnsafeURLError(url, f"{exc.reason}{via}", field=exc.field)

    def _request(
        self, url: str, etag: str | None, last_modified: str | None, deadline: float
    ) -> FetchResult | _Redirect:
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise FetchError(
                f"fetching {redact_url(url)} took longer than {self._limits.total_timeout_s:g} s",
                transient=True,
                url=url,
            )
        connect = min(self._limits.connect_timeout_s, remaining)
        read = min(self._limits.read_timeout_s, remaining)
        timeout = httpx.Timeout(connect=connect, read=read, write=read, pool=connect)
        headers = {
            "User-Agent": self._user_agent,
            "Accept": ACCEPT,
            # Only encodings decoded here with a bounded output (see _read_body).
            "Accept-Encoding": "gzip, deflate",
        }
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        try:
            with self._client.stream(
                "GET", url, headers=headers, timeout=timeout, follow_redirects=False
            ) as response:
                self._check_peer(response, url)
                return self._handle(response, url, etag, last_modified, deadline)
        except httpx.TimeoutException as exc:
            raise FetchError(f"timed out fetching {redact_url(url)}", transient=True, url=url) from exc
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.DecodingError) as exc:
            raise FetchError(f"cannot fetch {redact_url(url)}: {exc}", transient=False, url=url) from exc
        except httpx.RequestError as exc:
            if _caused_by(exc, ssl.SSLCertVerificationError):
                raise FetchError(
                    f"TLS certificate verification failed for {redact_url(url)}", transient=False, url=url
                ) from exc
            raise FetchError(
                f"network error fetching {redact_url(url)}: {exc}", transient=True, url=url
            ) from exc

    def _check_peer(self, response: httpx.Response, url: str) -> None:
        stream = response.extensions.get("network_stream")
        if stream is None:
            return
        peer = stream.get_extra_info("server_addr")
        if isinstance(peer, tuple) and peer:
            check_peer_address(str(peer[0]), policy=self._policy, url=url)

    def _handle(
        self,
        response: httpx.Response,
        url: str,
        etag: str | None,
        last_modified: str | None,
        deadline: float,
    ) -> FetchResult | _Redirect:
        status = response.status_code
        headers = response.headers
        if status in REDIRECT_STATUSES:
            return _Redirect(self._redirect_target(url, status, headers.get("location")))
        if status == 304:
            return FetchResult(
                url=url,
                status=status,
                content=b"",
                content_type=headers.get("content-type"),
                etag=headers.get("etag") or etag,
                last_modified=headers.get("last-modified") or last_modified,
                not_modified=True,
            )
        if status in SKIP_STATUSES:
            return FetchResult(
                url=url,
                status=status,
                content=b"",
                content_type=headers.get("content-type"),
                etag=None,
                last_modified=None,
            )
        if status >= 500 or status in TRANSIENT_CLIENT_STATUSES:
            raise FetchError(
                f"HTTP {status} from {redact_url(url)}",
                transient=True,
                url=url,
                status=status,
                retry_after_s=parse_retry_after(headers.get("retry-after")),
            )
        if not 200 <= status < 300:
            raise FetchError(
                f"unexpected HTTP {status} from {redact_url(url)}", transient=False, url=url, status=status
            )
        return FetchResult(
            url=url,
            status=status,
            content=self._read_body(response, url, deadline),
            content_type=headers.get("content-type"),
            etag=headers.get("etag"),
            last_modified=headers.get("last-modified"),
        )

    @staticmethod
    def _redirect_target(url: str, status: int, location: str | None) -> str:
        if not location or not location.strip():
            raise FetchError(
                f"HTTP {status} redirect from {redact_url(url)} has no Location", transient=False, url=url
            )
        try:
            # urljoin keeps the target as written (httpx.URL.join would rewrite "file:///x" to
            # "file:/x"), so errors quote it faithfully; check_url judges it at the next hop.
            return urldefrag(urljoin(url, location.strip())).url
        except ValueError as exc:
            raise FetchError(
                f"invalid redirect Location {location!r} from {redact_url(url)}", transient=False, url=url
            ) from exc

    def _read_body(self, response: httpx.Response, url: str, deadline: float) -> bytes:
        """The body, inflated as its Content-Encoding says, refused as soon as it passes the size
        cap (declared or read) or the deadline."""
        limit = self._limits.max_bytes
        too_large = f"page exceeds {format_size(limit)}"
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > limit:
            raise PageTooLargeError(too_large, url=url)
        encoding = response.headers.get("content-encoding", "").strip().lower()
        decompressor = _decompressor(encoding, url)
        body = bytearray()
        try:
            for raw in response.iter_raw():
                _take(body, raw, decompressor, limit)
                if len(body) > limit:
                    raise PageTooLargeError(too_large, url=url)
                if self._clock() > deadline:
                    raise FetchError(
                        f"fetching {redact_url(url)} took longer than {self._limits.total_timeout_s:g} s",
                        transient=True,
                        url=url,
                    )
            if decompressor is not None:
                body += decompressor.flush()
        except zlib.error as exc:
            raise FetchError(
                f"corrupt {encoding} body from {redact_url(url)}", transient=False, url=url
            ) from exc
        if len(body) > limit:
            raise PageTooLargeError(too_large, url=url)
        return bytes(body)


def _decompressor(encoding: str, url: str) -> Any:  # a zlib decompressor object, or None
    """What inflates a body of this Content-Encoding (None: it is not compressed)."""
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=31)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise FetchError(f"unsupported Content-Encoding {encoding!r}", transient=False, url=url)


def _take(body: bytearray, raw: bytes, decompressor: Any, limit: int) -> None:
    """One chunk read onto the body, inflated first when compressed."""
    if decompressor is None:
        body += raw
        return
    pending = raw
    # max_length bounds each step's output: a bomb never inflates past the cap.
    while pending and len(body) <= limit:
        body += decompressor.decompress(pending, limit + 1 - len(body))
        pending = decompressor.unconsumed_tail


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
