"""Which browser origins may call the server: a pure policy over origin strings (the Vidurai seed's
CORS policy), applied by the local gateway to every route, and by /mcp behind API Gateway.

The allow-list: `http://localhost:*`, `http://127.0.0.1:*`, `https://chat.openai.com`,
`https://chatgpt.com`. A request from any other origin is refused with 403 *before* it runs: with
`--no-auth` the server trusts loopback callers, and a web page the user happens to visit is on
loopback too (its fetches and form posts carry its own Origin), so merely withholding the CORS
headers would let it write memories blind. Requests without an Origin (curl, SDKs, editor
plugins) are not browser requests and pass. `--allow-all-origins` opens the list.

More exact origins are added with `--allow-origin` (repeatable) or `MEMLANE_ALLOWED_ORIGINS`
(comma-separated): memlane's browser extension (`chrome-extension://<id>`,
`moz-extension://<uuid>`), whose service worker sends its own origin on every POST, or a web app
served elsewhere. Only whole origins are accepted, never patterns: an extension id names one
installed extension, a pattern would admit every extension in the browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from memlane.domain.errors import InvalidInputError

TRUSTED_ORIGINS = frozenset({"https://chat.openai.com", "https://chatgpt.com"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1"})
ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
ALLOWED_HEADERS = "Authorization, Content-Type, x-api-key, Idempotency-Key"
PREFLIGHT_MAX_AGE = "600"
ALLOWED_ORIGINS_ENV = "MEMLANE_ALLOWED_ORIGINS"
# Chrome ids are 32 letters a–p; Firefox gives each installation a random UUID.
_EXTENSION_ORIGIN = re.compile(
    r"(chrome-extension://[a-p]{32}|moz-extension://[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)


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


def is_extension_origin(origin: str) -> bool:
    """A browser extension's whole origin (chrome-extension://<id>, moz-extension://<uuid>)."""
    return _EXTENSION_ORIGIN.fullmatch(origin) is not None


def _web_origin(value: str) -> str | None:
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query \
            or parts.fragment or parts.username or "*" in value:
        return None
    return f"{parts.scheme}://{parts.hostname}" + (f":{port}" if port is not None else "")


def parse_origins(values: Iterable[str], source: str = "--allow-origin") -> frozenset[str]:
    """Exact origins from the command line or the environment (commas or spaces between them).
    Raises InvalidInputError naming `source` for anything that is not one whole origin."""
    out: set[str] = set()
    for value in values:
        for item in re.split(r"[,\s]+", value.strip()):
            if not item:
                continue
            candidate = item.rstrip("/").lower()
            origin = candidate if is_extension_origin(candidate) else _web_origin(candidate)
            if origin is None:
                raise InvalidInputError(source, f"{item!r} is not an origin; use chrome-extension://<id>, "
                                                "moz-extension://<uuid> or http(s)://host[:port]")
            out.add(origin)
    return frozenset(out)


@dataclass(frozen=True)
class OriginPolicy:
    allow_all: bool = False
    # --allow-origin / MEMLANE_ALLOWED_ORIGINS: exact origins beyond the seed's list
    extra: frozenset[str] = field(default_factory=frozenset)

    def allows(self, origin: str) -> bool:
        if self.allow_all:
            return True
        return origin in TRUSTED_ORIGINS or origin in self.extra or is_loopback_origin(origin)

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
