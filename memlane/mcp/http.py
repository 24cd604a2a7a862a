"""MCP over Streamable HTTP (specification revision 2025-11-25): one HTTP exchange in, one out.

memlane serves MCP statelessly with JSON responses, so the same code answers behind API Gateway
and Lambda (no connection outlives a request, no session to find again) and on the local server:

- POST carries one JSON-RPC message. The official SDK's Streamable HTTP transport answers it in
  stateless JSON mode, run for this one request: it checks Accept and Content-Type, parses and
  validates the message with the SDK's types, negotiates the protocol version (`initialize`, and
  the `MCP-Protocol-Version` header on later requests; unsupported versions get 400), answers
  notifications with 202 and runs the tools of memlane.mcp.server.
- GET would open a server-to-client SSE stream and DELETE would end a session; a stateless server
  offers neither, so both get 405 (the answers the specification gives for that case).
- A browser `Origin` not on memlane's allow-list is refused with 403 before anything runs (the
  specification's defence against DNS rebinding).

Authentication and the body size limit are applied before this module is reached (the gateway or
the Lambda authorizer, and MemlaneApi).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import anyio
from mcp_types import INVALID_REQUEST

from memlane.domain.origins import OriginPolicy, header
from memlane.mcp.backend import Backend
from memlane.mcp.formatting import MAX_OUTPUT_CHARS

MCP_PATH = "/mcp"
ALLOWED_METHODS = "POST, OPTIONS"
# Headers an MCP client in a browser sends and must be allowed to read (CORS).
REQUEST_HEADERS = "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID"
EXPOSED_HEADERS = "WWW-Authenticate, Mcp-Session-Id"


@dataclass
class HttpReply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def jsonrpc_error(status: int, message: str, code: int = INVALID_REQUEST,
                  headers: Mapping[str, str] | None = None) -> HttpReply:
    """An HTTP error in the shape the SDK's transport uses: a JSON-RPC error without an id."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
    return HttpReply(status, {"Content-Type": "application/json", **(headers or {})}, body.encode())


def handle(method: str, headers: Mapping[str, str], body: bytes, backend: Backend, *,
           origins: OriginPolicy, max_body_bytes: int, output_limit: int = MAX_OUTPUT_CHARS) -> HttpReply:
    origin = header(headers, "origin")
    if origin is not None and not origins.allows(origin):
        return jsonrpc_error(403, f"Forbidden: origin not allowed: {origin}")
    method = method.upper()
    if method == "OPTIONS":
        return HttpReply(204, {"Access-Control-Allow-Methods": ALLOWED_METHODS,
                               "Access-Control-Allow-Headers": REQUEST_HEADERS,
                               "Access-Control-Max-Age": "600"}, b"")
    if method in ("GET", "DELETE"):
        what = ("no server-to-client stream: this server is stateless and answers every POST with JSON"
                if method == "GET" else "no session to end: this server is stateless")
        return jsonrpc_error(405, f"Method Not Allowed: {what}", headers={"Allow": ALLOWED_METHODS})
    if method != "POST":
        return jsonrpc_error(405, f"Method Not Allowed: {method}", headers={"Allow": ALLOWED_METHODS})
    content_type = (header(headers, "content-type") or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return jsonrpc_error(415, "Unsupported Media Type: send the JSON-RPC message as application/json")
    reply = _post(headers, body, backend, max_body_bytes, output_limit)
    if reply.status >= 400 and not reply.headers.get("content-type", "").startswith("application/json"):
        # The transport answers a few refusals in plain text; keep every error JSON-RPC shaped.
        return jsonrpc_error(reply.status, reply.body.decode("utf-8", "replace").strip() or "request refused")
    return reply


def _post(headers: Mapping[str, str], body: bytes, backend: Backend, max_body_bytes: int,
          output_limit: int) -> HttpReply:
    # Imported here: the SDK's server stack (starlette, jsonschema) only loads for MCP requests.
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from memlane.mcp.server import build_server

    server = build_server(backend, offload=False, output_limit=output_limit)
    manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True,
                                           session_idle_timeout=None, max_request_body_size=max_body_bytes)
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "https", "path": MCP_PATH, "raw_path": MCP_PATH.encode(), "root_path": "",
        "query_string": b"", "server": ("memlane", 443), "client": ("0.0.0.0", 0),
        "headers": [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in headers.items()],
    }
    reply = HttpReply(500, {}, b"")
    chunks: list[bytes] = []

    async def exchange() -> None:
        answered = anyio.Event()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await answered.wait()  # the client "disconnects" once it has its answer
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                reply.status = int(message["status"])
                reply.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in message.get("headers", [])
                                 if k.lower() not in (b"content-length", b"connection")}
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    answered.set()

        async with manager.run():
            await manager.handle_request(scope, receive, send)

    anyio.run(exchange)
    reply.body = b"".join(chunks)
    return reply
