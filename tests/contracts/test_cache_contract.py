"""The Cache contract: recall results by key until they expire; per-scope generation numbers
that start at 0 and go up by one per bump (a write to a project makes older keys unreachable);
and purge_document, which leaves no entry naming a deleted document."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memory_stores import MemoryCache

from memlane.adapters.aws.cache import DynamoCache
from memlane.adapters.local.cache import SqliteCache

pytestmark = pytest.mark.integration
ADAPTERS = ["sqlite", "aws", "memory"]  # the fixtures they need are in tests/contracts/conftest.py

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(params=ADAPTERS)
def cache(request: pytest.FixtureRequest) -> Any:
    if request.param == "sqlite":
        return SqliteCache(request.getfixturevalue("sqlite_db"))
    if request.param == "aws":
        return DynamoCache(
            request.getfixturevalue("table"), client=request.getfixturevalue("atomic_dynamodb")
        )
    return MemoryCache()


def test_an_entry_is_read_until_it_expires(cache: Any) -> None:
    cache.set("recall:1", b'[{"document_id": "doc-1"}]', 60, T0, document_ids=["doc-1"])
    assert cache.get("recall:1", T0) == b'[{"document_id": "doc-1"}]'
    assert cache.get("recall:1", T0 + timedelta(seconds=59)) == b'[{"document_id": "doc-1"}]'
    assert cache.get("recall:1", T0 + timedelta(seconds=60)) is None
    assert cache.get("recall:other", T0) is None
    # When the key is set again, the new value and the new expiry hold
    cache.set("recall:1", b"[]", 120, T0 + timedelta(seconds=60))
    assert cache.get("recall:1", T0 + timedelta(seconds=179)) == b"[]"


def test_generations_start_at_zero_and_each_bump_adds_one_to_its_scope_only(cache: Any) -> None:
    assert cache.generations(["org-a:p1", "org-a:p2"]) == {"org-a:p1": 0, "org-a:p2": 0}
    assert cache.bump_generation("org-a:p1") == 1
    assert cache.bump_generation("org-a:p1") == 2
    assert cache.generations(["org-a:p1", "org-a:p2", "org-b:p1"]) == {
        "org-a:p1": 2,
        "org-a:p2": 0,
        "org-b:p1": 0,
    }
    assert cache.generations([]) == {}


def test_concurrent_bumps_are_all_counted(cache: Any) -> None:
    # Two writers finishing at once must both invalidate: no bump may be lost
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: cache.bump_generation("org-a:p1"), range(12)))
    assert sorted(results) == list(range(1, 13))
    assert cache.generations(["org-a:p1"]) == {"org-a:p1": 12}


def test_purging_a_document_drops_every_entry_naming_it_and_only_those(cache: Any) -> None:
    cache.set("q1", b"1", 60, T0, document_ids=["doc-1", "doc-2"])
    cache.set("q2", b"2", 60, T0, document_ids=["doc-2"])
    cache.set("q3", b"3", 60, T0, document_ids=["doc-3"])
    cache.set("q4", b"4", 60, T0)
    assert cache.purge_document("doc-2") == 2
    assert [cache.get(k, T0) for k in ("q1", "q2", "q3", "q4")] == [None, None, b"3", b"4"]
    assert cache.purge_document("doc-3") == 1
    assert cache.get("q3", T0) is None
    assert cache.purge_document("never-cached") == 0
    # An entry written after a purge is cached again
    cache.set("q1", b"again", 60, T0, document_ids=["doc-1"])
    assert cache.get("q1", T0) == b"again"


def test_entries_naming_a_document_are_counted_until_purged(cache: Any) -> None:
    cache.set("q1", b"1", 60, T0, document_ids=["doc-1", "doc-2"])
    cache.set("q2", b"2", 60, T0, document_ids=["doc-1"])
    assert (cache.entries_naming("doc-1"), cache.entries_naming("doc-2"), cache.entries_naming("doc-3")) == (2, 1, 0)
    cache.purge_document("doc-1")
    assert cache.entries_naming("doc-1") == 0 and cache.entries_naming("doc-2") == 0
