"""One connection's authenticated HTTP session with its provider: the bearer token refreshed
before it expires (and once more when the provider answers 401), and the provider's answers
turned into the typed errors the sync decides on (429 → ProviderRateLimited with its Retry-After,
5xx → ProviderUnavailable, a refused token → ProviderAuthError, any other 4xx →
ProviderItemError)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import httpx

from memlane.connections import oauth
from memlane.connections.errors import (
    OAuthError,
    ProviderAuthError,
    ProviderItemError,
    ProviderRateLimited,
    ProviderUnavailable,
)
from memlane.domain.connections import TokenSet
from memlane.ports import Clock, OAuthApp

log = logging.getLogger(__name__)

USER_AGENT = "memlane-connections"
MAX_RESPONSE_BYTES = 25 * 1024 * 1024  # a Drive export tops out at 10 MB; nothing memlane syncs is bigger

# A provider-specific reading of a response: an error to raise, or None for the default handling.
Classifier = Callable[[httpx.Response, datetime], Exception | None]
AuthFailure = Callable[[httpx.Response], bool]


class ProviderSession:
    def __init__(
        self,
        *,
        provider: str,
        client: httpx.Client,
        clock: Clock,
        base_url: str,
        tokens: TokenSet | None = None,
        spec: oauth.OAuthSpec | None = None,
        app: OAuthApp | None = None,
        on_tokens: Callable[[TokenSet], None] | None = None,
        headers: Mapping[str, str] | None = None,
        classify: Classifier | None = None,
        auth_failed: AuthFailure | None = None,
    ) -> None:
        self.provider = provider
        self.client = client
        self.clock = clock
        self.base_url = base_url.rstrip("/")
        self.tokens = tokens
        self.spec = spec
        self.app = app
        self.on_tokens = on_tokens
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self.classify = classify
        self.auth_failed = auth_failed or (lambda r: r.status_code == 401)
        self.requests = 0

    # ------------------------------------------------------------------ tokens

    def refresh(self) -> None:
        if self.tokens is None or self.spec is None or self.app is None:
            raise ProviderAuthError(f"{self.provider}: no token to refresh: connect again")
        try:
            self.tokens = oauth.refresh(self.client, self.spec, self.app, self.tokens, self.clock.now())
        except OAuthError as exc:
            raise ProviderAuthError(f"{self.provider}: {exc.message}; connect again") from exc
        if self.on_tokens is not None:
            self.on_tokens(self.tokens)

    def _fresh_token(self) -> str | None:
        if self.tokens is None:
            return None
        if oauth.needs_refresh(self.tokens, self.clock.now()):
            self.refresh()
        return self.tokens.access_token

    # ------------------------------------------------------------------ requests

    def url(self, path: str) -> str:
        if not path.startswith(("http://", "https://")):
            return f"{self.base_url}/{path.lstrip('/')}"
        # A `next` link from the provider: followed only on the provider's own host, so the token
        # is never sent anywhere else whatever an answer says.
        if httpx.URL(path).netloc != httpx.URL(self.base_url).netloc:
            raise ProviderItemError(f"{self.provider}: refusing to follow a link off {httpx.URL(self.base_url).host}")
        return path

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                json: Any = None, headers: Mapping[str, str] | None = None) -> httpx.Response:
        refreshed = False
        # httpx replaces a URL's query with `params` even when it is empty: a `next` link keeps its own.
        params = params or None
        while True:
            response = self._send(method, path, params=params, json=json, headers=headers)
            if self.auth_failed(response) and not refreshed and self.tokens is not None \
                    and self.tokens.refresh_token and self.spec is not None:
                # Expired or revoked early: one refresh, then the same request again.
                self.refresh()
                refreshed = True
                continue
            return self._check(response, method, path)

    def get_json(self, path: str, **kwargs: Any) -> Any:
        return _json(self.request("GET", path, **kwargs), path)

    def post_json(self, path: str, body: Any, **kwargs: Any) -> Any:
        return _json(self.request("POST", path, json=body, **kwargs), path)

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers, **(kwargs.pop("headers") or {})}
        token = self._fresh_token()
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        self.requests += 1
        try:
            response = self.client.request(method, self.url(path), headers=headers, **kwargs)
        except httpx.TransportError as exc:
            raise ProviderUnavailable(f"{self.provider}: {type(exc).__name__} on {method} {path}") from exc
        if len(response.content) > MAX_RESPONSE_BYTES:
            raise ProviderItemError(f"{self.provider}: answer to {path} exceeds {MAX_RESPONSE_BYTES} bytes")
        return response

    def _check(self, response: httpx.Response, method: str, path: str) -> httpx.Response:
        if self.classify is not None:
            error = self.classify(response, self.clock.now())
            if error is not None:
                raise error
        status = response.status_code
        where = f"{self.provider} {method} {path}"
        if status == 429:
            raise ProviderRateLimited(f"{where}: 429 rate limited",
                                      oauth.retry_after_seconds(response, self.clock.now()))
        if status >= 500:
            raise ProviderUnavailable(f"{where}: HTTP {status}")
        if self.auth_failed(response):
            raise ProviderAuthError(f"{where}: the provider refused the token (HTTP {status}); connect again")
        if status >= 400:
            raise ProviderItemError(f"{where}: HTTP {status}", status)
        return response


def _json(response: httpx.Response, path: str) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise ProviderItemError(f"{path}: the answer is not JSON") from exc
