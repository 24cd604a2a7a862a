"""Per-key rate limits (spec §5.1): a fixed one-minute window per API key.

The check runs in the resolver's entry point (memlane.api.app), so the local server and the
Lambda behind API Gateway enforce it with the same code and send the same headers; on AWS the
usage plan throttles in front of it as well.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_s: int  # seconds until the window resets

    @property
    def retry_after_s(self) -> int:
        return max(1, self.reset_s)

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_s),
        }


class RateLimiter(Protocol):
    def hit(self, key_id: str, limit: int, now: datetime, weight: int = 1) -> RateDecision:
        """Count `weight` requests (a bulk save counts each of its items)."""
        ...


def decide(count: int, limit: int, window_start: float, now: float) -> RateDecision:
    reset = max(0, math.ceil(window_start + WINDOW_SECONDS - now))
    return RateDecision(allowed=count <= limit, limit=limit, remaining=max(0, limit - count), reset_s=reset)


class InMemoryRateLimiter:
    """For the single-process local server. Windows are aligned to the minute so that a
    restarted process and the DynamoDB limiter agree on where a window starts."""

    def __init__(self) -> None:
        self._windows: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def hit(self, key_id: str, limit: int, now: datetime, weight: int = 1) -> RateDecision:
        ts = now.timestamp()
        start = ts - (ts % WINDOW_SECONDS)
        with self._lock:
            window, count = self._windows.get(key_id, (start, 0))
            if window != start:
                window, count = start, 0
            count += weight
            self._windows[key_id] = (window, count)
            if len(self._windows) > 10_000:  # forget idle keys
                self._windows = {k: v for k, v in self._windows.items() if v[0] == start}
        return decide(count, limit, window, ts)
