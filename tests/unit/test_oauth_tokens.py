"""OAuth access tokens for /mcp (memlane.services.oauth): which are accepted, which are refused and
why, and the organization a token acts for. Tokens are minted in the test with its own RSA key,
whose JWKS is served on loopback (tests/oauth_fakes.py), so the key fetch is the real one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp.shared.auth import OAuthMetadata
from oauth_fakes import CLIENT_ID, PUBLIC_URL, RESOURCE, TokenIssuer, new_key

from memlane.config.oauth import OAuthVariables
from memlane.domain.errors import AuthenticationError
from memlane.domain.models import Organization
from memlane.services.oauth import TokenValidator, authenticate_token, looks_like_jwt

DEFAULT_ORG = Organization(id="6d1f2b8e-3c4a-4e5f-9a7b-1c2d3e4f5a6b", name="default", slug="default")


class Orgs:
    """The one store method the token path reads."""

    def find_organization_by_slug(self, slug: str) -> Organization | None:
        return DEFAULT_ORG if slug == "default" else None


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    i = TokenIssuer()
    yield i
    i.close()


@pytest.fixture(scope="module")
def validator(issuer: TokenIssuer) -> TokenValidator:
    settings = OAuthVariables.from_env(issuer.environment()).settings()
    assert settings is not None
    return TokenValidator(settings)


def refusal(validator: TokenValidator, token: str) -> str:
    with pytest.raises(AuthenticationError) as caught:
        authenticate_token(Orgs(), validator, token)  # type: ignore[arg-type]
    return caught.value.message


def test_a_token_for_this_resource_acts_for_the_organization_of_its_group(issuer, validator) -> None:
    # Given an access token issued by the pool to memlane's client for <public URL>/mcp
    token = issuer.token(audience=RESOURCE, groups=["org:default", "admins"])
    # When it is authenticated
    who = authenticate_token(Orgs(), validator, token)  # type: ignore[arg-type]
    # Then it acts for the organization its group names, as its user, metered per user
    assert who.organization_id == DEFAULT_ORG.id
    assert who.key_id == "oauth:0b7f1c2e-8d3a-4f5b-9c6d-7e8f9a0b1c2d" and who.user_id == "ada"
    assert who.rate_limit_per_minute == 100
    # an audience list naming this resource among others is fine too
    assert authenticate_token(Orgs(), validator, issuer.token(audience=["urn:other", RESOURCE])).user_id == "ada"


def test_the_pool_keys_are_fetched_once_and_kept(issuer, validator) -> None:
    before = issuer.jwks_fetches
    for _ in range(5):
        validator.validate(issuer.token())
    assert issuer.jwks_fetches - before <= 1


@pytest.mark.parametrize(("claims", "reason"), [
    ({"expires_in": -120}, "access token expired"),
    ({"audience": "https://other.example/mcp"}, f"access token is not for {RESOURCE}"),
    ({"audience": [f"{PUBLIC_URL}/v3", "https://other.example/mcp"]}, f"access token is not for {RESOURCE}"),
    ({"audience": PUBLIC_URL}, f"access token is not for {RESOURCE}"),
    ({"audience": None}, 'invalid access token: Token is missing the "aud" claim'),
    ({"issuer": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other"}, "access token is from another issuer"),
    ({"token_use": "id"}, "not an access token"),
    ({"client_id": "someone-elses-client"}, "access token was issued to another app client"),
    ({"groups": []}, "the user is in no organization group (org:<slug>)"),
    ({"groups": ["org:default", "org:acme"]}, "the user is in 2 organization groups; exactly one is allowed"),
    ({"groups": ["org:acme"]}, "no organization with the slug 'acme' (from the user's group)"),
])
def test_tokens_that_are_not_for_memlane_are_refused(issuer, validator, claims, reason) -> None:
    assert refusal(validator, issuer.token(**claims)) == reason


def test_a_token_signed_by_another_key_is_refused(issuer, validator) -> None:
    # the same key id, but not the pool's key
    forged = issuer.token(key=new_key())
    assert refusal(validator, forged) == "invalid access token: Signature verification failed"
    unknown = issuer.token(kid="not-a-pool-key")
    assert refusal(validator, unknown).startswith("invalid access token: Unable to find a signing key")


def test_unsigned_and_symmetric_tokens_are_refused(issuer, validator) -> None:
    import jwt

    claims = jwt.decode(issuer.token(), options={"verify_signature": False})
    unsigned = jwt.encode(claims, None, algorithm="none", headers={"kid": issuer.kid})
    assert refusal(validator, unsigned).startswith("invalid access token: ")
    # HS256 "signed" with something public must not pass as the pool's RS256 signature
    hmac = jwt.encode(claims, "x" * 32, algorithm="HS256", headers={"kid": issuer.kid})
    assert refusal(validator, hmac).startswith("invalid access token: ")
    assert refusal(validator, "not.a.token") .startswith("invalid access token: ")


def test_only_jwt_shaped_credentials_take_the_token_path() -> None:
    assert looks_like_jwt("eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl")
    assert not looks_like_jwt("mlk_abc.def.ghi") and not looks_like_jwt("mlk_AbCdEf123")


def test_settings_come_from_the_stack_environment_or_there_is_no_oauth(issuer) -> None:
    assert OAuthVariables.from_env({}).settings() is None
    settings = OAuthVariables.from_env(issuer.environment()).settings()
    assert settings.resource == RESOURCE and settings.scope == f"{RESOURCE}/tools"
    assert settings.client_ids == frozenset({CLIENT_ID})
    with pytest.raises(ValueError, match="MEMLANE_PUBLIC_URL and MEMLANE_OAUTH_CLIENT_IDS must be too"):
        OAuthVariables.from_env({"MEMLANE_OAUTH_ISSUER": issuer.issuer}).settings()


def test_the_published_authorization_server_metadata_advertises_pkce_s256(issuer) -> None:
    settings = OAuthVariables.from_env(issuer.environment()).settings()
    meta = OAuthMetadata.model_validate(settings.authorization_server_metadata())
    assert str(meta.issuer).rstrip("/") == PUBLIC_URL
    assert meta.code_challenge_methods_supported == ["S256"]
    assert str(meta.authorization_endpoint) == "https://memlane-test.auth.example/oauth2/authorize"
    assert str(meta.token_endpoint) == "https://memlane-test.auth.example/oauth2/token"
    assert meta.token_endpoint_auth_methods_supported == ["none"]
    assert f"{RESOURCE}/tools" in meta.scopes_supported
