"""The one resolver. Lambda (functions/api) and `memlane serve` both call `MemlaneApi.handle`
with an API Gateway REST proxy event; every route, error mapping and the OpenAPI document live
here."""

from __future__ import annotations

import base64
import json
import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError as RouteNotFound
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from memlane import __version__
from memlane.api.auth import rate_limit_of
from memlane.api.errors import describe_validation_errors, error_body, status_for
from memlane.api.events import MAX_BODY_BYTES
from memlane.api.resolver import ConcurrentRestResolver
from memlane.api.routes import (
    collections,
    connections,
    conversations,
    docsets,
    mcp,
    project_memory,
    v3,
    v3_manage,
)
from memlane.api.weights import request_weight
from memlane.domain.errors import InvalidInputError, MemlaneError, RateLimitedError
from memlane.domain.json_input import JsonBoundsError, parse_json
from memlane.ports import Services

log = logging.getLogger(__name__)

# Routes anyone may call; everything else needs an API key.
PUBLIC_ROUTES = frozenset({("GET", "/health"), ("GET", "/openapi.json"),
                           ("GET", "/healthz"), ("GET", "/capabilities"),  # raged, Vidurai: static, no data
                           *connections.PUBLIC}) | mcp.PUBLIC_ROUTES  # OAuth callback (bound by state), webhooks (signed)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=status, content_type="application/json", body=error_body(message), headers=headers)


ROUTERS = (v3.router, v3_manage.router, conversations.router, collections.router, project_memory.router,
           docsets.router, mcp.router, connections.router)


_OPENAPI: weakref.WeakKeyDictionary[ConcurrentRestResolver, str] = weakref.WeakKeyDictionary()
_OPENAPI_LOCK = threading.Lock()


def openapi_json(resolver: ConcurrentRestResolver) -> str:
    """The OpenAPI document, generated once per resolver: the routes do not change after
    composition, and Powertools' generator is not safe to run from two threads at once (the local
    gateway asks for it on a request's thread)."""
    with _OPENAPI_LOCK:
        document = _OPENAPI.get(resolver)
        if document is None:
            document = _OPENAPI[resolver] = resolver.get_openapi_json_schema(
                title="memlane", version=__version__,
                description="Long-term memory and documentation recall for AI assistants.")
        return document


def create_resolver() -> ConcurrentRestResolver:
    app = ConcurrentRestResolver(enable_validation=True)
    for router in ROUTERS:
        app.include_router(router)
    _add_own_routes(app)
    _map_errors(app)
    return app


def _add_own_routes(app: ConcurrentRestResolver) -> None:
    """/health (shared by the seeds) and the OpenAPI document."""

    @app.get("/health", tags=["health"], summary="Liveness (the shape of Mem-Oracle's and Vidurai's /health)")
    def health() -> dict[str, Any]:
        svc: Services = app.context["services"]
        return {"status": "ok", "timestamp": int(svc.clock.now().timestamp() * 1000), "version": __version__,
                "embedder": svc.embedder.id, "search": svc.index.backend}

    @app.get("/openapi.json", include_in_schema=False)
    def openapi():  # noqa: ANN202 - a bare Response has no schema
        return Response(status_code=200, content_type="application/json", body=openapi_json(app))


def _map_errors(app: ConcurrentRestResolver) -> None:
    """Every error a request can meet, as `{"error": "..."}` with its status (memlane.api.errors)."""

    @app.exception_handler(RequestUnsupportedContentType)
    def unsupported(exc: RequestUnsupportedContentType) -> Response:
        return _error(415, "Content-Type: send JSON (Content-Type: application/json)")

    @app.exception_handler(RequestValidationError)
    def invalid(exc: RequestValidationError) -> Response:
        return _error(400, describe_validation_errors(exc.errors()))

    @app.exception_handler(MemlaneError)
    def domain_error(exc: MemlaneError) -> Response:
        return _memlane_error(exc)

    @app.not_found
    def not_found(exc: RouteNotFound) -> Response:
        ev = app.current_event
        return _error(404, f"no route for {ev.http_method} {ev.path}")

    @app.exception_handler(Exception)
    def unexpected(exc: Exception) -> Response:
        log.exception("unhandled error")
        return _error(500, "internal error")


def _memlane_error(exc: MemlaneError) -> Response:
    """A typed error's status from the one table; a rate limit says when to come back."""
    status = status_for(exc)
    headers = None
    if isinstance(exc, RateLimitedError):
        headers = {"Retry-After": str(exc.retry_after_s), "RateLimit-Limit": str(exc.limit),
                   "RateLimit-Remaining": "0", "RateLimit-Reset": str(exc.reset_s)}
    if status >= 500:
        log.warning("dependency error: %s", exc.message)
    return _error(status, exc.message, headers)


class MemlaneApi:
    """Binds the resolver to the services composed at the edge."""

    def __init__(self, services: Callable[[], Services] | Services, docsets: Any = None) -> None:
        self._services = services if callable(services) else (lambda: services)
        # The Mem-Oracle routes' DocsetContext (memlane.docsets.service); None where not composed.
        self._docsets = docsets
        self.resolver = create_resolver()

    def handle(self, event: dict[str, Any], context: Any = None) -> dict[str, Any]:
        body = event.get("body") or ""
        if len(body) > MAX_BODY_BYTES:
            return _too_large()
        refusal = _normalize_content_type(event) or _refuse_unbounded_json(event)
        if refusal is not None:
            return refusal
        svc = self._services()
        decision = _rate_limit(svc, event)
        if decision is not None and not decision.allowed:
            return {"statusCode": 429, "isBase64Encoded": False,
                    "headers": {"Content-Type": "application/json", "Retry-After": str(decision.retry_after_s),
                                **decision.headers()},
                    "body": error_body(f"rate limit of {decision.limit} requests per minute exceeded; "
                                       f"retry after {decision.retry_after_s} s")}
        if context is not None and hasattr(context, "get_remaining_time_in_millis") and svc.platform.idempotency:
            svc.platform.idempotency.bind_invocation(context)
        # Requests run concurrently (the local server's threads): each gets its own resolver state.
        with self.resolver.request_scope():
            self.resolver.append_context(services=svc, docsets=self._docsets)
            result = self.resolver.resolve(event, context)
        # No browser may sniff a JSON answer (a stored "<script>" in a memory) into HTML.
        result.setdefault("headers", {}).setdefault("X-Content-Type-Options", "nosniff")
        if decision is not None:
            result.setdefault("headers", {}).update(decision.headers())
            if result.get("multiValueHeaders") is not None:
                result["multiValueHeaders"].update({k: [v] for k, v in decision.headers().items()})
        return result

    def openapi(self) -> dict[str, Any]:
        """The document GET /openapi.json serves (`memlane openapi`, clients/typescript/openapi.json)."""
        return json.loads(openapi_json(self.resolver))


def _normalize_content_type(event: dict[str, Any]) -> dict[str, Any] | None:
    """Every body memlane accepts is JSON. A JSON body sent with another type (curl -d sends
    application/x-www-form-urlencoded) is read as JSON; any other body is refused with a 415
    before the resolver tries to parse it as a form."""
    body = event.get("body")
    if not body or event.get("httpMethod", "GET").upper() in ("GET", "HEAD", "DELETE", "OPTIONS"):
        return None
    if event.get("isBase64Encoded"):
        # the gateway base64-encodes bodies that are not UTF-8; JSON must be UTF-8 (RFC 8259)
        try:
            event["body"] = body = base64.b64decode(body).decode("utf-8")
            event["isBase64Encoded"] = False
        except (ValueError, UnicodeDecodeError):
            return {"statusCode": 400, "isBase64Encoded": False, "headers": {"Content-Type": "application/json"},
                    "body": error_body("body: is not valid UTF-8 JSON")}
    headers = event.get("headers") or {}
    name = next((k for k in headers if k.lower() == "content-type"), None)
    value = (headers.get(name) or "").split(";")[0].strip().lower() if name else ""
    if value == "application/json" or value.endswith("+json"):
        return None
    text = body if not event.get("isBase64Encoded") else ""
    if text.lstrip()[:1] in ("{", "["):
        if name:
            del headers[name]
        headers["Content-Type"] = "application/json"
        multi = event.get("multiValueHeaders") or {}
        for k in [k for k in multi if k.lower() == "content-type"]:
            del multi[k]
        if event.get("multiValueHeaders") is not None:
            multi["Content-Type"] = ["application/json"]
        event["headers"] = headers
        return None
    return {"statusCode": 415, "isBase64Encoded": False, "headers": {"Content-Type": "application/json"},
            "body": error_body(f"Content-Type: {value or 'none'} is not supported; send JSON "
                               "(Content-Type: application/json)")}


def _refuse_unbounded_json(event: dict[str, Any]) -> dict[str, Any] | None:
    """Every JSON body passes memlane's one bounded parse (memlane.domain.json_input) before any
    route, the resolver's own parse or the bulk route's weighing reads it: nested too deep, a
    number too long, a lone surrogate answer 400 naming the bound, never 500. Syntax errors are
    left to the route, which words them its own way."""
    body = event.get("body")
    if not body or event.get("isBase64Encoded"):
        return None
    headers = event.get("headers") or {}
    value = next((v for k, v in headers.items() if k.lower() == "content-type"), "") or ""
    media = value.split(";")[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        return None
    try:
        parse_json(body)
    except JsonBoundsError as exc:
        return {"statusCode": 400, "isBase64Encoded": False, "headers": {"Content-Type": "application/json"},
                "body": error_body(exc.message)}
    except InvalidInputError:
        return None
    return None


def _rate_limit(svc: Services | None, event: dict[str, Any]):
    ctx = (event.get("requestContext") or {}).get("authorizer") or {}
    if svc is None or svc.platform.rate_limiter is None or not ctx.get("key_id"):
        return None
    limit = rate_limit_of(ctx)
    return svc.platform.rate_limiter.hit(ctx["key_id"], limit, svc.clock.now(), request_weight(event, limit))


def _too_large() -> dict[str, Any]:
    return {"statusCode": 413, "headers": {"Content-Type": "application/json"},
            "body": error_body(f"body: exceeds {MAX_BODY_BYTES // (1024 * 1024)} MB"), "isBase64Encoded": False}
