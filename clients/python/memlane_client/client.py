"""`MemlaneClient`: one synchronous client for memlane's HTTP API (a local `memlane serve` or a
deployed stack). `request` is the one way out; the typed methods are thin wrappers over it, named
after what the CLI and the MCP tools call."""

from __future__ import annotations

import json as jsonlib
from typing import Any
from urllib.parse import quote

import httpx

from memlane_client.errors import MemlaneError, MemlaneUnreachable, error_text

DEFAULT_TIMEOUT_S = 120.0
OPENAPI_PATH = "/openapi.json"


class MemlaneClient:
    """`base_url` of the API, `api_key` sent as a Bearer token (none for a server run with
    --no-auth), `timeout` in seconds. `transport` replaces the network (httpx.MockTransport in
    tests). Use as a context manager, or call `close()`."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT_S, *,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)
        self._routes: frozenset[str] | None = None

    # ------------------------------------------------------------------------------ the one way out

    def request(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Any:
        """The decoded JSON answer ({} for an empty one). MemlaneError for an HTTP error (its
        status and the server's `error` text), MemlaneUnreachable when no answer came."""
        try:
            r = self.http.request(method, path, json=json, params=_params(params), headers=headers)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise MemlaneUnreachable(self.base_url, str(exc) or type(exc).__name__) from exc
        body = _decode(r)
        if r.status_code >= 400:
            raise MemlaneError(r.status_code, error_text(r.status_code, body, r.text), body, dict(r.headers))
        return body if body is not None else {}

    def openapi(self) -> dict[str, Any]:
        """The server's OpenAPI document ({} when it publishes none)."""
        try:
            doc = self.request("GET", OPENAPI_PATH)
        except MemlaneUnreachable:
            raise
        except MemlaneError:
            return {}
        return doc if isinstance(doc, dict) else {}

    def schema_fields(self, schema: str) -> frozenset[str]:
        """The properties of one of the server's request or answer schemas (e.g. "MemoryIn"), from
        its OpenAPI document: what this server accepts, to use a newer field only where it exists."""
        schemas = (self.openapi().get("components") or {}).get("schemas") or {}
        props = (schemas.get(schema) or {}).get("properties") if isinstance(schemas, dict) else None
        return frozenset(props) if isinstance(props, dict) else frozenset()

    def routes(self) -> frozenset[str]:
        """The paths this server routes (from its OpenAPI document, read once). Empty when the
        server publishes none."""
        if self._routes is None:
            try:
                doc = self.request("GET", OPENAPI_PATH)
            except MemlaneError:
                doc = None
            paths = doc.get("paths") if isinstance(doc, dict) else None
            self._routes = frozenset(paths) if isinstance(paths, dict) else frozenset()
        return self._routes

    def serves(self, path: str) -> bool:
        """Whether this server has a route for `path` (a concrete path without parameters)."""
        return path in self.routes()

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> MemlaneClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------ memories

    def save(self, body: dict[str, Any], *, idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /v3/memory with a complete body (content, title, project_id, metadata, ...)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self.request("POST", "/v3/memory", body, headers=headers)

    def remember(self, content: str, *, title: str | None = None, project_id: str | None = None,
                 tags: list[str] | None = None, idempotency_key: str | None = None,
                 **fields: Any) -> dict[str, Any]:
        """Save `content`; other MemoryIn fields (forget_after, content_type, metadata, ...) as keywords."""
        body: dict[str, Any] = {"content": content, **{k: v for k, v in fields.items() if v is not None}}
        if title is not None:
            body["title"] = title
        if project_id is not None:
            body["project_id"] = project_id
        if tags:
            body.setdefault("metadata", {})["tags"] = tags
        return self.save(body, idempotency_key=idempotency_key)

    def recall(self, query: str, *, limit: int | None = None, project_id: str | None = None,
               **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, **{k: v for k, v in fields.items() if v is not None}}
        if limit is not None:
            body["limit"] = limit
        if project_id is not None:
            body["project_id"] = project_id
        return self.request("POST", "/v3/recall", body)

    def context(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/v3/context", body)

    def document(self, document_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v3/documents/{quote(document_id, safe='')}")

    def delete_document(self, document_id: str) -> dict[str, Any]:
        """DELETE /v3/documents/{id}: {"id", "deleted", "receipt"} (the receipt of every store read back)."""
        return self.request("DELETE", f"/v3/documents/{quote(document_id, safe='')}")

    def deletion(self, receipt_id: str) -> dict[str, Any]:
        """GET /v3/deletions/{id}: a deletion receipt read again."""
        return self.request("GET", f"/v3/deletions/{quote(receipt_id, safe='')}")

    def memory_graph(self, project_id: str | None = None) -> dict[str, Any]:
        return self.request("GET", "/v3/memory-graph", params={"project_id": project_id})

    # ------------------------------------------------------------------------------ projects

    def projects(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v3/projects")["projects"]

    def create_project(self, name: str, **fields: Any) -> dict[str, Any]:
        return self.request("POST", "/v3/projects", {"name": name, **fields})

    def delete_project(self, project_id: str) -> dict[str, Any]:
        """DELETE /v3/projects/{id}: the project and every document in it, with their receipt."""
        return self.request("DELETE", f"/v3/projects/{quote(project_id, safe='')}")

    def project_id(self, wanted: str, *, create: bool = True) -> str | None:
        """The id of the project whose id, name or slug is `wanted`; created when new (`create`)."""
        for p in self.projects():
            if wanted in (p.get("id"), p.get("name"), p.get("slug")):
                return p["id"]
        return self.create_project(wanted)["id"] if create else None

    # ------------------------------------------------------------------------------ identity and keys

    def whoami(self) -> dict[str, Any]:
        return self.request("GET", "/v3/whoami")

    def keys(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v3/keys")["keys"]

    def create_key(self, name: str, **fields: Any) -> dict[str, Any]:
        return self.request("POST", "/v3/keys", {"name": name, **fields})

    def revoke_key(self, key_id: str) -> dict[str, Any]:
        return self.request("DELETE", f"/v3/keys/{quote(key_id, safe='')}")

    # ------------------------------------------------------------------------------ documentation sets

    def docs_index(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/index", body)

    def docs_retrieve(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/retrieve", body)

    def docs_status(self, **query: Any) -> dict[str, Any]:
        return self.request("GET", "/status", params=query or None)

    def docset(self, docset_id: str) -> dict[str, Any]:
        """One docset and its index status (GET /docset/{id})."""
        return self.request("GET", f"/docset/{quote(docset_id, safe='')}")

    def docset_pages(self, docset_id: str, *, status: str | None = None, limit: int = 100,
                     offset: int = 0) -> dict[str, Any]:
        return self.request("GET", f"/docset/{quote(docset_id, safe='')}/pages",
                            params={"status": status, "limit": limit, "offset": offset})

    def docs_refresh(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /refresh: docsetId or baseUrl, with force, maxAge and fullReindex."""
        return self.request("POST", "/refresh", body)

    def delete_docset(self, docset_id: str) -> dict[str, Any]:
        return self.request("DELETE", f"/docset/{quote(docset_id, safe='')}")


def _params(params: dict[str, Any] | None) -> dict[str, Any] | None:
    if not params:
        return None
    out = {k: v for k, v in params.items() if v is not None}
    return out or None


def _decode(r: httpx.Response) -> Any:
    if not r.content:
        return None
    try:
        return r.json()
    except (ValueError, jsonlib.JSONDecodeError):
        return r.text
