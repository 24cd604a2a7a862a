"""When a request is sent again: 429 and 5xx answers (and a save whose Idempotency-Key is still
in progress), with exponential backoff and full jitter, waiting at least what the server's
Retry-After asks, never longer than `max_wait`."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from memlane_client.errors import parse_retry_after

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` more attempts after the first (0: never retry); backoff `base` × 2^n seconds
    with full jitter, capped at `max_backoff`; a Retry-After longer than `max_wait` is not waited
    for (the error is raised at once, carrying it)."""

    max_retries: int = 2
    base: float = 0.5
    max_backoff: float = 8.0
    max_wait: float = 60.0
    statuses: frozenset[int] = field(default=RETRY_STATUSES)

    def should_retry(self, attempt: int, status: int, error: str, idempotent_save: bool) -> bool:
        if attempt >= self.max_retries:
            return False
        if status in self.statuses:
            return True
        # the same save, sent with the same key, is still being written: ask again
        return idempotent_save and status == 409 and "in progress" in error

    def delay(self, attempt: int, retry_after: str | None) -> float | None:
        """Seconds to wait before attempt `attempt + 1`; None when the server asks for longer
        than `max_wait` (give up now rather than hang)."""
        backoff = random.uniform(0, min(self.max_backoff, self.base * (2 ** attempt)))
        asked = parse_retry_after(retry_after)
        if asked is None:
            return backoff
        if asked > self.max_wait:
            return None
        return max(asked, backoff)


NO_RETRY = RetryPolicy(max_retries=0)
