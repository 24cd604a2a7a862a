"""The idempotency port on Powertools' idempotency utility: the first answer stored in a
persistence layer (memlane.adapters.local.idempotency's SQLite table locally, DynamoDB's metadata
table on AWS) and replayed for a retry; the key's body is validated so that another body is refused.
Powertools (and boto3 behind it) is imported on first use: most requests send no key."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

from memlane.ports.idempotency import Answer, IdempotencyKeyReused

EXPIRES_AFTER_SECONDS = 24 * 3600


class PowertoolsIdempotency:
    """`make_layer`: makes the Powertools persistence layer (a BasePersistenceLayer) on the first
    request that sends a key; DynamoDB's builds a boto3 client, which most requests never need."""

    def __init__(self, make_layer: Callable[[], Any]) -> None:
        self._make_layer = make_layer
        self._persistence: Any = None
        self._config: Any = None
        self._lock = threading.Lock()

    def layer(self) -> Any:
        with self._lock:
            if self._persistence is None:
                self._persistence = self._make_layer()
            return self._persistence

    def _settings(self) -> Any:
        with self._lock:
            return self._config or self._make_config()

    def _make_config(self) -> Any:
        if self._config is None:
            from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

            self._config = IdempotencyConfig(
                event_key_jmespath="[organization_id, key]",
                payload_validation_jmespath="body",
                expires_after_seconds=EXPIRES_AFTER_SECONDS,
                raise_on_no_idempotency_key=True,
            )
        return self._config

    def bind_invocation(self, context: Any) -> None:
        self._settings().register_lambda_context(context)

    def run_once(self, organization_id: str, key: str, body: Any, action: Callable[[], Answer]) -> Answer:
        from aws_lambda_powertools.utilities.idempotency import idempotent_function
        from aws_lambda_powertools.utilities.idempotency.exceptions import (
            IdempotencyAlreadyInProgressError,
            IdempotencyValidationError,
        )

        def once(request: dict[str, Any]) -> Answer:
            return action()

        guarded = idempotent_function(data_keyword_argument="request", config=self._settings(),
                                      persistence_store=self.layer())(once)
        try:
            with warnings.catch_warnings():
                # Outside Lambda there is no remaining time to bound an in-progress record by; it
                # then lives until it completes or expires, which is what a local server wants.
                warnings.filterwarnings("ignore", message="Couldn't determine the remaining time left")
                return guarded(request={"organization_id": organization_id, "key": key, "body": body})
        except IdempotencyValidationError as exc:
            raise IdempotencyKeyReused("already used with a different request body") from exc
        except IdempotencyAlreadyInProgressError as exc:
            raise IdempotencyKeyReused("a request with this key is still in progress") from exc
