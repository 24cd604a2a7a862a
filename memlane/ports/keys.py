"""The gateway's record of keys (API Gateway's usage plan on AWS; memlane.services.key_admin)."""

from __future__ import annotations

from typing import Protocol

from memlane.domain.models import ApiKey


class KeyRegistry(Protocol):
    def register(self, key: ApiKey) -> str:
        """Makes the key known to the gateway; returns the gateway's id for it."""
        ...

    def deregister(self, key_id: str) -> None: ...
