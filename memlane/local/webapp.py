"""The web app on the local server: its built files (web/dist) next to the API, with the
security headers of memlane.webapp_policy, and the one-time sign-in link `make run` prints.

What this serves, and nothing else (never an API route):
- GET/HEAD of the app's client routes (`/`, `/login`, `/projects/<id>`, `/memories/<id>`, …):
  index.html, so a link or a reload anywhere in the app works (the SPA fallback);
- GET/HEAD of a file that exists in the build (`/assets/index-3f2a.js`, `/favicon.svg`);
- POST /webapp/sign-in: redeems a sign-in code (below);
- a browser's page load (GET/HEAD accepting text/html) of any other path outside the API's own
  path segments: index.html with status 404, so the app shows its "Page not found" view instead
  of the API's JSON (an API client, which does not ask for HTML, still gets the API's 404 JSON).

Sign-in link. The long-lived API key must not end up in browser history or a server log, so the
link carries a random one-time code in its fragment (`/login#code=…`): browsers never send a
fragment to the server, the app removes it from the address bar at once, and exchanges it (POST
body, never a URL) for the key. A code works once and for SIGN_IN_CODE_TTL_S; a copy of the link
left in history afterwards opens nothing.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from memlane.api.errors import error_body
from memlane.domain.errors import InvalidInputError
from memlane.domain.json_input import JsonBoundsError, parse_json
from memlane.local.responses import GatewayResponse
from memlane.services.ratelimit import InMemoryRateLimiter
from memlane.webapp_policy import APP_ROUTE_PATTERNS, SECURITY_HEADERS

SIGN_IN_PATH = "/webapp/sign-in"
SIGN_IN_CODE_TTL_S = 15 * 60
# Sign-in attempts per minute, from anyone: a person pastes a link a few times at most. A code is
# 192-bit and single-use, so guessing is hopeless anyway; this keeps the endpoint from being a
# free oracle (300 tries in 0.2 s before).
SIGN_IN_ATTEMPTS_PER_MINUTE = 10
_APP_ROUTES = re.compile("|".join(f"(?:{p})" for p in APP_ROUTE_PATTERNS))
_HASHED_ASSET = re.compile(r"^/assets/.+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$")


def default_build_dir() -> Path:
    """web/dist of this checkout (`make run` builds it); MEMLANE_WEB_DIR (LocalSettings.web_dir) names another."""
    return Path(__file__).resolve().parents[2] / "web" / "dist"


class SignInCodes:
    """One-time codes standing for the local key, kept in memory (hashed) for a short while."""

    def __init__(self, ttl_s: int = SIGN_IN_CODE_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._codes: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def issue(self, secret: str) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            now = self._clock()
            self._codes = {h: v for h, v in self._codes.items() if v[1] > now}
            self._codes[_digest(code)] = (secret, now + self.ttl_s)
        return code

    def redeem(self, code: str) -> str | None:
        with self._lock:
            entry = self._codes.pop(_digest(code), None)
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


class WebApp:
    def __init__(self, build_dir: Path, sign_in: SignInCodes | None = None) -> None:
        self.root = build_dir.resolve()
        self.sign_in = sign_in or SignInCodes()
        self._attempts = InMemoryRateLimiter()

    @property
    def built(self) -> bool:
        return (self.root / "index.html").is_file()

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> GatewayResponse | None:
        """A response for the app's own paths; None hands the request on to the API."""
        method = method.upper()
        if path == SIGN_IN_PATH and method == "POST":
            return self._redeem(headers, body)
        if method not in ("GET", "HEAD") or not self.built:
            return None
        if _APP_ROUTES.fullmatch(path):
            return self._file(self.root / "index.html", method, cache="no-cache")
        file = self._build_file(path)
        if file is None:
            return None
        cache = "public, max-age=31536000, immutable" if _HASHED_ASSET.match(path) else "no-cache"
        return self._file(file, method, cache=cache)

    def page_not_found(
        self, method: str, path: str, headers: Mapping[str, str], api_segments: frozenset[str],
    ) -> GatewayResponse | None:
        """The app, with status 404, for a browser opening a path that is neither the app's nor the
        API's (`api_segments`: the first path segments the API's routes use); None otherwise."""
        method = method.upper()
        if method not in ("GET", "HEAD") or not self.built:
            return None
        accept = next((v for k, v in headers.items() if k.lower() == "accept"), "")
        if "text/html" not in accept.lower():
            return None
        if path.split("/")[1] in api_segments if path.startswith("/") else True:
            return None
        page = self._file(self.root / "index.html", method, cache="no-cache")
        return GatewayResponse(404, page.headers, page.body)

    def _build_file(self, path: str) -> Path | None:
        if not path.startswith("/") or "\\" in path or "\x00" in path:
            return None
        try:
            candidate = (self.root / path.lstrip("/")).resolve()
            if candidate == self.root or not candidate.is_relative_to(self.root) or not candidate.is_file():
                return None
        except OSError:  # a name too long for the file system (an id of 5,000 digits) is no file of the app
            return None
        return candidate

    def _file(self, file: Path, method: str, *, cache: str) -> GatewayResponse:
        stat = file.stat()
        data = file.read_bytes()
        content_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type in ("application/javascript", "image/svg+xml"):
            content_type += "; charset=utf-8"
        out = {"Content-Type": content_type, "Cache-Control": cache, **SECURITY_HEADERS}
        if method == "HEAD":
            out["Content-Length"] = str(len(data))
            data = b""
        return GatewayResponse(200, out, data, cache_key=f"{file}:{stat.st_mtime_ns}:{stat.st_size}:{method}")

    def _redeem(self, headers: Mapping[str, str], body: bytes) -> GatewayResponse:
        no_store = {"Content-Type": "application/json", "Cache-Control": "no-store", **SECURITY_HEADERS}
        lowered = {k.lower(): v for k, v in headers.items()}
        origin, host = lowered.get("origin"), lowered.get("host", "")
        if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
            # Only the app itself may redeem a code: not another page on this machine. Refused
            # before any attempt is counted, so another site's requests cannot spend the app's.
            return GatewayResponse(403, no_store, error_body(f"origin not allowed: {origin}").encode())
        # Counted per origin: a page that passes the check under another name (a DNS-rebound
        # host) spends its own attempts, not those of the app the user opened.
        attempt = self._attempts.hit(f"webapp-sign-in:{origin or '-'}", SIGN_IN_ATTEMPTS_PER_MINUTE,
                                     datetime.now(UTC))
        if not attempt.allowed:
            return GatewayResponse(429, {**no_store, "Retry-After": str(attempt.retry_after_s), **attempt.headers()},
                                   error_body(f"too many sign-in attempts; retry after {attempt.retry_after_s} s")
                                   .encode())
        try:
            parsed = parse_json(body or b"{}")
        except JsonBoundsError as exc:
            return GatewayResponse(400, no_store, error_body(exc.message).encode())
        except InvalidInputError:
            parsed = None
        code = parsed.get("code") if isinstance(parsed, dict) else None
        if not isinstance(code, str) or not code or len(code) > 200:
            return GatewayResponse(400, no_store, error_body("code: is required (the code in the sign-in link)").encode())
        secret = self.sign_in.redeem(code)
        if secret is None:
            # Said to a person on the sign-in page: what happened and what to do, no field name.
            return GatewayResponse(401, no_store, error_body(
                "This sign-in link was already used or has expired. Restart `make run` for a new one, or "
                "paste the API key it printed.").encode())
        return GatewayResponse(200, no_store, json.dumps({"key": secret}).encode())
