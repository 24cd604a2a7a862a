"""Where the MCP tools send their requests: a memlane HTTP API, or memlane's resolver in process.

Every backend speaks the same HTTP API (paths, bodies, `{"error": ...}` answers), so every tool is
written once. `HttpBackend` calls a memlane server over the network (`memlane mcp` with
MEMLANE_API_URL). `ResolverBackend` runs each request through the very resolver `memlane serve`
and Lambda use (the same routes, validation and services), in process, as a given caller: the
stdio server over a data directory (`DirectBackend`, as the directory's default organization) and
the Streamable HTTP endpoint (memlane.api.routes.mcp, as the caller of `POST /mcp`)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

from memlane.config import Settings

log = logging.getLogger(__name__)

DOCS_NEED_A_SERVER = (
    "documentation sets need a running memlane server: start `memlane serve` and set MEMLANE_API_URL "
    "(and MEMLANE_API_KEY) in this MCP server's environment"
)

DOCS_PATHS = frozenset({"/index", "/retrieve", "/status"})  # Mem-Oracle's routes


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


def _error_message(status: int, text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return text.strip()[:500] or f"HTTP {status}"


class HttpBackend:
    """A memlane server (local `memlane serve` or a deployed stack)."""

    def __init__(self, url: str, api_key: str | None, client: Any = None) -> None:
        import httpx

        self.url = url.rstrip("/")
        self.description = f"memlane API at {self.url}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = client or httpx.Client(base_url=self.url, headers=headers, timeout=120)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                query: dict[str, str] | None = None) -> Any:
        import httpx

        try:
            r = self.client.request(method, path, json=body, params=query)
        except httpx.HTTPError as exc:
            raise ApiError(0, f"cannot reach the memlane API at {self.url}: {exc}") from exc
        if r.status_code >= 400:
            message = _error_message(r.status_code, r.text)
            if r.status_code == 404 and message.startswith("no route") and path in DOCS_PATHS:
                message = f"this memlane server does not serve documentation sets ({message})"
            raise ApiError(r.status_code, message)
        return r.json() if r.content else {}

    def memory_graph(self, project_id: str | None) -> dict[str, Any]:
        query = {"project_id": project_id} if project_id else None
        try:
            return self.request("GET", "/v3/memory-graph", query=query)
        except ApiError as exc:
            if exc.status == 404 and exc.message.startswith("no route"):
                raise ApiError(404, f"this memlane server has no memory graph yet ({exc.message})") from exc
            raise

    def close(self) -> None:
        self.client.close()


class ResolverBackend:
    """Requests answered in this process by memlane's resolver (the routes, validation and
    services `memlane serve` and Lambda use), on behalf of the caller named by `authorizer` (the
    request context an authorizer writes). Only the socket and the key check are skipped.

    `dispatch` takes the API Gateway proxy event and returns the proxy result. `docs_unavailable`
    is what the documentation tools answer where documentation sets are not composed."""

    def __init__(self, dispatch: Callable[[dict[str, Any]], dict[str, Any]], authorizer: dict[str, str],
                 description: str, docs_unavailable: str | None = None, source_ip: str = "127.0.0.1") -> None:
        self.dispatch = dispatch
        self.authorizer = authorizer
        self.description = description
        self.docs_unavailable = docs_unavailable
        self.source_ip = source_ip

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                query: dict[str, str] | None = None) -> Any:
        from memlane.local.gateway import build_event

        if path in DOCS_PATHS and self.docs_unavailable is not None:
            raise ApiError(501, self.docs_unavailable)
        raw = json.dumps(body).encode() if body is not None else b""
        event = build_event(method, path, urlencode(query or {}), {"Content-Type": "application/json"}, raw,
                            self.authorizer, self.source_ip)
        result = self.dispatch(event)
        status = int(result["statusCode"])
        text = result.get("body") or ""
        if status >= 400:
            message = _error_message(status, text)
            if status == 404 and message.startswith("no route") and path in DOCS_PATHS:
                message = self.docs_unavailable or DOCS_NEED_A_SERVER
            raise ApiError(status, message)
        return json.loads(text) if text else {}

    def memory_graph(self, project_id: str | None) -> dict[str, Any]:
        return self.request("GET", "/v3/memory-graph", query={"project_id": project_id} if project_id else None)

    def close(self) -> None:
        pass


class DirectBackend(ResolverBackend):
    """A local data directory, opened in this process (no server needed), as the directory's
    default organization. Saves too large to process in the request are finished by an ingestion
    worker running alongside, and documentation sets are crawled by their runner here too (the
    queue is durable, so a crawl the MCP client's exit interrupts resumes in the next `memlane mcp`
    or `memlane serve`)."""

    def __init__(self, settings: Settings, org_name: str = "default", embedder: Any = None,
                 docsets: bool | None = None) -> None:
        """`docsets`: run documentation sets (their crawler included) in this process; None means
        whenever memlane.docsets is installed."""
        from memlane.api.app import MemlaneApi
        from memlane.api.auth import authorizer_context
        from memlane.domain.principal import Principal
        from memlane.local.compose import build_local
        from memlane.local.worker import IngestWorker
        from memlane.services.keys import ensure_organization

        self.stack = build_local(settings, embedder=embedder)
        self.worker = IngestWorker(self.stack.services, self.stack.queue)
        svc = replace(self.stack.services, on_enqueued=self.worker.wake)
        self.stack.services = self.worker.svc = svc
        self.worker.start()
        org, _ = ensure_organization(self.stack.metadata, org_name)
        self.who = Principal(organization_id=org.id, key_id="mcp-local", user_id="mcp")
        if docsets is None:
            docsets = importlib.util.find_spec("memlane.local.docsets") is not None
        self.docsets = None
        if docsets:
            from memlane.local.docsets import LocalDocsets

            private = os.environ.get("MEMLANE_ALLOW_PRIVATE_NETWORK") == "1"  # as `memlane serve`
            self.docsets = LocalDocsets(self.stack, allow_private_network=private)
            self.docsets.start()
        self.api = MemlaneApi(svc, docsets=self.docsets.context if self.docsets else None)
        super().__init__(self.api.handle, authorizer_context(self.who),
                         f"memlane data directory {settings.data_dir}",
                         docs_unavailable=None if self.docsets else DOCS_NEED_A_SERVER)

    def close(self) -> None:
        if self.docsets is not None:
            self.docsets.stop()
        self.worker.stop()
        self.stack.close()


def backend_from_env(data_dir: Path | None = None, env: dict[str, str] | None = None) -> Backend:
    """MEMLANE_API_URL (with MEMLANE_API_KEY) selects a server; without it, the data directory
    (`--data-dir`, MEMLANE_DATA_DIR or ~/.memlane). The spec's MEMORY_API_URL/MEMORY_API_KEY are
    accepted too, so its sample configuration works unchanged."""
    env = dict(os.environ if env is None else env)
    url = env.get("MEMLANE_API_URL") or env.get("MEMORY_API_URL")
    if url:
        return HttpBackend(url, env.get("MEMLANE_API_KEY") or env.get("MEMORY_API_KEY"))
    settings = Settings.from_env(data_dir=data_dir)
    return DirectBackend(settings, org_name=env.get("MEMLANE_ORG") or "default")
