"""Field types shared by the request models of every layer.

A string of only whitespace is refused with "must not be empty", the words a 400 names the field
with (`content: must not be empty`). Length limits stay on the field (`Field(min_length=1,
max_length=...)`) and are checked first.

Instants and days a request carries are bounded (`Instant`, `Day`): Python's datetime ends at the
years 1 and 9999, so `9999-12-31T23:59:59-14:00` could not even be turned into UTC (a 500 in
recall's filter and in forget_after). A request's dates lie between EARLIEST and LATEST, a
thousand years inside that range, so every conversion and day's arithmetic memlane does on them
stays representable. Integers that name a position (message_index) stay within JavaScript's exact
integers (MAX_SAFE_INT), which every store holds too (SQLite's INTEGER ends at 2^63 - 1).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated

from pydantic import AfterValidator

BLANK_MESSAGE = "must not be empty"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(BLANK_MESSAGE)
    return value


def _trimmed_not_blank(value: str) -> str:
    return _not_blank(value).strip()


def _none_or_trimmed_not_blank(value: str | None) -> str | None:
    return value if value is None else _trimmed_not_blank(value)


# Kept as sent (content, a query).
NonBlankStr = Annotated[str, AfterValidator(_not_blank)]
# Surrounding whitespace dropped (a name, a title, a collection): "  docs " is stored as "docs".
TrimmedNonBlankStr = Annotated[str, AfterValidator(_trimmed_not_blank)]
# The same for an optional field (a PATCH): None passes; the validator wraps the whole union so a
# string's length limits are still checked before its blankness.
OptionalTrimmedNonBlankStr = Annotated[str | None, AfterValidator(_none_or_trimmed_not_blank)]


# --------------------------------------------------------------------------- bounded dates and integers

EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
DATE_RANGE_MESSAGE = "must be between 1000-01-01 and 9000-01-01"
MAX_SAFE_INT = 2**53 - 1  # Number.MAX_SAFE_INTEGER: JavaScript clients read it exactly


def _bounded_instant(value: datetime) -> datetime:
    """Naive means UTC (as everywhere in memlane); the instant must lie in [EARLIEST, LATEST)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    try:
        utc = aware.astimezone(UTC)
    except OverflowError:
        raise ValueError(DATE_RANGE_MESSAGE) from None
    if not EARLIEST <= utc < LATEST:
        raise ValueError(DATE_RANGE_MESSAGE)
    return aware


def _bounded_instant_or_day(value: datetime | date) -> datetime | date:
    if isinstance(value, datetime):
        return _bounded_instant(value)
    if not EARLIEST.date() <= value < LATEST.date():
        raise ValueError(DATE_RANGE_MESSAGE)
    return value


Instant = Annotated[datetime, AfterValidator(_bounded_instant)]
# A filter that takes a day or an instant: the union is parsed first, then the one range applies.
InstantOrDay = Annotated[datetime | date, AfterValidator(_bounded_instant_or_day)]
