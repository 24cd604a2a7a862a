"""The OAuth part of the configuration: the Amazon Cognito user pool whose access tokens a stack's
/mcp accepts (MEMLANE_OAUTH_*, set by the stack with `oauth=true`), and the public URL those tokens
are bound to. Read by `Settings.from_env` (every host) and by the authorizer function alone; the
record it gives, memlane.domain.oauth.OAuthSettings, is what memlane.services.oauth checks tokens
against."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from memlane.config.variables import Section, SettingsPart, variable
from memlane.domain.errors import ConfigurationError
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE
from memlane.domain.oauth import (
    ENV_AUTH_DOMAIN,
    ENV_CLIENT_IDS,
    ENV_ISSUER,
    ENV_PUBLIC_URL,
    ENV_RATE_LIMIT,
    OAuthSettings,
)


def _url(value: Any) -> Any:
    return value.strip().rstrip("/") if isinstance(value, str) else value


class PublicAddress(SettingsPart):
    """MEMLANE_PUBLIC_URL, which Settings and the OAuth part share."""

    public_url: str = variable(
        ENV_PUBLIC_URL, "", section=Section.SERVER, shown="`http://<host>:<port>`", takes="a URL, no trailing slash",
        doc="where the server is reachable from outside: connection providers' OAuth callbacks and webhooks; "
            "on AWS the stack sets it (else it is derived from the request's gateway domain or Host), and "
            "OAuth tokens for `/mcp` are bound to it")

    _public_url = field_validator("public_url", mode="before")(_url)


class OAuthVariables(PublicAddress):
    issuer: str = variable(
        ENV_ISSUER, "", section=Section.STACK, takes="a URL",
        doc="with `oauth=true`: the Cognito user pool whose access tokens `/mcp` accepts "
            "(`https://cognito-idp.<region>.amazonaws.com/<pool id>`); unset: API keys only")
    client_ids: str = variable(
        ENV_CLIENT_IDS, "", section=Section.STACK, takes="app client ids, separated by commas",
        doc="the pool's app clients whose tokens are accepted")
    auth_domain: str = variable(
        ENV_AUTH_DOMAIN, "", section=Section.STACK, takes="a URL",
        doc="the pool's managed sign-in domain (`https://<prefix>.auth.<region>.amazoncognito.com`)")
    rate_limit_per_minute: int = variable(
        ENV_RATE_LIMIT, DEFAULT_RATE_LIMIT_PER_MINUTE, ge=1, unit="requests", section=Section.STACK,
        doc="requests a signed-in user may make per minute")

    _urls = field_validator("issuer", "auth_domain", mode="before")(_url)

    def settings(self) -> OAuthSettings | None:
        """The record memlane checks tokens against, or None without an issuer. A half-configured
        deployment must not accept tokens it cannot bind to this API: a ConfigurationError."""
        if not self.issuer:
            return None
        clients = frozenset(c.strip() for c in self.client_ids.split(",") if c.strip())
        if not self.public_url or not clients:
            raise ConfigurationError(
                ENV_ISSUER, f"{ENV_ISSUER} is set, so {ENV_PUBLIC_URL} and {ENV_CLIENT_IDS} must be too")
        return OAuthSettings(issuer=self.issuer, public_url=self.public_url, client_ids=clients,
                             auth_domain=self.auth_domain, rate_limit_per_minute=self.rate_limit_per_minute)
