"""Requests sent to memlane's resolver in process, as a given caller: what the MCP tools of the
local runtime and of the API's /mcp route, and the CLI over a data directory, use instead of a
socket. Only the socket and the key check are skipped: the rate limit, validation, idempotency
and routes are those of `memlane serve` and Lambda."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from memlane.api.events import build_event
from memlane.mcp.backend import Dispatch

# The resolver's entry: an API Gateway proxy event in, the proxy result out (MemlaneApi.handle).
Handle = Callable[[dict[str, Any]], dict[str, Any]]


def in_process(handle: Handle, authorizer: Mapping[str, str], source_ip: str = "127.0.0.1",
               headers: Mapping[str, str] | None = None) -> Dispatch:
    """A Dispatch that answers (method, path, body, query) with `handle`, on behalf of the caller
    the `authorizer` context names. `headers` are sent with every request."""

    def dispatch(method: str, path: str, body: dict[str, Any] | None = None,
                 query: dict[str, str] | None = None) -> tuple[int, Any]:
        return call(handle, authorizer, method, path, body, query, headers, source_ip)

    return dispatch


def call(handle: Handle, authorizer: Mapping[str, str], method: str, path: str, body: Any = None,
         query: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
         source_ip: str = "127.0.0.1") -> tuple[int, Any]:
    """One request through `handle`: (status, decoded JSON answer, or its text; None when empty)."""
    raw = json.dumps(body).encode() if body is not None else b""
    sent = {"Content-Type": "application/json", **(headers or {})}
    params = {k: str(v) for k, v in (query or {}).items() if v is not None}
    event = build_event(method.upper(), path, urlencode(params), sent, raw, dict(authorizer), source_ip)
    result = handle(event)
    return int(result["statusCode"]), decode(result)


def decode(result: Mapping[str, Any]) -> Any:
    raw = result.get("body") or ""
    if not raw:
        return None
    text = base64.b64decode(raw).decode("utf-8", "replace") if result.get("isBase64Encoded") else raw
    try:
        return json.loads(text)
    except ValueError:
        return text
