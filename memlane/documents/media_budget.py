"""How much media work an organization may cost a day, counted per organization.

OCR and transcription are the expensive steps: a 65 KB PDF of 12 pages costs about 24 s of OCR, so
300 pages from one request would be ten CPU minutes, and one organization's uploads could keep the
one local worker (or a deployment's Textract and Transcribe bill) busy for everyone. Each
organization gets a daily budget per meter (Settings.media_*_per_day):

- `ocr_seconds`, `transcribe_seconds`: engine time measured here (Tesseract, an OpenAI model);
- `textract_pages`, `transcribe_minutes`: what AWS bills, counted by the deployment.

Work over the budget is deferred, never failed: a save reads nothing in the request (it answers
202, queued), and the worker puts the job back until the next UTC day starts (`deferral`).

The counts live in the cache port (`CacheMediaBudget`: SQLite here, DynamoDB with a TTL on AWS),
one entry per organization, meter and day. A read-then-write count can lose an increment when two
workers charge the same organization at once; a budget is a brake, not a bill, so that is fine.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memlane.config import Settings
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
        if amount <= 0:
            return
        total = self.spent(org_id, meter, now) + amount
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


def ocr_meter(engine_id: str) -> Meter:
    return "textract_pages" if engine_id == "textract" else "ocr_seconds"


def transcribe_meter(engine_id: str) -> Meter:
    return "transcribe_minutes" if engine_id == "transcribe" else "transcribe_seconds"


def meters_for(kind: str, engine_id: str | None, in_workflow: bool = False) -> tuple[Meter, ...]:
    """The meters a document of this media kind spends on the engine that will read it."""
    if kind in ("image", "pdf"):
        return (ocr_meter(engine_id or ""),)
    return ("transcribe_minutes",) if in_workflow else (transcribe_meter(engine_id or ""),)
