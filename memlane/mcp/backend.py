"""Where the MCP tools send their requests: a memlane HTTP API, or memlane's API in process.

Every backend speaks the same HTTP API (paths, bodies, `{"error": ...}` answers), so every tool is
written once. `HttpBackend` (memlane.mcp.remote) calls a memlane server over the network through
the Python client (`memlane mcp` with MEMLANE_API_URL). `InProcessBackend` hands each request to a
`Dispatch` callable that the host provides: the local runtime (`memlane mcp` over a data
directory, memlane.local.runtime) and the API's /mcp route (memlane.api.routes.mcp) both send it
through the very resolver `memlane serve` and Lambda use, as a given caller. This package knows
nothing of either: it only calls the callable."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)

DOCS_NEED_A_SERVER = (
    "documentation sets need a running memlane server: start `memlane serve` and set MEMLANE_API_URL "
    "(and MEMLANE_API_KEY) in this MCP server's environment"
)

DOCS_PATHS = frozenset({"/index", "/retrieve", "/status"})  # Mem-Oracle's routes
MEMORY_GRAPH_PATH = "/v3/memory-graph"

# (method, path, JSON body or None, query or None) -> (HTTP status, decoded JSON answer, or its text)
Dispatch = Callable[[str, str, "dict[str, Any] | None", "dict[str, str] | None"], "tuple[int, Any]"]


class ApiError(Exception):
    """An answer the tool reports to the assistant as a readable error."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Backend(Protocol):
    description: str

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                query: dict[str, str] | None = None) -> Any:
        """The decoded JSON answer; ApiError for a 4xx/5xx or an unreachable server."""
        ...

    def memory_graph(self, project_id: str | None) -> dict[str, Any]: ...

    def close(self) -> None: ...


def error_message(status: int, answer: Any) -> str:
    """The server's `error` text, else the start of what it answered."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        return answer["error"]
    text = answer if isinstance(answer, str) else ("" if answer is None else str(answer))
    return text.strip()[:500] or f"HTTP {status}"


class InProcessBackend:
    """Requests answered in this process by the host's `dispatch` (memlane's resolver, as the
    caller the host chose). `docs_unavailable` is what the documentation tools answer where
    documentation sets are not composed; `on_close` releases what the host opened for it."""

    def __init__(self, dispatch: Dispatch, description: str, docs_unavailable: str | None = None,
                 on_close: Callable[[], object] | None = None) -> None:
        self.dispatch = dispatch
        self.description = description
        self.docs_unavailable = docs_unavailable
        self._on_close = on_close

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                query: dict[str, str] | None = None) -> Any:
        if path in DOCS_PATHS and self.docs_unavailable is not None:
            raise ApiError(501, self.docs_unavailable)
        status, answer = self.dispatch(method, path, body, query)
        if status >= 400:
            raise ApiError(status, error_message(status, answer))
        return answer if answer is not None else {}

    def memory_graph(self, project_id: str | None) -> dict[str, Any]:
        return self.request("GET", MEMORY_GRAPH_PATH, query={"project_id": project_id} if project_id else None)

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
