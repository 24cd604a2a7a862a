"""The Python client package (clients/python, memlane_client): one request funnel, typed errors."""

from __future__ import annotations

import httpx
import pytest
from memlane_client import MemlaneClient, MemlaneError, MemlaneUnreachable


def _client(handler) -> MemlaneClient:
    return MemlaneClient("http://memlane.test/", "mlk_x", timeout=5, transport=httpx.MockTransport(handler))


def test_requests_carry_the_key_and_answers_are_decoded():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/v3/memory":
            return httpx.Response(201, json={"id": "d1", "status": "ready"})
        if request.url.path == "/v3/projects" and request.method == "GET":
            return httpx.Response(200, json={"projects": [{"id": "p1", "name": "Home", "slug": "home"}]})
        return httpx.Response(204)

    with _client(handler) as memlane:
        assert memlane.base_url == "http://memlane.test"
        assert memlane.remember("Ferry at nine.", title="Ferry", tags=["boat"], idempotency_key="k1") == {
            "id": "d1", "status": "ready"}
        assert memlane.project_id("home") == "p1"
        assert memlane.request("DELETE", "/v3/documents/d1") == {}
    saved = seen[0]
    assert saved.headers["Authorization"] == "Bearer mlk_x" and saved.headers["Idempotency-Key"] == "k1"
    assert saved.read() == b'{"content":"Ferry at nine.","title":"Ferry","metadata":{"tags":["boat"]}}'


def test_errors_carry_the_status_and_the_servers_error_text():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v3/recall":
            return httpx.Response(429, json={"error": "rate limit of 1 requests per minute exceeded; retry after 60 s"},
                                  headers={"Retry-After": "60"})
        return httpx.Response(502, text="<html>bad gateway</html>")

    memlane = _client(handler)
    with pytest.raises(MemlaneError) as exc:
        memlane.recall("ferry")
    assert exc.value.status == 429 and exc.value.error.startswith("rate limit of 1")
    assert exc.value.headers["retry-after"] == "60"
    with pytest.raises(MemlaneError) as exc:
        memlane.whoami()
    assert (exc.value.status, exc.value.error) == (502, "<html>bad gateway</html>")


def test_an_unreachable_server_is_a_connection_error():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(MemlaneUnreachable) as exc:
        _client(refuse).whoami()
    assert isinstance(exc.value, ConnectionError) and isinstance(exc.value, MemlaneError)
    assert exc.value.status == 0 and str(exc.value) == "cannot reach memlane at http://memlane.test: " \
                                               "connection refused"


def test_the_route_table_is_read_once():
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, json={"paths": {"/status": {}, "/v3/recall": {}}})

    memlane = _client(handler)
    assert memlane.serves("/status") and not memlane.serves("/v3/memory-graph")
    assert calls == ["/openapi.json"]
