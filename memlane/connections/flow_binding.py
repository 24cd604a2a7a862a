"""An OAuth flow belongs to the principal that started it.

Before, the callback trusted `state` alone: whoever opened an organization's authorization URL and
consented linked *their* provider account into that organization, and a member of one
organization tricked into consenting to another's URL synced their data into it.

Now:
1. `state` is sealed by the deployment's token vault (AES-GCM here, KMS on AWS): it carries the
   organization, the key that started the flow, the connection and an expiry, and cannot be
   forged or altered (`sign_state` / `open_state`);
2. the callback (the provider's redirect, no key) verifies it, keeps the code sealed for a few
   minutes under a fresh one-time confirmation token, and sends the browser to the web app's
   confirmation page (`confirm_url`);
3. there a signed-in member of *that* organization confirms (POST /v3/connections/confirm with
   their key): only then is the code exchanged and the connection activated. A member of another
   organization, or nobody, cannot; and the flow dies with the key that started it.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from memlane.domain.errors import InvalidInputError
from memlane.ports.connections import TokenVault

CONFIRM_TTL = timedelta(minutes=15)
CONFIRM_PATH = "/connections/confirm"
_STATE_CONTEXT = {"purpose": "oauth-state"}
_CODE_CONTEXT = {"purpose": "oauth-code"}


@dataclass(frozen=True)
class FlowClaims:
    organization_id: str
    key_id: str
    connection_id: str
    expires_at: datetime


def sign_state(vault: TokenVault, claims: FlowClaims) -> str:
    payload = {"o": claims.organization_id, "k": claims.key_id, "c": claims.connection_id,
               "e": int(claims.expires_at.timestamp()), "n": secrets.token_urlsafe(16)}
    return vault.seal(_STATE_CONTEXT, json.dumps(payload, separators=(",", ":")).encode())


def open_state(vault: TokenVault, state: str, now: datetime) -> FlowClaims:
    """The claims a state carries; InvalidInputError when it is forged, altered or expired."""
    try:
        payload = json.loads(vault.open(_STATE_CONTEXT, state))
        claims = FlowClaims(organization_id=str(payload["o"]), key_id=str(payload["k"]),
                            connection_id=str(payload["c"]),
                            expires_at=datetime.fromtimestamp(int(payload["e"]), UTC))
    except Exception:  # noqa: BLE001 - any failure to open is the same answer: not ours
        raise InvalidInputError("state", "is not one this server issued: start the connection again") from None
    if claims.expires_at <= now:
        raise InvalidInputError("state", "has expired: start the connection again")
    return claims


def seal_code(vault: TokenVault, code: str, verifier: str | None, key_id: str) -> str:
    return vault.seal(_CODE_CONTEXT, json.dumps({"code": code, "verifier": verifier, "key": key_id}).encode())


def open_code(vault: TokenVault, sealed: str) -> tuple[str, str | None, str]:
    data = json.loads(vault.open(_CODE_CONTEXT, sealed))
    return str(data["code"]), data.get("verifier"), str(data["key"])


def new_confirmation() -> str:
    return secrets.token_urlsafe(32)


def confirm_url(public_url: str, token: str) -> str:
    """The web app's confirmation page; the token in the query so it survives a sign-in redirect
    (it is useless without a key of the flow's organization)."""
    return f"{public_url.rstrip('/')}{CONFIRM_PATH}?{urlencode({'flow': token})}"
