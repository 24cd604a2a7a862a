"""Who is calling: built only from a verified API key, the tenant scope of every query."""

from __future__ import annotations

from dataclasses import dataclass

from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE


@dataclass(frozen=True)
class Principal:
    """Who is calling. Built only from a verified API key; the tenant scope of every query."""

    organization_id: str
    key_id: str
    user_id: str = "api"
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE
    can_manage_keys: bool = False
