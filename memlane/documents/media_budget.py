"""How much media work an organization may cost a day, counted per organization.

OCR and transcription are the expensive steps: a 65 KB PDF of 12 pages costs about 24 s of OCR, so
300 pages from one request would be ten CPU minutes, and one organization's uploads could keep the
one local worker (or a deployment's Textract and Transcribe bill) busy for everyone. Each
organization gets a daily budget per meter (Settings.media_*_per_day):

- `ocr_seconds`, `transcribe_seconds`: engine time measured here (Tesseract, an OpenAI model);
- `textract_pages`, `transcribe_minutes`: what AWS bills, counted by the deployment.

Work over the budget is deferred, never failed: a save reads nothing in the request (it answers
202, queued), and the worker puts the job back until the next UTC day starts (`deferral`). OCR
reserves its estimate before it starts (`reserved`) and settles to what it cost after.

The counts live in the cache port (`CacheMediaBudget`: SQLite here, DynamoDB with a TTL on AWS),
one entry per organization, meter and day. A read-then-write count can lose an increment when two
workers charge the same organization at once; a budget is a brake, not a bill, so that is fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from memlane.config import Settings
from memlane.domain.errors import MediaBudgetDeferred
from memlane.ports import Cache, MediaBudget, Meter, Services

_KEEP_SECONDS = 2 * 24 * 3600


class CacheMediaBudget:
    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    @staticmethod
    def key(org_id: str, meter: Meter, now: datetime) -> str:
        return f"media-budget:{org_id}:{meter}:{now.astimezone(UTC):%Y-%m-%d}"

    def spent(self, org_id: str, meter: Meter, now: datetime) -> float:
        raw = self.cache.get(self.key(org_id, meter, now), now)
        try:
            return float(raw.decode()) if raw else 0.0
        except ValueError:
            return 0.0

    def charge(self, org_id: str, meter: Meter, amount: float, now: datetime) -> None:
        """Add `amount` (negative: give back part of a reservation; the count never goes below 0)."""
        if amount == 0:
            return
        total = max(0.0, self.spent(org_id, meter, now) + amount)
        self.cache.set(self.key(org_id, meter, now), repr(total).encode(), _KEEP_SECONDS, now)


def limit_of(settings: Settings, meter: Meter) -> float:
    return float(getattr(settings, f"media_{meter}_per_day"))


def budget_of(svc: Services) -> MediaBudget | None:
    return CacheMediaBudget(svc.cache) if svc.cache is not None else None


def next_day(now: datetime) -> datetime:
    start = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return start + timedelta(days=1)


def over_budget(svc: Services, org_id: str, meters: tuple[Meter, ...]) -> Meter | None:
    """The first of `meters` whose budget today is spent, or None."""
    budget = budget_of(svc)
    if budget is None:
        return None
    now = svc.clock.now()
    for meter in meters:
        limit = limit_of(svc.settings, meter)
        if limit > 0 and budget.spent(org_id, meter, now) >= limit:
            return meter
    return None


def deferral(svc: Services, org_id: str, meters: tuple[Meter, ...]) -> tuple[Meter, datetime] | None:
    """(the spent meter, when to try again) when work on these meters must wait, else None."""
    meter = over_budget(svc, org_id, meters)
    return (meter, next_day(svc.clock.now())) if meter is not None else None


def charge(svc: Services, org_id: str, meter: Meter, amount: float) -> None:
    budget = budget_of(svc)
    if budget is not None:
        budget.charge(org_id, meter, amount, svc.clock.now())


@contextmanager
def reserved(svc: Services, org_id: str, meter: Meter, estimate: float) -> Iterator[Callable[[float], None]]:
    """Work on `meter` with `estimate` of it reserved before it starts: MediaBudgetDeferred when it
    does not fit what is left of today's budget (a job larger than a whole day's budget runs alone,
    at a day's start, or it would wait for ever). The body says what the work really cost through
    the function it is given (seconds measured, pages read); the reservation is then settled to
    that, and given back whole if the body said nothing. Before, the budget was checked once
    before and charged after: work that started under the budget could run any length past it,
    and so could every job that checked while it ran."""
    budget = budget_of(svc)
    if budget is None:
        yield lambda _cost: None
        return
    now = svc.clock.now()
    limit, spent = limit_of(svc.settings, meter), budget.spent(org_id, meter, now)
    if limit > 0 and (spent >= limit or (spent > 0 and spent + estimate > limit)):
        raise MediaBudgetDeferred(f"today's {meter.replace('_', ' ')} budget of this organization is spent "
                                  f"({spent:g} of {limit:g}; this needs about {estimate:g})")
    budget.charge(org_id, meter, estimate, now)
    cost = [0.0]
    try:
        yield lambda amount: cost.__setitem__(0, amount)
    finally:
        budget.charge(org_id, meter, cost[0] - estimate, now)


def ocr_meter(engine_id: str) -> Meter:
    return "textract_pages" if engine_id == "textract" else "ocr_seconds"


def transcribe_meter(engine_id: str) -> Meter:
    return "transcribe_minutes" if engine_id == "transcribe" else "transcribe_seconds"


def meters_for(kind: str, engine_id: str | None, in_workflow: bool = False) -> tuple[Meter, ...]:
    """The meters a document of this media kind spends on the engine that will read it."""
    if kind in ("image", "pdf"):
        return (ocr_meter(engine_id or ""),)
    return ("transcribe_minutes",) if in_workflow else (transcribe_meter(engine_id or ""),)
