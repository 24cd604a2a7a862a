"""The caller's identity inside a route: whatever the authorizer put in the request context, and
what a refused caller is told about where to get credentials.

On AWS the Lambda authorizer returns it; locally `memlane serve` runs the same authenticate()
and writes the same fields into the event it builds. Either way routes read it from one place.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.event_handler.router import Router

from memlane.domain.errors import AuthenticationError
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE
from memlane.domain.principal import Principal

MCP_PATH = "/mcp"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"
# How the caller authenticated, in the authorizer context: an API key, or an OAuth access token
# (whose audience is the MCP endpoint: the authorizer allows such callers /mcp only, and the tools
# /mcp runs make their API requests in process, as that caller).
VIA_KEY = "key"
VIA_OAUTH = "oauth"


def principal_of(router: Router) -> Principal:
    ctx = (router.current_event.raw_event.get("requestContext") or {}).get("authorizer") or {}
    org = ctx.get("organization_id")
    key = ctx.get("key_id")
    if not org or not key:
        raise AuthenticationError("missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`")
    return Principal(organization_id=org, key_id=key, user_id=ctx.get("user_id") or "api",
                     rate_limit_per_minute=rate_limit_of(ctx),
                     can_manage_keys=str(ctx.get("can_manage_keys", "")).lower() == "true")


def rate_limit_of(ctx: Mapping[str, Any]) -> int:
    """The caller's requests a minute, as the authorizer wrote it (a string on API Gateway). The
    rate limiter counts against it and a key the caller mints inherits it, so both read it here."""
    try:
        limit = int(str(ctx.get("rate_limit") or DEFAULT_RATE_LIMIT_PER_MINUTE))
    except ValueError:
        return DEFAULT_RATE_LIMIT_PER_MINUTE
    return limit if limit > 0 else DEFAULT_RATE_LIMIT_PER_MINUTE


def authorizer_context(p: Principal, via: str = VIA_KEY) -> dict[str, str]:
    """API Gateway passes authorizer context values as strings."""
    return {
        "organization_id": p.organization_id,
        "key_id": p.key_id,
        "user_id": p.user_id,
        "rate_limit": str(p.rate_limit_per_minute),
        "can_manage_keys": "true" if p.can_manage_keys else "false",
        "via": via,
    }


# ------------------------------------------------------------------------------------ public URLs


def public_base_url(headers: Mapping[str, str], request_context: Mapping[str, Any] | None = None,
                    configured: str = "") -> str:
    """The URL clients use to reach this API, without a trailing slash: `configured`
    (Settings.public_url, MEMLANE_PUBLIC_URL: the deployed stack sets it: tokens are bound to it,
    so it must not come from the request), else the API Gateway domain and stage, else the Host
    header (the local server, http on loopback)."""
    configured = configured.strip()
    if configured:
        return configured.rstrip("/")
    rc = request_context or {}
    domain = rc.get("domainName")
    stage = rc.get("stage")
    if domain:
        prefix = f"/{stage}" if stage and stage != "$default" and ".execute-api." in domain else ""
        return f"https://{domain}{prefix}"
    lowered = {k.lower(): v for k, v in headers.items()}
    host = (lowered.get("host") or "127.0.0.1").strip()
    scheme = (lowered.get("x-forwarded-proto") or ("http" if is_loopback_host(host) else "https")).split(",")[0]
    return f"{scheme.strip()}://{host}"


def protected_resource_metadata_url(base_url: str) -> str:
    return base_url + PROTECTED_RESOURCE_PATH


def www_authenticate(base_url: str) -> str:
    """RFC 9728 §5.1: a refused request names the protected resource metadata, where an MCP
    client finds how to authenticate (and, on a stack with OAuth, the authorization server)."""
    return f'Bearer resource_metadata="{protected_resource_metadata_url(base_url)}"'


def is_loopback_host(host_header: str) -> bool:
    """`localhost[:port]`, `127.x.x.x[:port]` or `[::1][:port]`."""
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host
    else:
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
