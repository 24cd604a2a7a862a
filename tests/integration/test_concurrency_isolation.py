"""Concurrent requests from two tenants on the threaded local server never see each other's
request: the resolver's per-request state is process-global in Powertools, so memlane
serialises it. Without that, one tenant's body or identity could leak into another's request."""

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
