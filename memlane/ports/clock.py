"""Time and counts: the clock every service reads, and the metrics it reports to."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """The real clock (the default of Services.clock)."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class Metrics(Protocol):
    """Operational counts (memlane.observability names them): CloudWatch EMF through Powertools on
    AWS, in-process counters locally. Names only, no per-tenant dimensions: a metric per
    organization would cost money per organization and say nothing an alarm can use."""

    def count(self, name: str, value: int = 1) -> None: ...
