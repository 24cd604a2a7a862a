"""Port: answer a retried request with its first answer (`Idempotency-Key`, reliability row 1).

A service hands over the request's organization, key and body and the action that answers it; the
port runs the action once per (organization, key) and replays its stored answer for a retry. The
same key with another body, or while the first request still runs, is a conflict. Adapters:
memlane.adapters.idempotency (Powertools' utility over SQLite locally, DynamoDB on AWS)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

# An answer the port stores and replays: {"status": int, "body": JSON}.
Answer = dict[str, Any]


class IdempotencyKeyReused(Exception):  # noqa: N818 — a condition the caller answers with 409
    """The key was used with another body, or its first request is still running."""


class Idempotency(Protocol):
    def run_once(self, organization_id: str, key: str, body: Any, action: Callable[[], Answer]) -> Answer:
        """`action()` the first time (organization_id, key) is seen, its stored answer after that.
        Raises IdempotencyKeyReused for the key with another body or while it is in progress."""
        ...

    def bind_invocation(self, context: Any) -> None:
        """A Lambda invocation's context: an interrupted request's in-progress record then expires
        with the function's time limit. A no-op where there is none."""
        ...
