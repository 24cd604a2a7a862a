"""Concurrent requests on the threaded local server: none waits for another's work, and none sees
another's request. Powertools keeps the request being resolved in process-global state; memlane's
resolver (memlane.api.resolver) keeps it per request instead. Without that, one tenant's body or
identity could leak into another's request, or every request would wait for the slowest."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_slow_route_never_reads_another_requests_identity(tmp_path, monkeypatch):
    """Given a route that reads the caller's identity only after a pause (widening the window a
    concurrent request would need), two tenants calling at once each get their own identity."""
    import threading
    import time

    from fakes import HashEmbedder

    from memlane.api import auth
    from memlane.api.app import MemlaneApi
    from memlane.api.routes import v3
    from memlane.config import Settings
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.local.gateway import LocalGateway
    from memlane.services.keys import create_key

    def slow_principal(router):
        time.sleep(0.2)
        return auth.principal_of(router)

    monkeypatch.setattr(v3, "principal_of", slow_principal)
    stack = build_local(Settings(data_dir=tmp_path / "d"), embedder=HashEmbedder(), summarizer=LocalSummarizer())
    try:
        keys = {org: create_key(stack.metadata, org)[0] for org in ("alpha", "beta")}
        gateway = LocalGateway(MemlaneApi(stack.services), stack.services)
        answers: dict[str, str] = {}

        def call(org: str) -> None:
            r = gateway.handle("GET", "/v3/whoami", "", {"x-api-key": keys[org]}, b"")
            answers[org] = r.body.decode()

        threads = [threading.Thread(target=call, args=(org,)) for org in ("alpha", "beta")]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        assert '"organization_name":"alpha"' in answers["alpha"].replace(" ", "")
        assert '"organization_name":"beta"' in answers["beta"].replace(" ", "")
    finally:
        stack.close()


def test_two_apis_in_one_process_each_answer_with_their_own_services(tmp_path):
    from fakes import HashEmbedder

    from memlane.api.app import MemlaneApi
    from memlane.config import Settings
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.local.gateway import LocalGateway
    from memlane.services.keys import create_key

    stacks = [build_local(Settings(data_dir=tmp_path / n), embedder=HashEmbedder(), summarizer=LocalSummarizer())
              for n in ("one", "two")]
    gateways, keys = [], []
    for i, s in enumerate(stacks):
        keys.append(create_key(s.metadata, f"org-{i}")[0])
        gateways.append(LocalGateway(MemlaneApi(s.services), s.services))
    try:
        for i in (0, 1, 0, 1):
            r = gateways[i].handle("GET", "/v3/whoami", "", {"x-api-key": keys[i]}, b"")
            assert r.status == 200 and f"org-{i}" in r.body.decode()
    finally:
        for s in stacks:
            s.close()


class GatedEmbedder:
    """A hashing embedder whose query embedding for "gate …" waits until the test opens the gate,
    holding its request in the middle of a route, as a long embedding would."""

    def __init__(self) -> None:
        import threading

        from fakes import HashEmbedder

        self.inner = HashEmbedder()
        self.waiting = threading.Semaphore(0)
        self.gates: dict[str, threading.Event] = {}

    id = property(lambda self: self.inner.id)
    dimension = property(lambda self: self.inner.dimension)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        gate = self.gates.get(text)
        if gate is not None:
            self.waiting.release()
            assert gate.wait(30), "the test never opened the gate"
        return self.inner.embed_query(text)


def test_requests_do_not_wait_for_a_request_held_in_its_route(tmp_path):
    """Given two tenants' recalls held mid-route (their query embedding blocked), /health, a save
    and another tenant's whoami all answer; then each held recall, released in reverse order,
    answers with its own tenant's memories only."""
    import json
    import threading

    from memlane.api.app import MemlaneApi
    from memlane.config import Settings
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.local.gateway import LocalGateway
    from memlane.services.keys import create_key

    embedder = GatedEmbedder()
    stack = build_local(Settings(data_dir=tmp_path / "d"), embedder=embedder, summarizer=LocalSummarizer())
    try:
        keys = {org: create_key(stack.metadata, org)[0] for org in ("alpha", "beta", "gamma")}
        gateway = LocalGateway(MemlaneApi(stack.services), stack.services)

        def call(org: str, method: str, path: str, body: dict | None = None):
            raw = json.dumps(body).encode() if body is not None else b""
            headers = {"x-api-key": keys[org], "content-type": "application/json"}
            return gateway.handle(method, path, "", headers, raw)

        for org in ("alpha", "beta"):
            r = call(org, "POST", "/v3/memory", {"content": f"The {org} greenhouse vents open at noon."})
            assert r.status == 201
        answers: dict[str, dict] = {}

        def held_recall(org: str) -> None:
            r = call(org, "POST", "/v3/recall", {"query": f"gate {org}"})
            answers[org] = json.loads(r.body)

        threads = {}
        for org in ("alpha", "beta"):
            embedder.gates[f"gate {org}"] = threading.Event()
            threads[org] = threading.Thread(target=held_recall, args=(org,))
            threads[org].start()
            assert embedder.waiting.acquire(timeout=30), f"{org}'s recall never reached its embedding"
        # While both are held in their routes, other requests are answered at once
        assert gateway.handle("GET", "/health", "", {}, b"").status == 200
        assert '"organization_name":"gamma"' in call("gamma", "GET", "/v3/whoami").body.decode().replace(" ", "")
        saved = call("gamma", "POST", "/v3/memory", {"content": "The gamma greenhouse has no vents."})
        assert saved.status == 201 and json.loads(saved.body)["status"] == "ready"
        assert all(t.is_alive() for t in threads.values()), "the held recalls are still held"
        # When they are released, the later one first, each answers with its own tenant's memory
        for org in ("beta", "alpha"):
            embedder.gates[f"gate {org}"].set()
            threads[org].join(30)
        for org in ("alpha", "beta"):
            titles = [r["title"] for r in answers[org]["results"]]
            assert titles and all(org in t for t in titles), (org, titles)
    finally:
        stack.close()
