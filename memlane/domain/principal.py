"""Who is calling: built only from a verified API key, the tenant scope of every query."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """Who is calling. Built only from a verified API key; the tenant scope of every query."""

    organization_id: str
    key_id: str
    user_id: str = "api"
    rate_limit_per_minute: int = 100
    can_manage_keys: bool = False
