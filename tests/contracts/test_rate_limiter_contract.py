"""The RateLimiter contract: a fixed window per key aligned to the minute, so the local server,
a restarted process and every Lambda agree where a window starts; keys are counted apart.

The local server's limiter is in memory (memlane.services.ratelimit.InMemoryRateLimiter), so the
embedded default and the fake are the same class: two adapters here, not three."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memory_stores import MemoryRateLimiter

from memlane.adapters.aws.ratelimit import DynamoRateLimiter

pytestmark = pytest.mark.integration

MINUTE = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(params=["memory", "aws"])
def limiter(request: pytest.FixtureRequest) -> Any:
    if request.param == "aws":
        return DynamoRateLimiter(
            request.getfixturevalue("table"), client=request.getfixturevalue("atomic_dynamodb")
        )
    return MemoryRateLimiter()


def test_a_key_is_allowed_its_limit_per_minute_then_refused_until_the_next(limiter: Any) -> None:
    start = MINUTE + timedelta(seconds=15)
    decisions = [limiter.hit("key-1", 3, start + timedelta(seconds=i)) for i in range(4)]
    assert [(d.allowed, d.remaining) for d in decisions] == [(True, 2), (True, 1), (True, 0), (False, 0)]
    assert [d.reset_s for d in decisions] == [45, 44, 43, 42]
    assert decisions[-1].retry_after_s == 42 and decisions[-1].limit == 3
    assert decisions[-1].headers() == {
        "RateLimit-Limit": "3",
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": "42",
    }
    # The last second of the window is still the same window; the next minute starts again
    assert limiter.hit("key-1", 3, MINUTE + timedelta(seconds=59, microseconds=999_000)).allowed is False
    fresh = limiter.hit("key-1", 3, MINUTE + timedelta(minutes=1))
    assert (fresh.allowed, fresh.remaining, fresh.reset_s) == (True, 2, 60)


def test_keys_are_counted_apart(limiter: Any) -> None:
    for _ in range(2):
        limiter.hit("key-1", 2, MINUTE)
    assert limiter.hit("key-1", 2, MINUTE).allowed is False
    other = limiter.hit("key-2", 2, MINUTE)
    assert (other.allowed, other.remaining) == (True, 1)


def test_concurrent_hits_are_each_counted_once(limiter: Any) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        decisions = list(pool.map(lambda _: limiter.hit("key-1", 10, MINUTE), range(15)))
    assert sum(d.allowed for d in decisions) == 10
    assert sorted(d.remaining for d in decisions) == [0] * 6 + list(range(1, 10))


def test_a_weighted_hit_counts_as_that_many_requests(limiter: Any) -> None:
    # A bulk save of 40 items against a limit of 50: 10 left, and the next bulk of 40 is refused
    first = limiter.hit("key-1", 50, MINUTE, 40)
    assert (first.allowed, first.remaining) == (True, 10)
    assert limiter.hit("key-1", 50, MINUTE, 40).allowed is False
