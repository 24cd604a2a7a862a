"""The OAuth settings of a stack whose /mcp accepts access tokens from its Amazon Cognito user pool
(memlane.services.oauth checks the tokens): a record built once from the environment the stack
sets on the API and authorizer functions (MEMLANE_OAUTH_*, MEMLANE_PUBLIC_URL: memlane.config.oauth
declares and reads them). Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE

ENV_ISSUER = "MEMLANE_OAUTH_ISSUER"
ENV_CLIENT_IDS = "MEMLANE_OAUTH_CLIENT_IDS"
ENV_AUTH_DOMAIN = "MEMLANE_OAUTH_DOMAIN"
ENV_RATE_LIMIT = "MEMLANE_OAUTH_RATE_LIMIT_PER_MINUTE"
ENV_PUBLIC_URL = "MEMLANE_PUBLIC_URL"
ORG_GROUP_PREFIX = "org:"  # a user's Cognito group `org:<slug>` names their organization
SCOPE_NAME = "tools"  # the resource server's one scope: `<resource>/tools`
ALGORITHMS = ["RS256"]  # what Cognito signs with


@dataclass(frozen=True)
class OAuthSettings:
    issuer: str  # https://cognito-idp.<region>.amazonaws.com/<user pool id>
    public_url: str  # the API's base URL, e.g. https://<id>.execute-api.<region>.amazonaws.com/dev
    client_ids: frozenset[str]
    auth_domain: str  # the pool's managed login, https://<prefix>.auth.<region>.amazoncognito.com
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE

    @property
    def resource(self) -> str:
        """The MCP endpoint: the resource indicator clients send, and the audience of their tokens."""
        return f"{self.public_url}/mcp"

    @property
    def scope(self) -> str:
        return f"{self.resource}/{SCOPE_NAME}"

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/.well-known/jwks.json"

    def authorization_server_metadata(self) -> dict[str, Any]:
        """RFC 8414 metadata for the pool, published by memlane at its own base URL.

        Cognito's own discovery document (`<issuer>/.well-known/openid-configuration`) does not
        list `code_challenge_methods_supported`, and MCP clients refuse an authorization server
        that does not advertise S256 PKCE, although Cognito supports it. So memlane names itself
        (its base URL) as the authorization server in its protected resource metadata and serves
        this document, whose endpoints are the pool's managed login. The tokens stay Cognito's:
        their `iss` is the pool's, and that is what the authorizer checks."""
        return {
            "issuer": self.public_url,
            "authorization_endpoint": f"{self.auth_domain}/oauth2/authorize",
            "token_endpoint": f"{self.auth_domain}/oauth2/token",
            "revocation_endpoint": f"{self.auth_domain}/oauth2/revoke",
            "userinfo_endpoint": f"{self.auth_domain}/oauth2/userInfo",
            "jwks_uri": self.jwks_url,
            "scopes_supported": ["openid", "email", self.scope],
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ALGORITHMS,
        }
