"""Per-key rate limits (spec §5.1): a fixed one-minute window per API key. The port and its
decision: memlane.ports.ratelimit; this is the one-process implementation.

The check runs in the resolver's entry point (memlane.api.app), so the local server and the
Lambda behind API Gateway enforce it with the same code and send the same headers; on AWS the
usage plan throttles in front of it as well.
"""

from __future__ import annotations

import threading
from datetime import datetime

from memlane.ports.ratelimit import WINDOW_SECONDS, RateDecision, decide


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
