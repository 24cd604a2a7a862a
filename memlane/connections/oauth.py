"""OAuth2 authorization code flow (RFC 6749) with PKCE (RFC 7636, S256) where the provider
supports it: the authorization URL, the code exchange and the refresh, over httpx.

Each provider describes its authorization server in an OAuthSpec; what differs between them (how
the client authenticates, where Slack nests the user's token, Google's offline access) is data
there, not code here.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlencode

import httpx

from memlane.connections.errors import OAuthError, ProviderRateLimited, ProviderUnavailable
from memlane.domain.connections import TokenSet
from memlane.ports import OAuthApp

# A token this close to its expiry is refreshed before it is used.
REFRESH_MARGIN = timedelta(minutes=5)


@dataclass(frozen=True)
class OAuthSpec:
    authorize_url: str
    token_url: str
    scopes: tuple[str, ...] = ()
    scope_param: str = "scope"  # Slack asks for user-token scopes as `user_scope`
    scope_separator: str = " "
    pkce: bool = True
    # How the client authenticates at the token endpoint: HTTP Basic (RFC 6749 §2.3.1, preferred)
    # or client_id/client_secret in the form body.
    client_auth: Literal["basic", "body"] = "basic"
    body_format: Literal["form", "json"] = "form"  # Notion takes JSON
    authorize_params: dict[str, str] = field(default_factory=dict)
    # Turns the token endpoint's JSON into the fields of a TokenSet (Slack nests a user token).
    parse: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, code_challenge): 43+ characters of high entropy, and its S256 digest."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    return secrets.token_urlsafe(32)


def authorization_url(spec: OAuthSpec, app: OAuthApp, redirect_uri: str, state: str,
                      code_challenge: str | None) -> str:
    params = {"client_id": app.client_id, "redirect_uri": redirect_uri, "response_type": "code", "state": state,
              **spec.authorize_params}
    if spec.scopes:
        params[spec.scope_param] = spec.scope_separator.join(spec.scopes)
    if code_challenge is not None:
        params.update(code_challenge=code_challenge, code_challenge_method="S256")
    base = app.authorize_url or spec.authorize_url
    return f"{base}{'&' if '?' in base else '?'}{urlencode(params)}"


def exchange_code(client: httpx.Client, spec: OAuthSpec, app: OAuthApp, code: str, redirect_uri: str,
                  verifier: str | None, now: datetime) -> TokenSet:
    body = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
    if verifier is not None:
        body["code_verifier"] = verifier
    return _token_request(client, spec, app, body, now, previous=None)


def refresh(client: httpx.Client, spec: OAuthSpec, app: OAuthApp, tokens: TokenSet, now: datetime) -> TokenSet:
    if not tokens.refresh_token:
        raise OAuthError("the access token expired and the provider gave no refresh token: connect again")
    body = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    return _token_request(client, spec, app, body, now, previous=tokens)


def needs_refresh(tokens: TokenSet, now: datetime) -> bool:
    return tokens.expires_at is not None and tokens.expires_at - REFRESH_MARGIN <= now


def _token_request(client: httpx.Client, spec: OAuthSpec, app: OAuthApp, body: dict[str, str], now: datetime,
                   previous: TokenSet | None) -> TokenSet:
    headers = {"Accept": "application/json"}
    if spec.client_auth == "basic":
        credentials = f"{app.client_id}:{app.client_secret}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(credentials).decode("ascii")
    else:
        body = {**body, "client_id": app.client_id, "client_secret": app.client_secret}
    url = app.token_url or spec.token_url
    try:
        if spec.body_format == "json":
            response = client.post(url, json=body, headers=headers)
        else:
            response = client.post(url, data=body, headers=headers)
    except httpx.TransportError as exc:
        raise ProviderUnavailable(f"token endpoint unreachable: {type(exc).__name__}") from exc
    if response.status_code == 429:
        raise ProviderRateLimited("token endpoint: 429", retry_after_seconds(response, now))
    if response.status_code >= 500:
        raise ProviderUnavailable(f"token endpoint: HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError as exc:
        raise OAuthError(f"token endpoint: HTTP {response.status_code}, not JSON") from exc
    if not isinstance(data, dict):
        raise OAuthError(f"token endpoint: HTTP {response.status_code}, unexpected answer")
    fields = spec.parse(data) if spec.parse else data
    if response.status_code >= 400 or fields.get("error") or not fields.get("access_token"):
        error = fields.get("error") or f"HTTP {response.status_code}"
        description = fields.get("error_description") or ""
        raise OAuthError(f"the provider refused the {body['grant_type'].replace('_', ' ')}: {error}"
                         + (f" ({description})" if description else ""))
    expires_at = _expiry(fields.get("expires_in"), now)
    known = {"access_token", "refresh_token", "expires_in", "token_type", "scope", "error", "error_description"}
    return TokenSet(
        access_token=str(fields["access_token"]),
        # Providers that do not rotate refresh tokens leave it out of a refresh answer: keep ours.
        refresh_token=fields.get("refresh_token") or (previous.refresh_token if previous else None),
        expires_at=expires_at,
        token_type=str(fields.get("token_type") or "bearer"),
        scope=fields.get("scope") if isinstance(fields.get("scope"), str) else None,
        extra={k: v for k, v in fields.items() if k not in known and _json_scalar(v)},
    )


def _expiry(expires_in: Any, now: datetime) -> datetime | None:
    try:
        seconds = int(float(expires_in))
    except (TypeError, ValueError):
        return None  # no expiry given: the token lives until it is revoked
    return now + timedelta(seconds=seconds)


def _json_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def retry_after_seconds(response: httpx.Response, now: datetime, default: float = 60.0) -> float:
    """Retry-After (seconds or an HTTP date), else the reset time X and GitHub send (epoch
    seconds), else `default`."""
    value = response.headers.get("retry-after")
    if value:
        value = value.strip()
        if value.replace(".", "", 1).isdigit():
            return max(float(value), 0.0)
        from email.utils import parsedate_to_datetime

        try:
            return max((parsedate_to_datetime(value) - now).total_seconds(), 0.0)
        except (TypeError, ValueError):
            pass
    for name in ("x-rate-limit-reset", "x-ratelimit-reset"):
        reset = response.headers.get(name)
        if reset and reset.strip().isdigit():
            return max(float(reset) - now.timestamp(), 1.0)
    return default
