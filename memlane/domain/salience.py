"""Salience: how important a memory is, and therefore how long it is kept (the Vidurai seed).

A memory's salience lives in `Document.metadata["salience"]`. A memory saved without one is
MEDIUM for every read (filters, context), but only an explicit salience sets `forget_after`: an
ordinary `/v3/memory` save must not start expiring after 30 days because a Vidurai default exists.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from memlane.domain.errors import InvalidInputError

SALIENCE_KEY = "salience"


class Salience(StrEnum):
    CRITICAL = "CRITICAL"
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"
    NOISE = "NOISE"

    @property
    def rank(self) -> int:
        """Higher is more important: CRITICAL 4 … NOISE 0, for `min_salience` comparisons."""
        return _RANK[self]

    @property
    def retention(self) -> timedelta | None:
        """How long a memory of this salience is kept; None means never forgotten."""
        days = RETENTION_DAYS[self]
        return None if days is None else timedelta(days=days)


DEFAULT_SALIENCE = Salience.MEDIUM
RETENTION_DAYS: dict[Salience, int | None] = {
    Salience.CRITICAL: None,
    Salience.HIGH: 90,
    Salience.MEDIUM: 30,
    Salience.LOW: 7,
    Salience.NOISE: 1,
}
_RANK = {Salience.CRITICAL: 4, Salience.HIGH: 3, Salience.MEDIUM: 2, Salience.LOW: 1, Salience.NOISE: 0}
ALLOWED = ", ".join(s.value for s in Salience)


def parse_salience(value: Any, field: str = "salience") -> Salience:
    """Case-insensitive; anything else is a 400 that names the field and the allowed values."""
    if isinstance(value, str):
        try:
            return Salience(value.strip().upper())
        except ValueError:
            pass
    raise InvalidInputError(field, f"must be one of {ALLOWED}")


def salience_of(metadata: dict[str, Any]) -> Salience:
    """The salience a stored memory has: its own, or MEDIUM. Never raises on stored data."""
    value = metadata.get(SALIENCE_KEY)
    if isinstance(value, str):
        try:
            return Salience(value.strip().upper())
        except ValueError:
            return DEFAULT_SALIENCE
    return DEFAULT_SALIENCE


def forget_after_for(salience: Salience, created_at: datetime, given: datetime | None) -> datetime | None:
    """An explicit `forget_after` wins; otherwise the salience's retention from `created_at`."""
    if given is not None:
        return given
    retention = salience.retention
    return None if retention is None else created_at + retention


def apply_salience(
    metadata: dict[str, Any], created_at: datetime, given_forget_after: datetime | None
) -> tuple[dict[str, Any], datetime | None]:
    """For a save: validate and normalise `metadata.salience` (when present) and derive the
    document's `forget_after` from it. Without a salience the metadata and date pass unchanged."""
    if SALIENCE_KEY not in metadata:
        return metadata, given_forget_after
    salience = parse_salience(metadata[SALIENCE_KEY], "metadata.salience")
    forget_after = forget_after_for(salience, created_at, given_forget_after)
    return {**metadata, SALIENCE_KEY: salience.value}, forget_after
