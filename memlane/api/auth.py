"""The caller's identity inside a route: whatever the authorizer put in the request context.

On AWS the Lambda authorizer returns it; locally `memlane serve` runs the same authenticate()
and writes the same fields into the event it builds. Either way routes read it from one place.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import Router

from memlane.domain.errors import AuthenticationError
from memlane.services.context import Principal


def principal_of(router: Router) -> Principal:
    ctx = (router.current_event.raw_event.get("requestContext") or {}).get("authorizer") or {}
    org = ctx.get("organization_id")
    key = ctx.get("key_id")
    if not org or not key:
        raise AuthenticationError("missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`")
    return Principal(organization_id=org, key_id=key, user_id=ctx.get("user_id") or "api",
                     can_manage_keys=str(ctx.get("can_manage_keys", "")).lower() == "true")


def authorizer_context(p: Principal) -> dict[str, str]:
    """API Gateway passes authorizer context values as strings."""
    return {
        "organization_id": p.organization_id,
        "key_id": p.key_id,
        "user_id": p.user_id,
        "rate_limit": str(p.rate_limit_per_minute),
        "can_manage_keys": "true" if p.can_manage_keys else "false",
    }
