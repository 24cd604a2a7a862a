"""Where the OAuth clients registered with each provider come from (docs/connections.md).

Locally: environment variables, read once where the server is composed —

    MEMLANE_GITHUB_CLIENT_ID / MEMLANE_GITHUB_CLIENT_SECRET
    MEMLANE_NOTION_CLIENT_ID / …_SECRET     MEMLANE_GOOGLE_CLIENT_ID / …_SECRET
    MEMLANE_SLACK_CLIENT_ID / …_SECRET      MEMLANE_X_CLIENT_ID / …_SECRET

and optionally `…_AUTH_URL`, `…_TOKEN_URL`, `…_API_URL` (GitHub Enterprise Server). On AWS: one
Secrets Manager secret (MEMLANE_CONNECTIONS_SECRET names it) holding
`{"github": {"client_id": "…", "client_secret": "…"}, "notion": {…}, …}`, read through Powertools
Parameters and cached for SECRET_MAX_AGE_S, so a rotated secret is picked up without a deploy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memlane.domain.connections import Provider
from memlane.ports.connections import OAuthApp

ENV_PREFIX = {Provider.GITHUB: "GITHUB", Provider.NOTION: "NOTION", Provider.GOOGLE_DRIVE: "GOOGLE",
              Provider.SLACK: "SLACK", Provider.X: "X"}
ENV_CONNECTIONS_SECRET = "MEMLANE_CONNECTIONS_SECRET"
SECRET_MAX_AGE_S = 300


def _app(values: Mapping[str, Any]) -> OAuthApp | None:
    client_id, client_secret = values.get("client_id"), values.get("client_secret")
    if not client_id or not client_secret:
        return None
    return OAuthApp(client_id=str(client_id), client_secret=str(client_secret),
                    authorize_url=values.get("authorize_url") or None, token_url=values.get("token_url") or None,
                    api_url=values.get("api_url") or None)


def apps_from_env(env: Mapping[str, str]) -> StaticApps:
    """The OAuth clients named in `env` (the local host passes its environment, once)."""
    apps: dict[str, OAuthApp] = {}
    for provider, prefix in ENV_PREFIX.items():
        key = f"MEMLANE_{prefix}_"
        app = _app({"client_id": env.get(f"{key}CLIENT_ID"), "client_secret": env.get(f"{key}CLIENT_SECRET"),
                    "authorize_url": env.get(f"{key}AUTH_URL"), "token_url": env.get(f"{key}TOKEN_URL"),
                    "api_url": env.get(f"{key}API_URL")})
        if app is not None:
            apps[provider.value] = app
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
