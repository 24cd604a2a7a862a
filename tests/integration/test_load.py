"""Reliability row 19: concurrent clients saving and recalling on the local server. The full
one-minute, 50-client run is `make bench`; CI runs a shorter one (MEMLANE_LOAD_SECONDS)."""

from __future__ import annotations

import os

import pytest

from memlane.loadtest import run_load

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_concurrent_clients_lose_and_duplicate_nothing(server):
    from memlane.services.keys import create_key

    md = server.server.stack.metadata
    keys = [create_key(md, "load", f"client-{i}", rate_limit_per_minute=100_000)[0] for i in range(50)]
    report = run_load(server.url, keys, float(os.environ.get("MEMLANE_LOAD_SECONDS", "15")))
    print("load:", report.summary())
    assert report.errors == []
    assert len(report.saved_ids) == len(set(report.saved_ids)) > 50
    org = md.find_organization_by_slug("load")
    stored = md.all_document_ids(org.id)
    assert stored == set(report.saved_ids), "every acknowledged save is stored, and nothing else"
    assert md.count_documents(org.id) == {md.list_projects(org.id)[0].id: len(report.saved_ids)}
