"""`Idempotency-Key` for saves (reliability row 1): the first answer is stored and replayed for a
retry with the same key; the same key with another body is a 409. Keys are scoped to the
organization, so tenants never collide. The storing is the idempotency port's
(memlane.ports.idempotency); this module is the rule every saving route shares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memlane.domain.errors import ConflictError, InvalidInputError
from memlane.ports.idempotency import Answer, Idempotency, IdempotencyKeyReused

MAX_KEY_LENGTH = 255


def run_once(port: Idempotency | None, organization_id: str, key: str | None, body: Any,
             action: Callable[[], Answer]) -> Answer:
    """`action()` (returning {"status", "body"}) once per (organization, key); without a key, or
    where no idempotency store is composed, simply `action()`."""
    if key is None or port is None:
        return action()
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise InvalidInputError("Idempotency-Key", f"must be 1–{MAX_KEY_LENGTH} characters")
    try:
        return port.run_once(organization_id, key, body, action)
    except IdempotencyKeyReused as exc:
        raise ConflictError(f"Idempotency-Key: {exc}") from exc
