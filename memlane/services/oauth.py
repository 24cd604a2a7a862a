"""OAuth 2.1 access tokens for the MCP endpoint, issued by the stack's Amazon Cognito user pool.

What a token must be to be accepted (anything else is refused as unauthenticated):

- signed (RS256) by a key the pool publishes in its JWKS;
- issued by the pool (`iss` is the pool's issuer URL) to one of its memlane app clients
  (`client_id`), as an access token (`token_use` = "access"), and not expired (`exp`, with a
  small leeway for clock skew);
- for memlane's MCP endpoint: `aud` is the endpoint's URL, `<public URL>/mcp`. Cognito puts the
  RFC 8707 resource indicator the client sent (`resource=<public URL>/mcp`, which MCP clients
  always send) into `aud` ("resource binding"). A token without that audience, such as one
  requested for another resource or without a resource indicator, is for someone else.

Which organization a token acts for: its user's Cognito group `org:<slug>` names the memlane
organization with that slug (the operator adds users to groups; one organization group per user).
No group, several, or a slug no organization has, and the token is refused.

Only the API key path exists locally; these settings come from the environment the stack sets on
the API and authorizer functions (MEMLANE_OAUTH_*), and without MEMLANE_OAUTH_ISSUER there is no
OAuth at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memlane.domain.errors import AuthenticationError, DependencyUnavailableError
from memlane.domain.oauth import ALGORITHMS, ORG_GROUP_PREFIX, OAuthSettings
from memlane.domain.principal import Principal
from memlane.ports import OrganizationStore

LEEWAY_SECONDS = 30


def looks_like_jwt(credential: str) -> bool:
    """Three base64url segments. memlane API keys (`mlk_…`) never contain a dot."""
    return credential.count(".") == 2 and not credential.startswith("mlk_")


KeyResolver = Callable[[str], Any]  # token → the public key that should have signed it


def jwks_key_resolver(jwks_url: str) -> KeyResolver:
    """The pool's signing keys, fetched once and kept (a new `kid` triggers one refetch)."""
    import jwt

    client = jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=6 * 3600, timeout=5)

    def key_for(token: str) -> Any:
        try:
            return client.get_signing_key_from_jwt(token).key
        except jwt.PyJWKClientConnectionError as exc:
            raise DependencyUnavailableError(f"cannot fetch the user pool's signing keys: {exc}") from exc

    return key_for


class TokenValidator:
    def __init__(self, settings: OAuthSettings, key_for: KeyResolver | None = None) -> None:
        self.settings = settings
        self._key_for = key_for or jwks_key_resolver(settings.jwks_url)

    def validate(self, token: str) -> dict[str, Any]:
        """The token's claims; AuthenticationError (with the reason, for the log) otherwise."""
        import jwt

        try:
            key = self._key_for(token)
            claims = jwt.decode(
                token, key, algorithms=ALGORITHMS, audience=self.settings.resource, issuer=self.settings.issuer,
                leeway=LEEWAY_SECONDS, options={"require": ["exp", "iat", "iss", "aud", "sub"]})
        except jwt.ExpiredSignatureError as exc:
            raise AuthenticationError("access token expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise AuthenticationError(f"access token is not for {self.settings.resource}") from exc
        except jwt.InvalidIssuerError as exc:
            raise AuthenticationError("access token is from another issuer") from exc
        except (jwt.PyJWTError, ValueError) as exc:  # bad signature, unknown key id, malformed
            raise AuthenticationError(f"invalid access token: {exc}") from exc
        if claims.get("token_use") != "access":
            raise AuthenticationError("not an access token")
        if claims.get("client_id") not in self.settings.client_ids:
            raise AuthenticationError("access token was issued to another app client")
        return claims


def organization_slug(claims: Mapping[str, Any]) -> str:
    groups = [g for g in claims.get("cognito:groups") or [] if isinstance(g, str) and g.startswith(ORG_GROUP_PREFIX)]
    if not groups:
        raise AuthenticationError(f"the user is in no organization group ({ORG_GROUP_PREFIX}<slug>)")
    if len(groups) > 1:
        raise AuthenticationError(f"the user is in {len(groups)} organization groups; exactly one is allowed")
    return groups[0][len(ORG_GROUP_PREFIX):]


def authenticate_token(store: OrganizationStore, validator: TokenValidator, token: str) -> Principal:
    """The authorizer logic for OAuth access tokens (API keys: memlane.services.keys.authenticate)."""
    claims = validator.validate(token)
    slug = organization_slug(claims)
    org = store.find_organization_by_slug(slug)
    if org is None:
        raise AuthenticationError(f"no organization with the slug {slug!r} (from the user's group)")
    subject = str(claims["sub"])
    return Principal(organization_id=org.id, key_id=f"oauth:{subject}",
                     user_id=str(claims.get("username") or subject),
                     rate_limit_per_minute=validator.settings.rate_limit_per_minute)
