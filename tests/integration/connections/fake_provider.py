"""A provider's OAuth server and REST API on 127.0.0.1, for the connection tests.

The base handles what every provider shares, as RFC 6749/7636 and the providers' documentation
describe it: an authorization endpoint that approves at once and sends the user agent back to the
redirect URI with `code` and `state`; a token endpoint that exchanges a code (checking the client,
the redirect URI and the PKCE verifier) and refreshes (rotating the refresh token: the old one
stops working); bearer tokens that expire or can be revoked early. Each provider's fake adds its
API routes (`route`), written from that provider's API reference, and tests inject failures:
`fail(path_prefix, status, headers, times, after=n)` answers `times` matching requests (after
letting `n` through) with that status (a 429 with Retry-After, a 503).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "memlane-test-client"
CLIENT_SECRET = "memlane-test-secret"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    match: re.Match | None = None

    def arg(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, [default])[0]

    def json(self) -> Any:
        return json.loads(self.body or b"{}")

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})


@dataclass
class Fault:
    prefix: str
    status: int
    headers: dict[str, str]
    times: int
    body: Any = None
    after: int = 0  # matching requests let through first


Handler = Callable[[Request], Reply]


class FakeProvider:
    token_ttl_s: int | None = 3600  # None: tokens that never expire (Notion, GitHub OAuth apps)
    rotate_refresh_tokens = True
    token_body_format = "form"  # "json" for Notion
    client_auth = "any"  # "basic", "body" or "any"

    def __init__(self) -> None:
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, float | None] = {}  # token → expiry (epoch), None: never
        self.refresh_tokens: set[str] = set()
        self.faults: list[Fault] = []
        self.log: list[tuple[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(self.command, parts.path, parse_qs(parts.query, keep_blank_values=True),
                                  dict(self.headers.items()), self.rfile.read(length) if length else b"")
                try:
                    reply = fake.dispatch(request)
                except Exception as exc:  # a bug in a fake must fail the test, not hang it
                    import traceback

                    traceback.print_exc()
                    fake.errors.append(repr(exc))
                    reply = json_reply({"error": f"fake crashed: {exc!r}"}, 500)
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve  # noqa: N815 - the stdlib's names

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.route("GET", r"/oauth/authorize", self.authorize)
        self.route("POST", r"/oauth/token", self.token)
        self.setup_routes()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def setup_routes(self) -> None:  # each fake adds its API
        pass

    def reset(self) -> None:
        """Between tests: no faults, no request log (tokens and data are the test's to set)."""
        with self._lock:
            self.faults.clear()
            self.log.clear()
            self.token_requests.clear()

    # ------------------------------------------------------------------ routing

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        self.routes.append((method, re.compile(f"^{pattern}$"), handler))

    def fail(self, prefix: str, status: int, headers: dict[str, str] | None = None, times: int = 1,
             body: Any = None, after: int = 0) -> None:
        with self._lock:
            self.faults.append(Fault(prefix, status, headers or {}, times, body, after))

    def hits(self, prefix: str) -> int:
        return sum(1 for _, p in self.log if p.startswith(prefix))

    def dispatch(self, request: Request) -> Reply:
        with self._lock:
            self.log.append((request.method, request.path))
            for fault in self.faults:
                if fault.times > 0 and request.path.startswith(fault.prefix):
                    if fault.after > 0:
                        fault.after -= 1
                        continue
                    fault.times -= 1
                    return json_reply(fault.body if fault.body is not None else {"error": "injected"},
                                      fault.status, fault.headers)
        for method, pattern, handler in self.routes:
            match = pattern.match(request.path)
            if method == request.method and match:
                request.match = match
                if handler.__name__ not in ("authorize", "token") and not self.authorized(request):
                    return self.unauthorized(request)
                return handler(request)
        return json_reply({"message": "Not Found"}, 404)

    # ------------------------------------------------------------------ bearer tokens

    def authorized(self, request: Request) -> bool:
        auth = request.header("Authorization") or ""
        if not auth.startswith("Bearer "):
            return False
        with self._lock:
            expiry = self.access.get(auth[len("Bearer "):], -1.0)
        return expiry is None or (expiry != -1.0 and expiry > time.time())

    def unauthorized(self, request: Request) -> Reply:
        return json_reply({"message": "Bad credentials"}, 401)

    def revoke_access_tokens(self) -> None:
        """Every access token stops working now (as if it expired early); refresh tokens still work."""
        with self._lock:
            self.access.clear()

    def revoke_everything(self) -> None:
        with self._lock:
            self.access.clear()
            self.refresh_tokens.clear()

    def grant(self, ttl_s: int | None = None) -> dict[str, Any]:
        """A token pair as the token endpoint issues it."""
        access, refresh = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
        ttl = self.token_ttl_s if ttl_s is None else ttl_s
        with self._lock:
            self.access[access] = None if ttl is None else time.time() + ttl
            self.refresh_tokens.add(refresh)
        out: dict[str, Any] = {"access_token": access, "token_type": "bearer", "refresh_token": refresh}
        if ttl is not None:
            out["expires_in"] = ttl
        return out

    # ------------------------------------------------------------------ OAuth endpoints

    def authorize(self, request: Request) -> Reply:
        """The consent screen, approved at once: back to the redirect URI with a code."""
        if request.arg("client_id") != CLIENT_ID or request.arg("response_type") != "code":
            return json_reply({"error": "invalid_request"}, 400)
        code = "code-" + secrets.token_urlsafe(12)
        with self._lock:
            self.codes[code] = {"redirect_uri": request.arg("redirect_uri"),
                                "challenge": request.arg("code_challenge"),
                                "method": request.arg("code_challenge_method"),
                                "scope": request.arg("scope") or request.arg("user_scope")}
        query = urlencode({"code": code, "state": request.arg("state")})
        return Reply(302, b"", {"Location": f"{request.arg('redirect_uri')}?{query}"})

    def _client_ok(self, request: Request, params: dict[str, str]) -> bool:
        auth = request.header("Authorization") or ""
        basic = auth.startswith("Basic ") and base64.b64decode(auth[6:]).decode() == f"{CLIENT_ID}:{CLIENT_SECRET}"
        body = params.get("client_id") == CLIENT_ID and params.get("client_secret") == CLIENT_SECRET
        return {"basic": basic, "body": body, "any": basic or body}[self.client_auth]

    def token(self, request: Request) -> Reply:
        params = request.json() if self.token_body_format == "json" else request.form()
        self.token_requests.append(dict(params))
        if not self._client_ok(request, params):
            return self.token_error("invalid_client", 401)
        grant = params.get("grant_type")
        if grant == "authorization_code":
            with self._lock:
                issued = self.codes.pop(params.get("code", ""), None)
            if issued is None or issued["redirect_uri"] != params.get("redirect_uri"):
                return self.token_error("invalid_grant")
            if issued["challenge"]:
                verifier = params.get("code_verifier", "")
                digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if issued["method"] != "S256" or digest != issued["challenge"]:
                    return self.token_error("invalid_grant")
            return json_reply(self.token_answer(self.grant(), first=True))
        if grant == "refresh_token":
            with self._lock:
                known = params.get("refresh_token") in self.refresh_tokens
                if known and self.rotate_refresh_tokens:
                    self.refresh_tokens.discard(params["refresh_token"])
            if not known:
                return self.token_error("invalid_grant")
            pair = self.grant()
            if not self.rotate_refresh_tokens:
                pair.pop("refresh_token")
            return json_reply(self.token_answer(pair, first=False))
        return self.token_error("unsupported_grant_type")

    def token_answer(self, pair: dict[str, Any], first: bool) -> dict[str, Any]:
        return pair

    def token_error(self, error: str, status: int = 400) -> Reply:
        return json_reply({"error": error, "error_description": f"fake: {error}"}, status)
