"""MCP over Streamable HTTP at /mcp, and the OAuth discovery documents that point clients at it.

`POST /mcp` is answered by memlane.mcp.http (the SDK's transport, stateless, JSON) with the same
tools as `memlane mcp`. The tools' requests go back through this resolver as the caller of
`/mcp`, exactly as if the caller had sent them (same routes, validation, tenant scope); they are
metered once, as the one `/mcp` request.

`/.well-known/oauth-protected-resource` (RFC 9728) describes /mcp as a protected resource. On a
stack with OAuth it names the authorization server, whose metadata memlane publishes at its base
URL (memlane.services.oauth explains why); locally, and on a stack without OAuth, it names none:
there the credential is an API key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import (
    MCP_PATH,
    PROTECTED_RESOURCE_PATH,
    principal_of,
    public_base_url,
    www_authenticate,
)
from memlane.api.events import LOCAL_STAGE, MAX_BODY_BYTES
from memlane.api.resolver import ConcurrentRestResolver
from memlane.domain.errors import AuthenticationError
from memlane.domain.oauth import OAuthSettings
from memlane.domain.origins import OriginPolicy, header
from memlane.ports import Services

router = Router()

AUTHORIZATION_SERVER_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
# Anyone may read the discovery documents (that is what they are for); they hold no tenant data.
PUBLIC_ROUTES = frozenset({("GET", PROTECTED_RESOURCE_PATH), ("GET", PROTECTED_RESOURCE_PATH + MCP_PATH),
                           *(("GET", p) for p in AUTHORIZATION_SERVER_PATHS)})
DOCS_NOT_SERVED = "this memlane server does not serve documentation sets"
MCP_DESCRIPTION = (
    "Model Context Protocol, Streamable HTTP transport (revision 2025-11-25), stateless with JSON "
    "responses: POST one JSON-RPC message (initialize, tools/list, tools/call, ...) with "
    "`Accept: application/json, text/event-stream`. The tools are those of `memlane mcp`. GET and DELETE "
    "answer 405 (no server stream, no sessions)."
)


def _services() -> Services:
    return router.context["services"]


def _origins(request_context: dict[str, Any]) -> OriginPolicy:
    """The browser origins /mcp answers (the specification requires the check: DNS rebinding).
    Behind the local server the gateway has already refused every origin off the server's policy
    (the allow-list, --allow-origin, --allow-all-origins) before the resolver ran; behind API
    Gateway nothing has, so the allow-list and MEMLANE_ALLOWED_ORIGINS (Settings.allowed_origins,
    read when the function started) apply here."""
    if request_context.get("stage") == LOCAL_STAGE:
        return OriginPolicy(allow_all=True)
    return OriginPolicy(extra=_services().settings.allowed_origins)


def _oauth() -> OAuthSettings | None:
    return _services().settings.oauth


def _base_url() -> str:
    event = router.current_event.raw_event
    return public_base_url(event.get("headers") or {}, event.get("requestContext") or {},
                           _services().settings.public_url)


def _headers() -> dict[str, str]:
    event = router.current_event.raw_event
    merged = {k: v[-1] for k, v in (event.get("multiValueHeaders") or {}).items() if v}
    merged.update(event.get("headers") or {})
    return merged


def _reply(status: int, headers: dict[str, str], body: bytes, origin: str | None) -> Response:
    out = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "application/json")
    if origin is not None:
        from memlane.mcp.http import EXPOSED_HEADERS

        out.update({"Access-Control-Allow-Origin": origin, "Vary": "Origin",
                    "Access-Control-Expose-Headers": EXPOSED_HEADERS})
    return Response(status_code=status, content_type=content_type, body=body.decode("utf-8"), headers=out)


def _nested_handle() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """How the tools' requests are resolved while `/mcp` is: each in a request scope of its own
    (its own event and context in the resolver), with the services of this one. They run on this
    request's thread, so they see the resolver exactly as a request from the gateway would."""
    resolver = router.api_resolver
    assert isinstance(resolver, ConcurrentRestResolver), "the MCP router runs in memlane's resolver"
    services, docsets = resolver.context.get("services"), resolver.context.get("docsets")
    lambda_context = resolver.lambda_context

    def dispatch(event: dict[str, Any]) -> dict[str, Any]:
        with resolver.request_scope():
            resolver.append_context(services=services, docsets=docsets)
            return resolver.resolve(event, lambda_context)

    return dispatch


def _handle(method: str) -> Response:
    from memlane.api.inprocess import in_process
    from memlane.mcp import http
    from memlane.mcp.backend import InProcessBackend

    headers = _headers()
    event = router.current_event.raw_event
    request_context = event.get("requestContext") or {}
    origins = _origins(request_context)
    origin = header(headers, "origin")
    allowed_origin = origin if origin is not None and origins.allows(origin) else None
    if method in ("POST", "GET", "DELETE"):
        try:
            principal_of(router)
        except AuthenticationError as exc:
            challenge = {"WWW-Authenticate": www_authenticate(_base_url())}
            reply = http.jsonrpc_error(401, f"Unauthorized: {exc.message}", headers=challenge)
            return _reply(reply.status, reply.headers, reply.body, allowed_origin)
    source_ip = (request_context.get("identity") or {}).get("sourceIp") or "127.0.0.1"
    dispatch = in_process(_nested_handle(), dict(request_context.get("authorizer") or {}), source_ip)
    backend = InProcessBackend(
        dispatch, "memlane API",
        docs_unavailable=None if router.context.get("docsets") is not None else DOCS_NOT_SERVED)
    body = (router.current_event.body or "").encode("utf-8")
    reply = http.handle(method, headers, body, backend, origins=origins, max_body_bytes=MAX_BODY_BYTES,
                        output_limit=_services().settings.mcp_max_output_chars)
    return _reply(reply.status, reply.headers, reply.body, allowed_origin)


@router.post(MCP_PATH, tags=["mcp"], summary="MCP: send one JSON-RPC message", description=MCP_DESCRIPTION,
             responses={200: {"description": "The JSON-RPC response"},
                        202: {"description": "A notification or response was accepted"},
                        400: {"description": "Malformed message or unsupported MCP-Protocol-Version"},
                        401: {"description": "Missing or invalid credential (WWW-Authenticate names the "
                                             "protected resource metadata)"},
                        403: {"description": "Origin not allowed"},
                        406: {"description": "Accept does not include application/json"},
                        413: {"description": "Body over 10 MB"},
                        415: {"description": "Body not sent as application/json"}})
def mcp_post():  # noqa: ANN201 - a bare Response has no schema
    return _handle("POST")


@router.get(MCP_PATH, tags=["mcp"], summary="MCP: no server-to-client stream (405)",
            responses={405: {"description": "This stateless server offers no SSE stream"}})
def mcp_get():  # noqa: ANN201 - a bare Response has no schema
    return _handle("GET")


@router.delete(MCP_PATH, tags=["mcp"], summary="MCP: no session to end (405)",
               responses={405: {"description": "This stateless server has no sessions"}})
def mcp_delete():  # noqa: ANN201 - a bare Response has no schema
    return _handle("DELETE")


@router.route(MCP_PATH, method=["OPTIONS"], include_in_schema=False)
def mcp_preflight():  # noqa: ANN201 - a bare Response has no schema
    return _handle("OPTIONS")


# ------------------------------------------------------------------------------------ discovery


def _protected_resource() -> dict[str, Any]:
    base = _base_url()
    oauth = _oauth()
    doc: dict[str, Any] = {"resource": base + MCP_PATH, "resource_name": "memlane",
                           "bearer_methods_supported": ["header"]}
    if oauth is not None:
        # The resource is the configured URL (tokens are bound to it), not whatever Host was sent.
        doc.update(resource=oauth.resource, authorization_servers=[oauth.public_url],
                   scopes_supported=[oauth.scope])
    return doc


@router.get(PROTECTED_RESOURCE_PATH, tags=["mcp"],
            summary="OAuth protected resource metadata for /mcp (RFC 9728)")
def protected_resource() -> dict[str, Any]:
    return _protected_resource()


@router.get(PROTECTED_RESOURCE_PATH + MCP_PATH, tags=["mcp"],
            summary="The same metadata at the RFC 9728 location for the /mcp resource")
def protected_resource_for_mcp() -> dict[str, Any]:
    return _protected_resource()


def _authorization_server() -> Response:
    oauth = _oauth()
    if oauth is None:
        from memlane.api.errors import error_body

        return Response(status_code=404, content_type="application/json",
                        body=error_body("this memlane server has no OAuth authorization server; use an API key"))
    return Response(status_code=200, content_type="application/json", body=oauth.authorization_server_metadata())


@router.get(AUTHORIZATION_SERVER_PATHS[0], tags=["mcp"],
            summary="OAuth authorization server metadata (RFC 8414) for the stack's user pool",
            responses={404: {"description": "No OAuth on this server (API keys only)"}})
def authorization_server():  # noqa: ANN201 - a bare Response has no schema
    return _authorization_server()


@router.get(AUTHORIZATION_SERVER_PATHS[1], tags=["mcp"],
            summary="The same metadata at the OpenID Connect discovery location",
            responses={404: {"description": "No OAuth on this server (API keys only)"}})
def openid_configuration():  # noqa: ANN201 - a bare Response has no schema
    return _authorization_server()
