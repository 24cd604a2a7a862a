"""Each API operation once, as a `Call`: what to send and what to take from the answer. The
synchronous and the asynchronous client both send these, so a route's path, body and defaults are
written in one place."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

OPENAPI_PATH = "/openapi.json"
MCP_PATH = "/mcp"
MCP_PROTOCOL_VERSION = "2025-11-25"


def _identity(answer: Any) -> Any:
    return answer


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    json: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    pick: Callable[[Any], Any] = field(default=_identity)


def seg(value: str) -> str:
    """One path segment: an id is never able to reach another route (`../keys`)."""
    return quote(value, safe="")


def given(**fields: Any) -> dict[str, Any]:
    """The fields that were given (None means "left out", the server's default applies)."""
    return {k: v for k, v in fields.items() if v is not None}


# ------------------------------------------------------------------------------ memories

def save(body: dict[str, Any], idempotency_key: str | None) -> Call:
    """POST /v3/memory, always with an Idempotency-Key (a fresh one unless given), so a retried
    save after a lost answer or a 5xx stores the memory once."""
    return Call("POST", "/v3/memory", body, headers={"Idempotency-Key": idempotency_key or str(uuid.uuid4())})


def remember(content: str, title: str | None, project_id: str | None, tags: list[str] | None,
             conversation_id: str | None, message_index: int | None, fields: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"content": content, **given(**fields)}
    body.update(given(title=title, project_id=project_id, conversation_id=conversation_id,
                      message_index=message_index))
    if tags:
        body.setdefault("metadata", {})["tags"] = list(tags)
    return body


def save_many(items: list[dict[str, Any]]) -> Call:
    """POST /v3/memories: up to 100 saves, each answered on its own. The bulk route takes no
    Idempotency-Key; an item sent twice is answered as a duplicate of the first (same content,
    same project)."""
    return Call("POST", "/v3/memories", {"items": items})


def recall(query: str, limit: int | None, project_id: str | None, project_ids: list[str] | None,
           filters: dict[str, Any] | None, min_relevance: float | None, fields: dict[str, Any],
           kind: str | list[str] | None = None, as_of: str | datetime | None = None) -> Call:
    """`kind` ("fact", "message", "memory", or a list) joins `filters.kind`; `as_of` (an ISO 8601
    time or a datetime) recalls what was current then (facts superseded since included)."""
    body = {"query": query, **given(**fields)}
    if kind is not None:
        filters = {**(filters or {}), "kind": [kind] if isinstance(kind, str) else list(kind)}
    body.update(given(limit=limit, project_id=project_id, project_ids=project_ids, filters=filters,
                      min_relevance=min_relevance, as_of=iso(as_of)))
    return Call("POST", "/v3/recall", body)


def iso(when: str | datetime | None) -> str | None:
    """A time as the API takes it: ISO 8601 (a naive datetime is taken as UTC by the server)."""
    return when.isoformat() if isinstance(when, datetime) else when


# ------------------------------------------------------------------------------ conversations and facts

def message(content: str, *, role: str | None = None, speaker: str | None = None,
            time: str | datetime | None = None, message_index: int | None = None) -> dict[str, Any]:
    """One message of a conversation save: its text and who said it (`role`: user, assistant,
    system or tool; `speaker`: a name; give one or both), when (`time`) and where (`message_index`)."""
    return {"content": content, **given(role=role, speaker=speaker, time=iso(time), message_index=message_index)}


def save_conversation(conversation_id: str, messages: list[dict[str, Any]], project_id: str | None,
                      subject: str | None, extract: bool | None, idempotency_key: str | None) -> Call:
    """POST /v3/conversations, always with an Idempotency-Key (a fresh one unless given): a save
    retried after a lost answer or a 5xx stores its messages and queues their extraction once."""
    body = {"conversation_id": conversation_id, "messages": messages,
            **given(project_id=project_id, subject=subject, extract=extract)}
    return Call("POST", "/v3/conversations", body, headers={"Idempotency-Key": idempotency_key or str(uuid.uuid4())})


def conversation(conversation_id: str, project_id: str | None, limit: int | None, cursor: str | None) -> Call:
    """GET /v3/conversations/{id}; an id with a `/` (never a path segment, even encoded, behind most
    proxies) as the query parameter of GET /v3/conversations."""
    params = given(project_id=project_id, limit=limit, cursor=cursor)
    if "/" in conversation_id:
        return Call("GET", "/v3/conversations", params={"conversation_id": conversation_id, **params})
    return Call("GET", f"/v3/conversations/{seg(conversation_id)}", params=params)


def extraction(extraction_id: str) -> Call:
    return Call("GET", f"/v3/extractions/{seg(extraction_id)}")


def profile(project_id: str | None, subject: str | None) -> Call:
    return Call("GET", "/v3/profile", params=given(project_id=project_id, subject=subject))


def context(body: dict[str, Any]) -> Call:
    return Call("POST", "/v3/context", body)


def document(document_id: str, include_versions: bool) -> Call:
    return Call("GET", f"/v3/documents/{seg(document_id)}",
                params={"include_versions": "true"} if include_versions else None)


def update_document(document_id: str, patch: dict[str, Any]) -> Call:
    return Call("PATCH", f"/v3/documents/{seg(document_id)}", patch)


def delete_document(document_id: str) -> Call:
    return Call("DELETE", f"/v3/documents/{seg(document_id)}")


def related(document_id: str, limit: int | None) -> Call:
    return Call("GET", f"/v3/documents/{seg(document_id)}/related", params=given(limit=limit))


def deletion(receipt_id: str) -> Call:
    return Call("GET", f"/v3/deletions/{seg(receipt_id)}")


def memory_graph(project_id: str | None, max_nodes: int | None, max_edges: int | None) -> Call:
    return Call("GET", "/v3/memory-graph", params=given(project_id=project_id, max_nodes=max_nodes,
                                                         max_edges=max_edges))


def forgotten(limit: int | None) -> Call:
    return Call("GET", "/v3/forgotten", params=given(limit=limit), pick=lambda r: r["forgotten"])


def stats() -> Call:
    return Call("GET", "/v3/stats")


# ------------------------------------------------------------------------------ projects

def projects() -> Call:
    return Call("GET", "/v3/projects", pick=lambda r: r["projects"])


def project(project_id: str) -> Call:
    return Call("GET", f"/v3/projects/{seg(project_id)}")


def create_project(name: str, fields: dict[str, Any]) -> Call:
    return Call("POST", "/v3/projects", {"name": name, **given(**fields)})


def update_project(project_id: str, patch: dict[str, Any]) -> Call:
    return Call("PATCH", f"/v3/projects/{seg(project_id)}", patch)


def delete_project(project_id: str) -> Call:
    return Call("DELETE", f"/v3/projects/{seg(project_id)}")


def project_documents(project_id: str, limit: int | None, cursor: str | None, include_versions: bool) -> Call:
    params = given(limit=limit, cursor=cursor)
    if include_versions:
        params["include_versions"] = "true"
    return Call("GET", f"/v3/projects/{seg(project_id)}/documents", params=params)


def project_matching(projects_: list[dict[str, Any]], wanted: str) -> str | None:
    for p in projects_:
        if wanted in (p.get("id"), p.get("name"), p.get("slug")):
            return str(p["id"])
    return None


# ------------------------------------------------------------------------------ identity and keys

def whoami() -> Call:
    return Call("GET", "/v3/whoami")


def keys() -> Call:
    return Call("GET", "/v3/keys", pick=lambda r: r["keys"])


def create_key(name: str, fields: dict[str, Any]) -> Call:
    return Call("POST", "/v3/keys", {"name": name, **given(**fields)})


def revoke_key(key_id: str) -> Call:
    return Call("DELETE", f"/v3/keys/{seg(key_id)}")


# ------------------------------------------------------------------------------ documentation sets

def docs_index(body: dict[str, Any]) -> Call:
    return Call("POST", "/index", body)


def docs_retrieve(body: dict[str, Any]) -> Call:
    return Call("POST", "/retrieve", body)


def docs_status(query: dict[str, Any]) -> Call:
    return Call("GET", "/status", params=query or None)


def docset(docset_id: str) -> Call:
    return Call("GET", f"/docset/{seg(docset_id)}")


def docset_pages(docset_id: str, status: str | None, limit: int, offset: int) -> Call:
    return Call("GET", f"/docset/{seg(docset_id)}/pages", params=given(status=status, limit=limit, offset=offset))


def docs_refresh(body: dict[str, Any]) -> Call:
    return Call("POST", "/refresh", body)


def delete_docset(docset_id: str) -> Call:
    return Call("DELETE", f"/docset/{seg(docset_id)}")


# ------------------------------------------------------------------------------ MCP tools over HTTP

def mcp_call(name: str, arguments: dict[str, Any]) -> Call:
    """POST /mcp `tools/call`: one of memlane's MCP tools, run by the server exactly as an MCP
    client would run it (the server is stateless: no session to open first). The answer is the
    tool's result: `content` (text blocks), `structuredContent`, `isError`."""
    message = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "tools/call",
               "params": {"name": name, "arguments": arguments}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MCP_PROTOCOL_VERSION}
    return Call("POST", MCP_PATH, message, headers=headers, pick=mcp_result)


def mcp_result(answer: Any) -> dict[str, Any]:
    from memlane_client.errors import MemlaneError

    if not isinstance(answer, dict):
        raise MemlaneError(200, f"the MCP endpoint answered {str(answer)[:200]!r}, not JSON-RPC", answer)
    if "error" in answer:
        error = answer["error"] or {}
        raise MemlaneError(200, str(error.get("message") or error), answer)
    result = answer.get("result")
    return result if isinstance(result, dict) else {}
