"""The per-key rate limiter (spec §5.1): a fixed one-minute window per API key. Implementations:
memlane.services.ratelimit.InMemoryRateLimiter (one process), memlane.adapters.aws.ratelimit (DynamoDB)."""

from __future__ import annotations

import math
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
