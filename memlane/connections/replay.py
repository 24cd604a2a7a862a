"""Webhook deliveries are applied once.

GitHub signs the body and nothing else: no timestamp, and a redelivery (from the webhook's page,
or GitHub's own retry) keeps its `X-GitHub-Delivery` id. So a signed delivery captured once could
be sent again for ever. memlane remembers, for DELIVERY_TTL_SECONDS, both the delivery id and the
digest of the signed body of every delivery it applied: the same id, or the same signed body under
a new id (the id is not signed), is answered 200 "already applied" and changes nothing.

A delivery is recorded only after it was applied: one that failed half way can be redelivered.
The record lives in the cache port (SQLite here, DynamoDB with a TTL on AWS), under the
connection's id, so connections and organizations never see each other's deliveries.
"""

from __future__ import annotations

import hashlib

from memlane.ports import Services

DELIVERY_TTL_SECONDS = 7 * 24 * 3600  # GitHub keeps redelivering for 3 days; a week covers it


def _keys(connection_id: str, delivery_id: str | None, body: bytes) -> list[str]:
    digest = hashlib.sha256(body).hexdigest()
    keys = [f"webhook-body:{connection_id}:{digest}"]
    if delivery_id:
        keys.append(f"webhook-delivery:{connection_id}:{hashlib.sha256(delivery_id.encode()).hexdigest()}")
    return keys


def already_applied(svc: Services, connection_id: str, delivery_id: str | None, body: bytes) -> bool:
    if svc.cache is None:
        return False
    now = svc.clock.now()
    return any(svc.cache.get(key, now) is not None for key in _keys(connection_id, delivery_id, body))


def record_applied(svc: Services, connection_id: str, delivery_id: str | None, body: bytes) -> None:
    if svc.cache is None:
        return
    now = svc.clock.now()
    for key in _keys(connection_id, delivery_id, body):
        svc.cache.set(key, b"applied", DELIVERY_TTL_SECONDS, now)
