"""A stand-in for the stack's Cognito user pool as far as memlane's token check sees it: an RSA
signing key whose JWKS is served on 127.0.0.1 at the pool's path, and access tokens shaped like
Cognito's (iss, sub, client_id, token_use, scope, cognito:groups, username, and `aud` = the
resource indicator, as Cognito's resource binding sets it)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

POOL_ID = "us-east-1_TestPool1"
CLIENT_ID = "5testclient0mcp0memlane000"
PUBLIC_URL = "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/dev"
RESOURCE = f"{PUBLIC_URL}/mcp"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class TokenIssuer:
    def __init__(self, kid: str = "test-key-1") -> None:
        self.key = new_key()
        self.kid = kid
        self.jwks_fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                found = self.path == f"/{POOL_ID}/.well-known/jwks.json"
                if found:
                    issuer.jwks_fetches += 1
                body = json.dumps(issuer.jwks()).encode() if found else b"{}"
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}/{POOL_ID}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    def environment(self, public_url: str = PUBLIC_URL, client_id: str = CLIENT_ID) -> dict[str, str]:
        """What the stack sets on the API and authorizer functions with OAuth on."""
        return {"MEMLANE_OAUTH_ISSUER": self.issuer, "MEMLANE_OAUTH_CLIENT_IDS": client_id,
                "MEMLANE_PUBLIC_URL": public_url, "MEMLANE_OAUTH_DOMAIN": "https://memlane-test.auth.example",
                "MEMLANE_OAUTH_RATE_LIMIT_PER_MINUTE": "100"}

    def token(self, *, audience: str | list[str] | None = RESOURCE, groups: Iterable[str] = ("org:default",),
              expires_in: int = 3600, issuer: str | None = None, client_id: str = CLIENT_ID,
              token_use: str = "access", key: rsa.RSAPrivateKey | None = None, kid: str | None = None,
              username: str = "ada", **claims: Any) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {
            "sub": "0b7f1c2e-8d3a-4f5b-9c6d-7e8f9a0b1c2d", "iss": issuer or self.issuer, "client_id": client_id,
            "token_use": token_use, "scope": f"openid {RESOURCE}/tools", "auth_time": now, "iat": now,
            "exp": now + expires_in, "jti": str(uuid.uuid4()), "username": username,
            "cognito:groups": list(groups), **claims}
        if audience is not None:
            payload["aud"] = audience
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
