"""An httpx transport that pins every connection to an address the SSRF guard just approved.

Why: `check_url` resolves a host and checks the answers, but the HTTP client would normally
resolve the host *again* when it connects. A hostile DNS server can answer the first lookup with a
public address and the second with 127.0.0.1 or 169.254.169.254 (DNS rebinding, a time-of-check /
time-of-use gap).

How: httpx delegates connections to an httpcore connection pool, and httpcore lets the pool take a
`network_backend` - the object whose ``connect_tcp(host, port)`` opens the socket.
`PinnedNetworkBackend.connect_tcp` calls `check_host` (resolve + check every address under the
policy) and then connects the socket to one of *those* addresses, never to the name. So the
address checked is, by construction, the address connected to, for every new connection,
including the ones made for redirect hops. The request itself is untouched: the URL keeps its
host name, so the Host header, TLS SNI and certificate verification all use the real name, and
the pool keys connections by that name (a keep-alive connection is only reused for the host whose
check it passed).

httpx 0.28 does not expose `network_backend` on `httpx.HTTPTransport`, so `PinnedTransport` wraps
`httpcore.ConnectionPool` itself, using only httpcore's public API, and maps httpcore's exceptions
to httpx's (as httpx's own transport does). Proxies are deliberately not supported: a proxy would
resolve the name itself and defeat the pinning; clients built here ignore proxy variables.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

from memlane.crawl.ssrf import NetworkPolicy, Resolver, check_host

#: Keep-alive is safe (connections are keyed by host name), so keep httpx's defaults.
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
#: Addresses tried per connection when a host resolves to several; bounds the connect time.
MAX_CONNECT_ATTEMPTS = 3

# Most specific first: the first match wins.
_EXCEPTION_MAP: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


def _as_httpx_error(exc: Exception, request: httpx.Request) -> httpx.TransportError | None:
    """httpx's equivalent of an httpcore exception; None for anything else (e.g. UnsafeURLError
    raised by the guard inside `connect_tcp`, which must reach the caller unchanged)."""
    for core_type, httpx_type in _EXCEPTION_MAP:
        if isinstance(exc, core_type):
            return httpx_type(str(exc), request=request)
    return None


class PinnedNetworkBackend(httpcore.NetworkBackend):
    """Opens TCP connections only to addresses `check_host` approved under `policy`."""

    def __init__(
        self,
        policy: NetworkPolicy,
        resolver: Resolver = socket.getaddrinfo,
        inner: httpcore.NetworkBackend | None = None,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = check_host(host, port, policy=self._policy, resolver=self._resolver)
        last_error: Exception | None = None
        for address in addresses[:MAX_CONNECT_ATTEMPTS]:
            try:
                return self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None  # check_host never returns an empty tuple
        raise last_error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not allowed for crawling")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes], request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except Exception as exc:
            mapped = _as_httpx_error(exc, self._request)
            if mapped is None:
                raise
            raise mapped from exc

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class PinnedTransport(httpx.BaseTransport):
    """httpx transport over an httpcore pool whose connections go through `PinnedNetworkBackend`."""

    def __init__(
        self,
        policy: NetworkPolicy | None = None,
        resolver: Resolver = socket.getaddrinfo,
        *,
        ssl_context: ssl.SSLContext | None = None,
        limits: httpx.Limits = DEFAULT_LIMITS,
    ) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context if ssl_context is not None else httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PinnedNetworkBackend(policy or NetworkPolicy.public_only(), resolver),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            core_response = self._pool.handle_request(core_request)
        except Exception as exc:
            mapped = _as_httpx_error(exc, request)
            if mapped is None:
                raise
            raise mapped from exc
        assert isinstance(core_response.stream, Iterable)
        return httpx.Response(
            status_code=core_response.status,
            headers=core_response.headers,
            stream=_ResponseStream(core_response.stream, request),
            extensions=core_response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def pinned_client(
    policy: NetworkPolicy | None = None,
    resolver: Resolver = socket.getaddrinfo,
    *,
    ssl_context: ssl.SSLContext | None = None,
    timeout: httpx.Timeout | None = None,
) -> httpx.Client:
    """An httpx.Client for crawling: pinned connections, no redirects followed automatically, and
    no proxy or other settings taken from the environment (a proxy would defeat the pinning)."""
    return httpx.Client(
        transport=PinnedTransport(policy, resolver, ssl_context=ssl_context),
        follow_redirects=False,
        trust_env=False,
        timeout=timeout if timeout is not None else httpx.Timeout(30.0),
    )
