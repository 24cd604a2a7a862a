"""The MCP tools against a memlane server over the network (`memlane mcp` with MEMLANE_API_URL),
through the Python client package (memlane_client). Kept apart from memlane.mcp.backend so that
the API's own /mcp route, which answers in process, never needs the client."""

from __future__ import annotations

from typing import Any

from memlane_client import MemlaneClient, MemlaneError, MemlaneUnreachable

from memlane.mcp.backend import DOCS_PATHS, MEMORY_GRAPH_PATH, ApiError


class HttpBackend:
    """A memlane server (local `memlane serve` or a deployed stack), through memlane_client."""

    def __init__(self, url: str, api_key: str | None, client: MemlaneClient | None = None) -> None:
        self.client = client or MemlaneClient(url, api_key)
        self.url = self.client.base_url
        self.description = f"memlane API at {self.url}"

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                query: dict[str, str] | None = None) -> Any:
        try:
            return self.client.request(method, path, json=body, params=query)
        except MemlaneUnreachable as exc:
            raise ApiError(0, f"cannot reach memlane at {self.url}: {exc.reason}") from exc
        except MemlaneError as exc:
            # A 404 is "this server has no such route" only when its route table says so: an
            # unknown docset or project is a 404 too, and is reported as the server words it.
            if exc.status == 404 and path in DOCS_PATHS and not self.client.serves(path):
                raise ApiError(404, f"this memlane server does not serve documentation sets ({exc.error})") from exc
            raise ApiError(exc.status, exc.error) from exc

    def memory_graph(self, project_id: str | None) -> dict[str, Any]:
        query = {"project_id": project_id} if project_id else None
        try:
            return self.request("GET", MEMORY_GRAPH_PATH, query=query)
        except ApiError as exc:
            if exc.status == 404 and not self.client.serves(MEMORY_GRAPH_PATH):
                raise ApiError(404, f"this memlane server has no memory graph yet ({exc.message})") from exc
            raise

    def close(self) -> None:
        self.client.close()
