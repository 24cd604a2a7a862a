"""The recall cache."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol


class Cache(Protocol):
    """Recall results by key. Keys embed per-project generation numbers: a write to a project
    bumps its generation (one write), which makes every older key unreachable without a scan."""

    def get(self, key: str, now: datetime) -> bytes | None: ...
    def set(self, key: str, value: bytes, ttl_seconds: int, now: datetime,
            document_ids: Sequence[str] = ()) -> None: ...
    def generations(self, scope_keys: Sequence[str]) -> dict[str, int]: ...
    def bump_generation(self, scope_key: str) -> int: ...
    def purge_document(self, document_id: str) -> int: ...
    def entries_naming(self, document_id: str) -> int: ...


def project_scope_key(org_id: str, project_id: str) -> str:
    """The key of a project's generation in the Cache (a write bumps it; recall reads it)."""
    return f"{org_id}:{project_id}"
