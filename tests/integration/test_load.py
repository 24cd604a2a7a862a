"""Reliability row 19: concurrent clients saving and recalling on the local server. The timed
one-minute, 50-client run is `make bench`; this test gives every client the same number of rounds,
so it checks the outcome (nothing lost, nothing twice, no error), never the speed."""

from __future__ import annotations

import os

import pytest

from bench.load import run_load

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_concurrent_clients_lose_and_duplicate_nothing(server):
    from memlane.services.keys import create_key

    md = server.server.stack.metadata
    keys = [create_key(md, "load", f"client-{i}", rate_limit_per_minute=100_000)[0] for i in range(50)]
    rounds = int(os.environ.get("MEMLANE_LOAD_ROUNDS", "3"))
    report = run_load(server.url, keys, seconds=0, rounds=rounds)
    print("load:", report.summary())
    assert report.errors == []
    assert len(report.saved_ids) == len(set(report.saved_ids)) == 50 * rounds
    org = md.find_organization_by_slug("load")
    stored = md.all_document_ids(org.id)
    assert stored == set(report.saved_ids), "every acknowledged save is stored, and nothing else"
    assert md.count_documents(org.id) == {md.list_projects(org.id)[0].id: len(report.saved_ids)}
