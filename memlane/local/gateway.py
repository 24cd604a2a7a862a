"""What API Gateway does in front of the Lambda, done locally: authorize the request with the
same logic as the Lambda authorizer, then build the REST proxy event and call the same handler."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from memlane.api.app import PUBLIC_ROUTES, MemlaneApi
from memlane.api.auth import authorizer_context, is_loopback_host, public_base_url, www_authenticate
from memlane.api.errors import error_body
from memlane.api.events import build_event
from memlane.domain.errors import AuthenticationError
from memlane.domain.origins import ALLOWED_ORIGINS_ENV, OriginPolicy, header, is_extension_origin
from memlane.domain.principal import Principal
from memlane.local.responses import GatewayResponse
from memlane.ports import MetadataStore, Services
from memlane.services.keys import authenticate, ensure_organization, key_from_headers

if TYPE_CHECKING:
    from memlane.local.webapp import WebApp

log = logging.getLogger(__name__)

# Refused extension origins already named in the log (a few at most: one per installed build).
MAX_EXTENSIONS_TOLD = 100


class LocalGateway:
    def __init__(
        self, api: MemlaneApi, services: Services, *, no_auth: bool = False, allow_all_origins: bool = False,
        allowed_origins: Iterable[str] = (),
        webapp: WebApp | None = None,
    ) -> None:
        self.api = api
        self.webapp = webapp  # the web app's files and sign-in link (memlane.local.webapp)
        self._segments: frozenset[str] | None = None
        self.services = services
        # Browser origins: the Vidurai seed's allow-list plus --allow-origin, unless --allow-all-origins.
        self.origins = OriginPolicy(allow_all=allow_all_origins, extra=frozenset(allowed_origins))
        self._extensions_told: set[str] = set()
        # --no-auth: a request without a key acts as the local default organization (loopback only).
        self.no_auth_principal = local_principal(services.metadata) if no_auth else None

    def handle(
        self,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
        source_ip: str = "127.0.0.1",
    ) -> GatewayResponse:
        served = self._webapp_page(method, path, headers, body)
        if served is not None:
            return served
        origin = header(headers, "origin")
        refused = self._refuse(origin, headers)
        if refused is not None:
            return refused
        if method.upper() == "OPTIONS":
            return self._preflight(origin, headers)
        authorizer: dict[str, str] | None = None
        if (method.upper(), path) not in PUBLIC_ROUTES:
            checked = self._authorizer(headers)
            if isinstance(checked, GatewayResponse):
                return checked  # the 401
            authorizer = checked
        received_at_ms = int(self.services.clock.now().timestamp() * 1000)
        event = build_event(method.upper(), path, query, headers, body, authorizer, source_ip, received_at_ms)
        return self._response(self.api.handle(event, None), origin)

    def _webapp_page(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> GatewayResponse | None:
        """The web app's answer (a page, a file, its own 404), or None: the request is the API's."""
        if self.webapp is None:
            return None
        served = self.webapp.handle(method, path, headers, body)
        if served is None:
            served = self.webapp.page_not_found(method, path, headers, self._api_segments())
        return served

    def _authorizer(self, headers: Mapping[str, str]) -> dict[str, str] | GatewayResponse:
        """The caller as the Lambda authorizer would pass it, or the 401 that refuses the request."""
        try:
            return authorizer_context(self._authenticate(headers))
        except AuthenticationError as exc:
            # API keys only here: the protected resource metadata names no authorization server.
            challenge = www_authenticate(public_base_url(headers, None, self.services.settings.public_url))
            return GatewayResponse(
                401,
                {"Content-Type": "application/json", "WWW-Authenticate": challenge},
                error_body(exc.message).encode(),
            )

    def _response(self, result: dict[str, Any], origin: str | None) -> GatewayResponse:
        """The resolver's proxy answer as an HTTP response, with the CORS headers its origin gets."""
        out_headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
        for k, values in (result.get("multiValueHeaders") or {}).items():
            if values:
                out_headers[k] = ", ".join(str(v) for v in values)
        raw = result.get("body") or ""
        payload = base64.b64decode(raw) if result.get("isBase64Encoded") else raw.encode("utf-8")
        if origin is not None:
            out_headers.update(self.origins.response_headers(origin))
        return GatewayResponse(int(result["statusCode"]), out_headers, payload)

    def _api_segments(self) -> frozenset[str]:
        """The first path segments of the API's routes (`v3`, `mcp`, `.well-known`, …), read once."""
        if self._segments is None:
            paths = [*self.api.openapi()["paths"], *(p for _, p in PUBLIC_ROUTES)]
            self._segments = frozenset(p.split("/")[1] for p in paths if p.startswith("/")) - {""}
        return self._segments

    # ------------------------------------------------------------------ CORS and --no-auth (issue 5)

    def _authenticate(self, headers: Mapping[str, str]) -> Principal:
        """A key, when one is sent, is always checked (a wrong key is a 401 even with --no-auth)."""
        if self.no_auth_principal is not None and key_from_headers(headers) is None:
            return self.no_auth_principal
        return authenticate(self.services.metadata, headers)

    def _refuse(self, origin: str | None, headers: Mapping[str, str]) -> GatewayResponse | None:
        """403 before anything runs: a browser origin off the allow-list, or (with --no-auth) a
        keyless request naming a non-loopback Host, which is what a DNS-rebinding page sends."""
        if origin is not None and not self.origins.allows(origin):
            self._tell_how_to_allow(origin)
            return _json_error(403, f"origin not allowed: {origin}")
        if self.no_auth_principal is not None and key_from_headers(headers) is None:
            host = header(headers, "host") or ""
            if not is_loopback_host(host):
                return _json_error(403, f"host not allowed without an API key: {host}")
        return None

    def _tell_how_to_allow(self, origin: str) -> None:
        """The person running `memlane serve` learns, once per extension, the setting that lets it
        in; a web page's origin is refused without a word (it is the attack the check stops)."""
        if not is_extension_origin(origin) or origin in self._extensions_told:
            return
        if len(self._extensions_told) < MAX_EXTENSIONS_TOLD:
            self._extensions_told.add(origin)
        log.warning("refused a request from the browser extension %s: to let it in, start memlane with "
                    "--allow-origin %s (or add it to %s)", origin, origin, ALLOWED_ORIGINS_ENV)

    def _preflight(self, origin: str | None, headers: Mapping[str, str]) -> GatewayResponse:
        return GatewayResponse(
            204,
            self.origins.preflight_headers(origin, header(headers, "access-control-request-headers")),
            b"",
        )


def _json_error(status: int, message: str) -> GatewayResponse:
    return GatewayResponse(status, {"Content-Type": "application/json"}, error_body(message).encode())


def local_principal(store: MetadataStore) -> Principal:
    """Who a keyless request is under --no-auth: the local default organization."""
    org, _ = ensure_organization(store, "default")
    return Principal(organization_id=org.id, key_id="local-no-auth", user_id="local")
