"""Where the OAuth clients registered with each provider come from (docs/connections.md).

Locally: environment variables, MEMLANE_<PROVIDER>_CLIENT_ID and _CLIENT_SECRET, and optionally
_AUTH_URL, _TOKEN_URL and _API_URL (GitHub Enterprise Server), which the host reads once when it
starts (memlane.config.apps) and hands to its composition (`static_apps`). On AWS: one
Secrets Manager secret (MEMLANE_CONNECTIONS_SECRET names it) holding
`{"github": {"client_id": "…", "client_secret": "…"}, "notion": {…}, …}`, read through Powertools
Parameters and cached for SECRET_MAX_AGE_S, so a rotated secret is picked up without a deploy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memlane.config.apps import ConnectionApps
from memlane.ports.connections import OAuthApp

SECRET_MAX_AGE_S = 300


def _app(values: Mapping[str, Any]) -> OAuthApp | None:
    client_id, client_secret = values.get("client_id"), values.get("client_secret")
    if not client_id or not client_secret:
        return None
    return OAuthApp(client_id=str(client_id), client_secret=str(client_secret),
                    authorize_url=values.get("authorize_url") or None, token_url=values.get("token_url") or None,
                    api_url=values.get("api_url") or None)


def static_apps(configured: ConnectionApps) -> StaticApps:
    """The OAuth clients of the providers whose id and secret the host was given."""
    apps: dict[str, OAuthApp] = {}
    for provider, given in configured.by_provider().items():
        app = _app({**given.model_dump(), "authorize_url": given.auth_url})
        if app is not None:
            apps[provider] = app
    return StaticApps(apps)


class SecretApps:
    """The OAuth clients in one Secrets Manager secret (AWS)."""

    def __init__(self, secret_name: str) -> None:
        self.secret_name = secret_name

    def app(self, provider: str) -> OAuthApp | None:
        if not self.secret_name:
            return None
        from aws_lambda_powertools.utilities.parameters import get_secret

        try:
            data = json.loads(str(get_secret(self.secret_name, max_age=SECRET_MAX_AGE_S)))
        except ValueError:
            return None
        values = data.get(provider) if isinstance(data, dict) else None
        return _app(values) if isinstance(values, dict) else None


@dataclass
class StaticApps:
    apps: dict[str, OAuthApp] = field(default_factory=dict)

    def app(self, provider: str) -> OAuthApp | None:
        return self.apps.get(provider)
