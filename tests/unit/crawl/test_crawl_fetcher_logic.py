"""SafeFetcher's logic against httpx.MockTransport (no sockets, fake resolver)."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from memlane.crawl.errors import FetchError, PageTooLargeError, TooManyRedirectsError, UnsafeURLError
from memlane.crawl.fetcher import USER_AGENT, FetchLimits, SafeFetcher, parse_retry_after
from memlane.crawl.ssrf import NetworkPolicy
from memlane.ports import Fetcher

SITE = "https://docs.example.com"


def resolver(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
    table = {
        "docs.example.com": "93.184.216.34",
        "cdn.example.net": "151.101.1.1",
        "intranet.test": "10.0.0.5",
    }
    if host not in table:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (table[host], port))]


Handler = Callable[[httpx.Request], httpx.Response]


def make_fetcher(handler: Handler, **kwargs: Any) -> tuple[SafeFetcher, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    client = httpx.Client(transport=httpx.MockTransport(record))
    return SafeFetcher(client, resolver=resolver, **kwargs), seen


def reply(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Handler:
    """A response factory. The body is streamed (an iterator), as from a real connection."""
    return lambda request: httpx.Response(status, headers=headers, content=iter([body]))


def routes(table: dict[str, Handler]) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        answer = table.get(str(request.url))
        return answer(request) if answer is not None else httpx.Response(404)

    return handle


def test_safe_fetcher_is_a_fetcher() -> None:
    fetcher, _ = make_fetcher(routes({}))
    assert isinstance(fetcher, Fetcher)


def test_a_page_is_fetched_with_metadata_and_our_user_agent() -> None:
    fetcher, seen = make_fetcher(
        routes(
            {
                f"{SITE}/docs": reply(
                    200,
                    b"<html>hi</html>",
                    headers={
                        "content-type": "text/html; charset=utf-8",
                        "etag": '"v1"',
                        "last-modified": "Wed, 01 May 2024 10:00:00 GMT",
                    },
                )
            }
        )
    )
    result = fetcher.fetch(f"{SITE}/docs")
    assert (result.url, result.status, result.content) == (f"{SITE}/docs", 200, b"<html>hi</html>")
    assert result.content_type == "text/html; charset=utf-8"
    assert result.etag == '"v1"'
    assert result.last_modified == "Wed, 01 May 2024 10:00:00 GMT"
    assert result.not_modified is False and result.redirected_from is None and result.ok
    assert seen[0].headers["user-agent"] == USER_AGENT == "memlane-crawler/0.1 (+https://github.com/memlane)"
    assert "if-none-match" not in seen[0].headers


def test_conditional_request_and_304() -> None:
    def page(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"etag": '"v1"'})
        return reply(200, b"new")(request)

    fetcher, seen = make_fetcher(routes({f"{SITE}/docs": page}))
    result = fetcher.fetch(f"{SITE}/docs", etag='"v1"', last_modified="Wed, 01 May 2024 10:00:00 GMT")
    assert result.not_modified is True
    assert result.status == 304
    assert result.content == b""
    assert result.etag == '"v1"'
    assert result.last_modified == "Wed, 01 May 2024 10:00:00 GMT"  # kept from the request
    assert seen[0].headers["if-modified-since"] == "Wed, 01 May 2024 10:00:00 GMT"


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_skip_statuses_are_results(status: int) -> None:
    fetcher, _ = make_fetcher(routes({f"{SITE}/gone": reply(status, b"nope")}))
    result = fetcher.fetch(f"{SITE}/gone")
    assert result.status == status
    assert result.skipped is True
    assert result.content == b""


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_server_errors_are_transient(status: int) -> None:
    fetcher, _ = make_fetcher(routes({f"{SITE}/x": reply(status, headers={"retry-after": "7"})}))
    with pytest.raises(FetchError) as info:
        fetcher.fetch(f"{SITE}/x")
    assert info.value.transient is True
    assert info.value.status == status
    assert info.value.retry_after_s == 7.0
    assert info.value.message == f"HTTP {status} from {SITE}/x"


@pytest.mark.parametrize("status", [400, 405, 451, 300])
def test_other_statuses_are_permanent_errors(status: int) -> None:
    fetcher, _ = make_fetcher(routes({f"{SITE}/x": reply(status)}))
    with pytest.raises(FetchError) as info:
        fetcher.fetch(f"{SITE}/x")
    assert info.value.transient is False
    assert info.value.message == f"unexpected HTTP {status} from {SITE}/x"


def test_network_errors_are_transient() -> None:
    def broken(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out", request=request)

    for handler, text in ((broken, "network error"), (slow, "timed out")):
        fetcher, _ = make_fetcher(handler)
        with pytest.raises(FetchError) as info:
            fetcher.fetch(f"{SITE}/x")
        assert info.value.transient is True
        assert text in info.value.message


def test_redirects_are_followed_manually_and_reported() -> None:
    fetcher, seen = make_fetcher(
        routes(
            {
                f"{SITE}/old": reply(301, headers={"location": "/new#frag"}),
                f"{SITE}/new": reply(302, headers={"location": "https://cdn.example.net/final"}),
                "https://cdn.example.net/final": reply(200, b"ok"),
            }
        )
    )
    result = fetcher.fetch(f"{SITE}/old")
    assert result.url == "https://cdn.example.net/final"
    assert result.redirected_from == f"{SITE}/old"
    assert result.content == b"ok"
    assert [str(r.url) for r in seen] == [f"{SITE}/old", f"{SITE}/new", "https://cdn.example.net/final"]


@pytest.mark.parametrize(
    ("location", "reason_part"),
    [
        ("http://169.254.169.254/latest/meta-data/iam/", "169.254.169.254 is a cloud metadata address"),
        ("http://127.0.0.1:7432/status", "127.0.0.1 is a loopback address"),
        ("http://[::1]/", "::1 is a loopback address"),
        ("http://2130706433/", "is the IP address 127.0.0.1"),
        ("http://intranet.test/wiki", "resolves to 10.0.0.5"),
        ("file:///etc/passwd", "scheme 'file' is not allowed"),
        ("gopher://127.0.0.1:6379/_FLUSHALL", "scheme 'gopher' is not allowed"),
    ],
)
def test_a_redirect_to_an_internal_address_is_refused_at_the_hop(location: str, reason_part: str) -> None:
    # Given a public page that redirects somewhere internal
    fetcher, seen = make_fetcher(routes({f"{SITE}/go": reply(302, headers={"location": location})}))
    # When it is fetched
    with pytest.raises(UnsafeURLError) as info:
        fetcher.fetch(f"{SITE}/go")
    # Then the hop is refused before any request is sent to it, and the error names both URLs
    assert [str(r.url) for r in seen] == [f"{SITE}/go"]
    assert reason_part in info.value.reason
    assert info.value.reason.endswith(f"(redirected from {SITE}/go)")


def test_redirect_cap_and_loops() -> None:
    table = {f"{SITE}/hop{i}": reply(302, headers={"location": f"/hop{i + 1}"}) for i in range(7)}
    table[f"{SITE}/hop5"] = reply(200, b"five redirects are fine")
    fetcher, _ = make_fetcher(routes(table))
    assert fetcher.fetch(f"{SITE}/hop0").content == b"five redirects are fine"

    table[f"{SITE}/hop5"] = reply(302, headers={"location": "/hop6"})
    fetcher, seen = make_fetcher(routes(table))
    with pytest.raises(TooManyRedirectsError) as info:
        fetcher.fetch(f"{SITE}/hop0")
    assert info.value.message == f"more than 5 redirects starting at {SITE}/hop0"
    assert info.value.transient is False
    assert len(seen) == 6

    loop = {
        f"{SITE}/a": reply(302, headers={"location": "/b"}),
        f"{SITE}/b": reply(302, headers={"location": "/a"}),
    }
    fetcher, seen = make_fetcher(routes(loop))
    with pytest.raises(TooManyRedirectsError, match="redirect loop"):
        fetcher.fetch(f"{SITE}/a")
    assert len(seen) == 2


def test_redirect_without_location_is_an_error() -> None:
    fetcher, _ = make_fetcher(routes({f"{SITE}/x": reply(302)}))
    with pytest.raises(FetchError, match="has no Location") as info:
        fetcher.fetch(f"{SITE}/x")
    assert info.value.transient is False


def test_size_cap_by_declared_length_by_stream_and_after_decompression() -> None:
    cap = 1024
    big = b"x" * (cap + 1)
    fetcher, _ = make_fetcher(
        routes(
            {
                f"{SITE}/declared": reply(200, big, headers={"content-length": str(len(big))}),
                f"{SITE}/streamed": lambda r: httpx.Response(200, content=iter([b"x" * 600, b"x" * 600])),
                f"{SITE}/bomb": reply(200, gzip.compress(b"\0" * (10 * cap)), {"content-encoding": "gzip"}),
                f"{SITE}/fits": reply(200, gzip.compress(b"y" * cap), {"content-encoding": "gzip"}),
            }
        ),
        limits=FetchLimits(max_bytes=cap),
    )
    for path in ("/declared", "/streamed", "/bomb"):
        with pytest.raises(PageTooLargeError) as info:
            fetcher.fetch(f"{SITE}{path}")
        assert info.value.message == "page exceeds 1 KB"
        assert info.value.transient is False
    assert fetcher.fetch(f"{SITE}/fits").content == b"y" * cap


def test_default_cap_message_is_5_mb() -> None:
    fetcher, _ = make_fetcher(routes({f"{SITE}/x": reply(200, b"x" * (5 * 1024 * 1024 + 1))}))
    with pytest.raises(PageTooLargeError, match="^page exceeds 5 MB$"):
        fetcher.fetch(f"{SITE}/x")


def test_unsupported_or_corrupt_encoding_is_a_permanent_error() -> None:
    fetcher, _ = make_fetcher(
        routes(
            {
                f"{SITE}/br": reply(200, b"\x00", {"content-encoding": "br"}),
                f"{SITE}/bad": reply(200, b"not gzip", {"content-encoding": "gzip"}),
            }
        )
    )
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
        fetcher.fetch(f"{SITE}/br")
    with pytest.raises(FetchError, match="corrupt gzip body") as info:
        fetcher.fetch(f"{SITE}/bad")
    assert info.value.transient is False


def test_total_time_limit() -> None:
    now = [0.0]

    def clock() -> float:
        return now[0]

    def drip() -> Any:
        for _ in range(10):
            now[0] += 4.0  # each chunk "takes" four seconds
            yield b"x"

    fetcher, _ = make_fetcher(
        routes({f"{SITE}/slow": lambda r: httpx.Response(200, content=drip())}), clock=clock
    )
    with pytest.raises(FetchError, match="took longer than 30 s") as info:
        fetcher.fetch(f"{SITE}/slow")
    assert info.value.transient is True


class _FakeNetworkStream:
    def __init__(self, peer: tuple[str, int]) -> None:
        self.peer = peer

    def get_extra_info(self, name: str) -> Any:
        return self.peer if name == "server_addr" else None


def test_peer_address_is_rechecked_after_connect() -> None:
    # Given a transport whose connection (somehow) ended up at a private address
    def rebound(request: httpx.Request) -> httpx.Response:
        stream = _FakeNetworkStream(("10.0.0.5", 80))
        return httpx.Response(200, content=iter([b"secret"]), extensions={"network_stream": stream})

    fetcher, _ = make_fetcher(rebound)
    # Then the response is refused
    with pytest.raises(UnsafeURLError) as info:
        fetcher.fetch(f"{SITE}/x")
    assert info.value.reason == "the connection reached 10.0.0.5, a private address"
    assert info.value.url == f"{SITE}/x"


def test_policy_is_applied_to_the_initial_url() -> None:
    fetcher, seen = make_fetcher(routes({}))
    with pytest.raises(UnsafeURLError, match="169.254.169.254 is a cloud metadata address"):
        fetcher.fetch("http://169.254.169.254/latest/meta-data/")
    assert seen == []
    loopback, seen = make_fetcher(
        routes({"http://127.0.0.1:9/x": reply(200, b"local")}), policy=NetworkPolicy.loopback_only()
    )
    assert loopback.fetch("http://127.0.0.1:9/x").content == b"local"


def test_parse_retry_after() -> None:
    from datetime import UTC, datetime

    now = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 01 May 2024 10:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
