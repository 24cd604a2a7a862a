"""Which browser origins may call the server (the Vidurai seed's CORS policy, applied by the local
gateway to every route).

The allow-list: `http://localhost:*`, `http://127.0.0.1:*`, `https://chat.openai.com`,
`https://chatgpt.com`. A request from any other origin is refused with 403 *before* it runs: with
`--no-auth` the server trusts loopback callers, and a web page the user happens to visit is on
loopback too (its fetches and form posts carry its own Origin), so merely withholding the CORS
headers would let it write memories blind. Requests without an Origin (curl, SDKs, editor
plugins) are not browser requests and pass. `--allow-all-origins` opens the list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

TRUSTED_ORIGINS = frozenset({"https://chat.openai.com", "https://chatgpt.com"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1"})
ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
ALLOWED_HEADERS = "Authorization, Content-Type, x-api-key, Idempotency-Key"
PREFLIGHT_MAX_AGE = "600"


def header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def is_loopback_origin(origin: str) -> bool:
    """`http://localhost:*` and `http://127.0.0.1:*` (any port, or none)."""
    try:
        parts = urlsplit(origin)
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return False
    return (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS
            and not parts.path and not parts.query and not parts.username)


@dataclass(frozen=True)
class OriginPolicy:
    allow_all: bool = False

    def allows(self, origin: str) -> bool:
        if self.allow_all:
            return True
        return origin in TRUSTED_ORIGINS or is_loopback_origin(origin)

    def response_headers(self, origin: str) -> dict[str, str]:
        """Added to every answer to an allowed browser request."""
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}

    def preflight_headers(self, origin: str | None, requested_headers: str | None) -> dict[str, str]:
        out = {"Access-Control-Allow-Methods": ALLOWED_METHODS,
               "Access-Control-Allow-Headers": requested_headers or ALLOWED_HEADERS,
               "Access-Control-Max-Age": PREFLIGHT_MAX_AGE}
        if origin is not None:
            out.update(self.response_headers(origin))
        return out
