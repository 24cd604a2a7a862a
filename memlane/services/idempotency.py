"""`Idempotency-Key` for saves (reliability row 1), with Powertools' idempotency utility: the
first response is stored and replayed for a retry with the same key; the same key with another
body is a 409. Keys are scoped to the organization, so tenants never collide."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)

from memlane.domain.errors import ConflictError, InvalidInputError

EXPIRES_AFTER_SECONDS = 24 * 3600
MAX_KEY_LENGTH = 255

_CONFIG = IdempotencyConfig(
    event_key_jmespath="[organization_id, key]",
    payload_validation_jmespath="body",
    expires_after_seconds=EXPIRES_AFTER_SECONDS,
    raise_on_no_idempotency_key=True,
)


def register_lambda_context(context: Any) -> None:
    """In Lambda: lets an interrupted invocation's in-progress record expire with the function."""
    _CONFIG.register_lambda_context(context)


def run_once(
    persistence, organization_id: str, key: str, body: Any, action: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """Run `action` (returning a JSON-serialisable {"status", "body"}) once per (org, key)."""
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise InvalidInputError("Idempotency-Key", f"must be 1–{MAX_KEY_LENGTH} characters")

    def once(request: dict[str, Any]) -> dict[str, Any]:
        return action()

    guarded = idempotent_function(
        data_keyword_argument="request", config=_CONFIG, persistence_store=persistence
    )(once)
    try:
        with warnings.catch_warnings():
            # Outside Lambda there is no remaining-time to bound an in-progress record by; the
            # record then simply lives until it completes or expires, which is what we want.
            warnings.filterwarnings("ignore", message="Couldn't determine the remaining time left")
            return guarded(request={"organization_id": organization_id, "key": key, "body": body})
    except IdempotencyValidationError as exc:
        raise ConflictError("Idempotency-Key: already used with a different request body") from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise ConflictError("Idempotency-Key: a request with this key is still in progress") from exc
