"""The Python client package (clients/python, memlane_client): one request funnel, typed errors,
retries with backoff that honour Retry-After, an Idempotency-Key on every save, pagination, and
the asynchronous client with the same methods. The server is httpx.MockTransport here; the
package against a real local server: tests/integration/clients/."""

from __future__ import annotations

import asyncio
import inspect
import json

import httpx
import pytest
from memlane_client import (
    API_VERSION,
    AsyncMemlaneClient,
    BadRequest,
    MemlaneClient,
    MemlaneError,
    MemlaneUnreachable,
    NotFound,
    RateLimited,
    ServerError,
)
from memlane_client import client as client_module
from memlane_client.retry import RetryPolicy


@pytest.fixture
def slept(monkeypatch) -> list[float]:
    """The client's waits between attempts, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", waits.append)

    async def asleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(client_module.asyncio, "sleep", asleep)
    return waits


def _client(handler, **options) -> MemlaneClient:
    return MemlaneClient("http://memlane.test/", "mlk_x", timeout=5, transport=httpx.MockTransport(handler),
                         **options)


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
    assert saved.headers["User-Agent"] == f"memlane-client-python (API {API_VERSION})"
    assert saved.read() == b'{"content":"Ferry at nine.","title":"Ferry","metadata":{"tags":["boat"]}}'


def test_errors_carry_the_status_and_the_servers_error_text():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v3/recall":
            return httpx.Response(429, json={"error": "rate limit of 1 requests per minute exceeded; retry after 60 s"},
                                  headers={"Retry-After": "60"})
        if request.url.path == "/v3/documents/nope":
            return httpx.Response(404, json={"error": "document not found: nope"})
        return httpx.Response(502, text="<html>bad gateway</html>")

    memlane = _client(handler, max_retries=0)
    with pytest.raises(RateLimited) as exc:
        memlane.recall("ferry")
    assert exc.value.status == 429 and exc.value.error.startswith("rate limit of 1")
    assert exc.value.headers["retry-after"] == "60" and exc.value.retry_after == 60
    with pytest.raises(ServerError) as server:
        memlane.whoami()
    assert (server.value.status, server.value.error) == (502, "<html>bad gateway</html>")
    with pytest.raises(NotFound, match="document not found: nope"):
        memlane.document("nope")
    assert isinstance(server.value, MemlaneError)


def test_an_unreachable_server_is_a_connection_error():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(MemlaneUnreachable) as exc:
        _client(refuse).whoami()
    assert isinstance(exc.value, ConnectionError) and isinstance(exc.value, MemlaneError)
    assert exc.value.status == 0 and str(exc.value) == "cannot reach memlane at http://memlane.test: " \
                                               "connection refused"


def test_a_timeout_is_reported_as_no_answer_and_the_timeout_is_the_clients():
    def slow(request: httpx.Request) -> httpx.Response:
        assert request.extensions["timeout"]["read"] == 5
        raise httpx.ReadTimeout("timed out")

    with pytest.raises(MemlaneUnreachable, match="timed out"):
        _client(slow).whoami()


def test_the_route_table_is_read_once():
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, json={"paths": {"/status": {}, "/v3/recall": {}}})

    memlane = _client(handler)
    assert memlane.serves("/status") and not memlane.serves("/v3/memory-graph")
    assert calls == ["/openapi.json"]


# ---------------------------------------------------------------------------------------- retries

def _flaky(answers: list[httpx.Response], seen: list[httpx.Request]):
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)
    return handler


def test_429_and_5xx_are_retried_waiting_at_least_retry_after(slept):
    seen: list[httpx.Request] = []
    answers = [httpx.Response(429, json={"error": "rate limit"}, headers={"Retry-After": "3"}),
               httpx.Response(503, json={"error": "busy"}),
               httpx.Response(200, json={"results": [], "total": 0, "floor": 0.27})]
    memlane = _client(_flaky(answers, seen), retry=RetryPolicy(max_retries=2, base=0.5, max_backoff=8))
    assert memlane.recall("ferry")["floor"] == 0.27
    assert len(seen) == 3
    assert slept[0] >= 3  # the server asked for 3 s
    assert 0 <= slept[1] <= 1.0  # backoff 0.5 × 2^1 with full jitter


def test_retries_end_with_the_last_answers_typed_error(slept):
    seen: list[httpx.Request] = []
    answers = [httpx.Response(500, json={"error": "internal error (request r-1)"}) for _ in range(3)]
    with pytest.raises(ServerError) as exc:
        _client(_flaky(answers, seen), max_retries=2).whoami()
    assert exc.value.error == "internal error (request r-1)" and len(seen) == 3 and len(slept) == 2


def test_a_retry_after_beyond_the_longest_wait_is_not_waited_for(slept):
    seen: list[httpx.Request] = []
    answers = [httpx.Response(429, json={"error": "rate limit"}, headers={"Retry-After": "3600"})]
    with pytest.raises(RateLimited) as exc:
        _client(_flaky(answers, seen), retry=RetryPolicy(max_wait=60)).whoami()
    assert exc.value.retry_after == 3600 and slept == [] and len(seen) == 1


def test_client_mistakes_are_never_retried(slept):
    seen: list[httpx.Request] = []
    answers = [httpx.Response(400, json={"error": "limit: must be at most 100"})]
    with pytest.raises(BadRequest, match="limit: must be at most 100"):
        _client(_flaky(answers, seen)).recall("x", limit=1000)
    assert len(seen) == 1 and slept == []


def test_every_save_carries_an_idempotency_key_and_a_retry_sends_the_same_one(slept):
    seen: list[httpx.Request] = []
    answers = [httpx.Response(502, text="bad gateway"),
               httpx.Response(409, json={"error": "Idempotency-Key: a request with this key is still in progress"}),
               httpx.Response(201, json={"id": "d1", "status": "ready"}),
               httpx.Response(201, json={"id": "d2", "status": "ready"})]
    memlane = _client(_flaky(answers, seen))
    assert memlane.remember("Ferry at nine.")["id"] == "d1"
    assert memlane.save({"content": "Bus at ten."})["id"] == "d2"
    keys = [r.headers.get("Idempotency-Key") for r in seen]
    assert keys[0] and keys[0] == keys[1] == keys[2]  # one save, three attempts, one key
    assert keys[3] and keys[3] != keys[0]  # another save, another key


def test_a_conflict_that_is_not_an_in_progress_save_is_final(slept):
    seen: list[httpx.Request] = []
    answers = [httpx.Response(409, json={"error": "Idempotency-Key: already used with a different request body"})]
    with pytest.raises(MemlaneError) as exc:
        _client(_flaky(answers, seen)).remember("x", idempotency_key="k")
    assert exc.value.status == 409 and len(seen) == 1


# ---------------------------------------------------------------------------------------- pagination

def test_project_documents_follow_the_cursor():
    pages = {None: (["d5", "d4"], "c1"), "c1": (["d3", "d2"], "c2"), "c2": (["d1"], None)}
    asked: list[tuple[str | None, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        asked.append((cursor, request.url.params["limit"]))
        ids, nxt = pages[cursor]
        return httpx.Response(200, json={"documents": [{"id": i} for i in ids], "next_cursor": nxt})

    got = [d["id"] for d in _client(handler).iter_project_documents("p1", page_size=2)]
    assert got == ["d5", "d4", "d3", "d2", "d1"]
    assert asked == [(None, "2"), ("c1", "2"), ("c2", "2")]


def test_docset_pages_follow_the_offset_to_the_total():
    def handler(request: httpx.Request) -> httpx.Response:
        offset, limit = int(request.url.params["offset"]), int(request.url.params["limit"])
        urls = [f"https://docs.test/{i}" for i in range(5)][offset:offset + limit]
        return httpx.Response(200, json={"pages": [{"url": u} for u in urls], "total": 5, "limit": limit,
                                         "offset": offset})

    got = [p["url"] for p in _client(handler).iter_docset_pages("ds1", page_size=2)]
    assert got == [f"https://docs.test/{i}" for i in range(5)]


# ---------------------------------------------------------------------------------------- async

def test_the_async_client_has_every_method_of_the_sync_one():
    def public(cls: type) -> set[str]:
        return {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}

    assert public(MemlaneClient) - {"close"} <= public(AsyncMemlaneClient)
    for name in public(MemlaneClient) - {"close", "iter_project_documents", "iter_docset_pages"}:
        sync_sig = inspect.signature(getattr(MemlaneClient, name))
        async_sig = inspect.signature(getattr(AsyncMemlaneClient, name))
        assert list(sync_sig.parameters) == list(async_sig.parameters), name


def test_the_async_client_retries_saves_with_one_key_and_pages(slept):
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/v3/memory":
            if len([r for r in seen if r.url.path == "/v3/memory"]) == 1:
                return httpx.Response(503, json={"error": "busy"}, headers={"Retry-After": "1"})
            return httpx.Response(201, json={"id": "d1", "status": "ready", "conversation_id": "c"})
        cursor = request.url.params.get("cursor")
        return httpx.Response(200, json={"documents": [{"id": cursor or "first"}],
                                         "next_cursor": None if cursor else "second"})

    async def run() -> tuple[dict, list[str]]:
        async with AsyncMemlaneClient("http://memlane.test", "mlk_x", transport=httpx.MockTransport(handler)) as m:
            saved = await m.remember("hello", conversation_id="c", message_index=0)
            ids = [d["id"] async for d in m.iter_project_documents("p1")]
            return dict(saved), ids

    saved, ids = asyncio.run(run())
    assert saved["id"] == "d1" and ids == ["first", "second"]
    saves = [r for r in seen if r.url.path == "/v3/memory"]
    assert len(saves) == 2 and saves[0].headers["Idempotency-Key"] == saves[1].headers["Idempotency-Key"]
    assert json.loads(saves[0].read()) == {"content": "hello", "conversation_id": "c", "message_index": 0}
    assert slept[0] >= 1


def test_framework_retrievers_keep_strong_matches_unless_asked_for_weak_ones():
    # issue 35: the LangChain and LlamaIndex retrievers ask for strong matches only (`strict`) by default
    from memlane_client.integrations import document_metadata, kept, recall_options

    assert recall_options(None, include_weak=False) == {"strict": True}
    assert recall_options(None, include_weak=True) == {}
    assert recall_options(0.2, include_weak=False) == {"min_relevance": 0.2}  # the caller's own floor
    results = [{"document_id": "a", "match": "strong"}, {"document_id": "b", "match": "weak"}]
    assert [r["document_id"] for r in kept(results, include_weak=False)] == ["a"]
    assert [r["document_id"] for r in kept(results, include_weak=True)] == ["a", "b"]
    assert document_metadata({"document_id": "b", "match": "weak"})["match"] == "weak"
