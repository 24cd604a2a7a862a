"""`MemlaneClient` (synchronous) and `AsyncMemlaneClient`: memlane's HTTP API (a local `memlane
serve` or a deployed stack) over httpx. `request` is the one way out of each; the typed methods
send the operations of memlane_client.calls, written once for both. 429 and 5xx answers are sent
again with backoff, honouring Retry-After (memlane_client.retry); every save carries an
Idempotency-Key, so a retried save stores its memory once."""

from __future__ import annotations

import asyncio
import json as jsonlib
import time
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any, cast

import httpx

from memlane_client import calls
from memlane_client.calls import OPENAPI_PATH, Call
from memlane_client.errors import MemlaneError, MemlaneUnreachable, error_for, error_text
from memlane_client.models import (
    API_VERSION,
    ContextOut,
    ConversationMessageOut,
    ConversationMessagesOut,
    ConversationOut,
    DeletedOut,
    DeletionReceipt,
    DocumentListItem,
    DocumentListOut,
    DocumentOut,
    ExtractionOut,
    ForgottenRecord,
    KeyCreatedOut,
    KeyOut,
    KeyRevokedOut,
    MemoryGraphOut,
    MemoryOut,
    PageOut,
    PagesOut,
    ProfileOut,
    ProjectDeletedOut,
    ProjectOut,
    RecallOut,
    RelatedOut,
    StatsOut,
    WhoAmIOut,
)
from memlane_client.retry import RetryPolicy

DEFAULT_TIMEOUT_S = 120.0
USER_AGENT = f"memlane-client-python (API {API_VERSION})"

Timeout = float | httpx.Timeout


class _Base:
    """What both clients share: the connection settings, the retry policy, and turning an answer
    into a value or a typed error."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: Timeout = DEFAULT_TIMEOUT_S, *,
                 max_retries: int | None = None, retry: RetryPolicy | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        policy = retry or RetryPolicy()
        if max_retries is not None:
            policy = RetryPolicy(max_retries=max_retries, base=policy.base, max_backoff=policy.max_backoff,
                                 max_wait=policy.max_wait, statuses=policy.statuses)
        self.retry = policy
        self._headers = {"User-Agent": USER_AGENT, **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._routes: frozenset[str] | None = None

    def _answer(self, r: httpx.Response) -> Any:
        body = _decode(r)
        if r.status_code >= 400:
            raise error_for(r.status_code, error_text(r.status_code, body, r.text), body, dict(r.headers))
        return body if body is not None else {}

    def _unreachable(self, exc: Exception) -> MemlaneUnreachable:
        return MemlaneUnreachable(self.base_url, str(exc) or type(exc).__name__)

    def _wait(self, attempt: int, exc: MemlaneError, headers: dict[str, str] | None) -> float | None:
        """Seconds before the next attempt, or None when this error is final."""
        idempotent_save = bool(headers and "Idempotency-Key" in headers)
        if not self.retry.should_retry(attempt, exc.status, exc.error, idempotent_save):
            return None
        return self.retry.delay(attempt, exc.headers.get("retry-after"))

    def _set_routes(self, doc: Any) -> frozenset[str]:
        paths = doc.get("paths") if isinstance(doc, dict) else None
        self._routes = frozenset(paths) if isinstance(paths, dict) else frozenset()
        return self._routes


class MemlaneClient(_Base):
    """`base_url` of the API, `api_key` sent as a Bearer token (none for a server run with
    --no-auth), `timeout` in seconds (or an httpx.Timeout); `max_retries` (default 2) or a whole
    `retry` policy; `transport` replaces the network (httpx.MockTransport in tests). Use as a
    context manager, or call `close()`."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: Timeout = DEFAULT_TIMEOUT_S, *,
                 max_retries: int | None = None, retry: RetryPolicy | None = None,
                 headers: dict[str, str] | None = None, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url, api_key, timeout, max_retries=max_retries, retry=retry, headers=headers)
        self.http = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport)

    # ------------------------------------------------------------------------------ the one way out

    def request(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Any:
        """The decoded JSON answer ({} for an empty one). A typed MemlaneError for an HTTP error
        (its status and the server's `error` text) once retries are spent, MemlaneUnreachable
        when no answer came."""
        attempt = 0
        while True:
            try:
                r = self.http.request(method, path, json=json, params=calls.given(**(params or {})) or None,
                                      headers=headers)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise self._unreachable(exc) from exc
            try:
                return self._answer(r)
            except MemlaneError as exc:
                wait = self._wait(attempt, exc, headers)
                if wait is None:
                    raise
            time.sleep(wait)
            attempt += 1

    def _do(self, call: Call) -> Any:
        return call.pick(self.request(call.method, call.path, call.json, call.params, call.headers))

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
        return _schema_fields(self.openapi(), schema)

    def routes(self) -> frozenset[str]:
        """The paths this server routes (from its OpenAPI document, read once). Empty when the
        server publishes none."""
        if self._routes is None:
            try:
                doc = self.request("GET", OPENAPI_PATH)
            except MemlaneError:  # unreachable too: nothing is known to be routed
                doc = None
            return self._set_routes(doc)
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

    def save(self, body: dict[str, Any], *, idempotency_key: str | None = None) -> MemoryOut:
        """POST /v3/memory with a complete body (content, title, project_id, metadata, ...). An
        Idempotency-Key goes with it (a new one unless given): pass your own to make a save
        that your program may repeat (after a crash) store the memory once."""
        return cast(MemoryOut, self._do(calls.save(body, idempotency_key)))

    def remember(self, content: str, *, title: str | None = None, project_id: str | None = None,
                 tags: list[str] | None = None, conversation_id: str | None = None,
                 message_index: int | None = None, idempotency_key: str | None = None,
                 **fields: Any) -> MemoryOut:
        """Save `content`; other MemoryIn fields (forget_after, content_type, metadata, ...) as keywords."""
        body = calls.remember(content, title, project_id, tags, conversation_id, message_index, fields)
        return self.save(body, idempotency_key=idempotency_key)

    def save_many(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        """POST /v3/memories: up to 100 save bodies, each answered on its own (`results`)."""
        return cast(dict[str, Any], self._do(calls.save_many(items)))

    def recall(self, query: str, *, limit: int | None = None, project_id: str | None = None,
               project_ids: list[str] | None = None, filters: dict[str, Any] | None = None,
               min_relevance: float | None = None, kind: str | list[str] | None = None,
               as_of: str | datetime | None = None, **fields: Any) -> RecallOut:
        """POST /v3/recall: `filters` (content_type, created_after, tags, kind), `min_relevance` (the
        relevance floor for this request; 0 returns every candidate), `kind` ("fact", "message",
        "memory" or a list of them), `as_of` (what was current at that time)."""
        return cast(RecallOut, self._do(calls.recall(query, limit, project_id, project_ids, filters,
                                                     min_relevance, fields, kind, as_of)))

    def context(self, body: dict[str, Any]) -> ContextOut:
        """POST /v3/context with a complete body."""
        return cast(ContextOut, self._do(calls.context(body)))

    def context_pack(self, query: str, *, budget: int | None = None, budget_unit: str | None = None,
                     projects: list[str] | None = None, docsets: list[str] | None = None,
                     min_relevance: float | None = None) -> ContextOut:
        """Memories and documentation for `query`, packed best first into `budget` (`text`)."""
        return self.context(calls.given(query=query, budget=budget, budget_unit=budget_unit, projects=projects,
                                        docsets=docsets, min_relevance=min_relevance))

    def document(self, document_id: str, *, include_versions: bool = False) -> DocumentOut:
        return cast(DocumentOut, self._do(calls.document(document_id, include_versions)))

    def update_document(self, document_id: str, patch: dict[str, Any]) -> DocumentOut:
        """PATCH /v3/documents/{id}: title, tags, forget_after."""
        return cast(DocumentOut, self._do(calls.update_document(document_id, patch)))

    def delete_document(self, document_id: str) -> DeletedOut:
        """DELETE /v3/documents/{id}: {"id", "deleted", "receipt"} (the receipt of every store read back)."""
        return cast(DeletedOut, self._do(calls.delete_document(document_id)))

    def related(self, document_id: str, *, limit: int | None = None) -> RelatedOut:
        return cast(RelatedOut, self._do(calls.related(document_id, limit)))

    def deletion(self, receipt_id: str) -> DeletionReceipt:
        """GET /v3/deletions/{id}: a deletion receipt read again."""
        return cast(DeletionReceipt, self._do(calls.deletion(receipt_id)))

    def memory_graph(self, project_id: str | None = None, *, max_nodes: int | None = None,
                     max_edges: int | None = None) -> MemoryGraphOut:
        return cast(MemoryGraphOut, self._do(calls.memory_graph(project_id, max_nodes, max_edges)))

    def forgotten(self, *, limit: int | None = None) -> list[ForgottenRecord]:
        return cast(list[ForgottenRecord], self._do(calls.forgotten(limit)))

    def stats(self) -> StatsOut:
        return cast(StatsOut, self._do(calls.stats()))

    # ------------------------------------------------------------------------------ conversations and facts

    def save_conversation(self, conversation_id: str, messages: list[dict[str, Any]], *,
                          project_id: str | None = None, subject: str | None = None, extract: bool | None = None,
                          idempotency_key: str | None = None) -> ConversationOut:
        """POST /v3/conversations: `messages` in the order they were said, each {"content", "role"
        and/or "speaker", "time"?, "message_index"?} (memlane_client.message builds one). With an LLM
        configured on the server, `extraction.status` is "queued" and `extraction(id)` follows it;
        without one it is "off" with the reason. Sent with an Idempotency-Key (a new one unless
        given), so a retried save stores the messages and queues the extraction once."""
        return cast(ConversationOut, self._do(calls.save_conversation(
            conversation_id, messages, project_id, subject, extract, idempotency_key)))

    def conversation(self, conversation_id: str, *, project_id: str | None = None, limit: int | None = None,
                     cursor: str | None = None) -> ConversationMessagesOut:
        """GET /v3/conversations/{id}: one page of its messages in order (`next_cursor`: the next page's).
        NotFound when the project holds no message of it."""
        return cast(ConversationMessagesOut, self._do(calls.conversation(conversation_id, project_id, limit, cursor)))

    def iter_conversation(self, conversation_id: str, *, project_id: str | None = None,
                          page_size: int = 100) -> Iterator[ConversationMessageOut]:
        """Every message of a conversation, in order, a page at a time."""
        cursor: str | None = None
        while True:
            page = self.conversation(conversation_id, project_id=project_id, limit=page_size, cursor=cursor)
            yield from page["messages"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def extraction(self, extraction_id: str) -> ExtractionOut:
        """GET /v3/extractions/{id}: the extraction's status and every fact it drew, with the decision."""
        return cast(ExtractionOut, self._do(calls.extraction(extraction_id)))

    def profile(self, *, project_id: str | None = None, subject: str | None = None) -> ProfileOut:
        """GET /v3/profile: stable facts and recent context of a project, or of one person in it (`subject`)."""
        return cast(ProfileOut, self._do(calls.profile(project_id, subject)))

    # ------------------------------------------------------------------------------ projects

    def projects(self) -> list[ProjectOut]:
        return cast(list[ProjectOut], self._do(calls.projects()))

    def project(self, project_id: str) -> ProjectOut:
        return cast(ProjectOut, self._do(calls.project(project_id)))

    def create_project(self, name: str, **fields: Any) -> ProjectOut:
        return cast(ProjectOut, self._do(calls.create_project(name, fields)))

    def update_project(self, project_id: str, patch: dict[str, Any]) -> ProjectOut:
        return cast(ProjectOut, self._do(calls.update_project(project_id, patch)))

    def delete_project(self, project_id: str) -> ProjectDeletedOut:
        """DELETE /v3/projects/{id}: the project and every document in it, with their receipt."""
        return cast(ProjectDeletedOut, self._do(calls.delete_project(project_id)))

    def project_id(self, wanted: str, *, create: bool = True) -> str | None:
        """The id of the project whose id, name or slug is `wanted`; created when new (`create`)."""
        found = calls.project_matching(cast(list[dict[str, Any]], self.projects()), wanted)
        if found is not None or not create:
            return found
        return self.create_project(wanted)["id"]

    def project_documents(self, project_id: str, *, limit: int | None = None, cursor: str | None = None,
                          include_versions: bool = False) -> DocumentListOut:
        """One page of a project's documents, newest first (`next_cursor`: the next page's cursor)."""
        return cast(DocumentListOut, self._do(calls.project_documents(project_id, limit, cursor, include_versions)))

    def iter_project_documents(self, project_id: str, *, page_size: int = 100,
                               include_versions: bool = False) -> Iterator[DocumentListItem]:
        """Every document of a project, newest first, a page at a time (following `next_cursor`)."""
        cursor: str | None = None
        while True:
            page = self.project_documents(project_id, limit=page_size, cursor=cursor,
                                          include_versions=include_versions)
            yield from page["documents"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    # ------------------------------------------------------------------------------ identity and keys

    def whoami(self) -> WhoAmIOut:
        return cast(WhoAmIOut, self._do(calls.whoami()))

    def keys(self) -> list[KeyOut]:
        return cast(list[KeyOut], self._do(calls.keys()))

    def create_key(self, name: str, **fields: Any) -> KeyCreatedOut:
        return cast(KeyCreatedOut, self._do(calls.create_key(name, fields)))

    def revoke_key(self, key_id: str) -> KeyRevokedOut:
        return cast(KeyRevokedOut, self._do(calls.revoke_key(key_id)))

    # ------------------------------------------------------------------------------ documentation sets

    def docs_index(self, body: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], self._do(calls.docs_index(body)))

    def docs_retrieve(self, body: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], self._do(calls.docs_retrieve(body)))

    def docs_status(self, **query: Any) -> dict[str, Any]:
        return cast(dict[str, Any], self._do(calls.docs_status(query)))

    def docset(self, docset_id: str) -> dict[str, Any]:
        """One docset and its index status (GET /docset/{id})."""
        return cast(dict[str, Any], self._do(calls.docset(docset_id)))

    def docset_pages(self, docset_id: str, *, status: str | None = None, limit: int = 100,
                     offset: int = 0) -> PagesOut:
        return cast(PagesOut, self._do(calls.docset_pages(docset_id, status, limit, offset)))

    def iter_docset_pages(self, docset_id: str, *, status: str | None = None,
                          page_size: int = 100) -> Iterator[PageOut]:
        """Every crawled page of a docset, `page_size` at a time (following `offset` to `total`)."""
        offset = 0
        while True:
            page = self.docset_pages(docset_id, status=status, limit=page_size, offset=offset)
            yield from page["pages"]
            offset += len(page["pages"])
            if not page["pages"] or offset >= page["total"]:
                return

    def docs_refresh(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /refresh: docsetId or baseUrl, with force, maxAge and fullReindex."""
        return cast(dict[str, Any], self._do(calls.docs_refresh(body)))

    def delete_docset(self, docset_id: str) -> dict[str, Any]:
        return cast(dict[str, Any], self._do(calls.delete_docset(docset_id)))

    # ------------------------------------------------------------------------------ MCP tools

    def mcp_call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one of memlane's MCP tools through POST /mcp (memlane_client.openai_tools uses it)."""
        return cast(dict[str, Any], self._do(calls.mcp_call(name, arguments or {})))


class AsyncMemlaneClient(_Base):
    """MemlaneClient's methods, awaited (httpx.AsyncClient); the same arguments, answers, errors and
    retries. Use as an async context manager, or `await aclose()`."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: Timeout = DEFAULT_TIMEOUT_S, *,
                 max_retries: int | None = None, retry: RetryPolicy | None = None,
                 headers: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(base_url, api_key, timeout, max_retries=max_retries, retry=retry, headers=headers)
        self.http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=timeout,
                                      transport=transport)

    async def request(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None,
                      headers: dict[str, str] | None = None) -> Any:
        """As MemlaneClient.request."""
        attempt = 0
        while True:
            try:
                r = await self.http.request(method, path, json=json, params=calls.given(**(params or {})) or None,
                                            headers=headers)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise self._unreachable(exc) from exc
            try:
                return self._answer(r)
            except MemlaneError as exc:
                wait = self._wait(attempt, exc, headers)
                if wait is None:
                    raise
            await asyncio.sleep(wait)
            attempt += 1

    async def _do(self, call: Call) -> Any:
        return call.pick(await self.request(call.method, call.path, call.json, call.params, call.headers))

    async def openapi(self) -> dict[str, Any]:
        try:
            doc = await self.request("GET", OPENAPI_PATH)
        except MemlaneUnreachable:
            raise
        except MemlaneError:
            return {}
        return doc if isinstance(doc, dict) else {}

    async def schema_fields(self, schema: str) -> frozenset[str]:
        return _schema_fields(await self.openapi(), schema)

    async def routes(self) -> frozenset[str]:
        if self._routes is None:
            try:
                doc = await self.request("GET", OPENAPI_PATH)
            except MemlaneError:  # unreachable too: nothing is known to be routed
                doc = None
            return self._set_routes(doc)
        return self._routes

    async def serves(self, path: str) -> bool:
        return path in await self.routes()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def close(self) -> None:
        await self.aclose()

    async def __aenter__(self) -> AsyncMemlaneClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------------------ memories

    async def save(self, body: dict[str, Any], *, idempotency_key: str | None = None) -> MemoryOut:
        return cast(MemoryOut, await self._do(calls.save(body, idempotency_key)))

    async def remember(self, content: str, *, title: str | None = None, project_id: str | None = None,
                       tags: list[str] | None = None, conversation_id: str | None = None,
                       message_index: int | None = None, idempotency_key: str | None = None,
                       **fields: Any) -> MemoryOut:
        body = calls.remember(content, title, project_id, tags, conversation_id, message_index, fields)
        return await self.save(body, idempotency_key=idempotency_key)

    async def save_many(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.save_many(items)))

    async def recall(self, query: str, *, limit: int | None = None, project_id: str | None = None,
                     project_ids: list[str] | None = None, filters: dict[str, Any] | None = None,
                     min_relevance: float | None = None, kind: str | list[str] | None = None,
                     as_of: str | datetime | None = None, **fields: Any) -> RecallOut:
        return cast(RecallOut, await self._do(calls.recall(query, limit, project_id, project_ids, filters,
                                                           min_relevance, fields, kind, as_of)))

    async def context(self, body: dict[str, Any]) -> ContextOut:
        return cast(ContextOut, await self._do(calls.context(body)))

    async def context_pack(self, query: str, *, budget: int | None = None, budget_unit: str | None = None,
                           projects: list[str] | None = None, docsets: list[str] | None = None,
                           min_relevance: float | None = None) -> ContextOut:
        return await self.context(calls.given(query=query, budget=budget, budget_unit=budget_unit,
                                              projects=projects, docsets=docsets, min_relevance=min_relevance))

    async def document(self, document_id: str, *, include_versions: bool = False) -> DocumentOut:
        return cast(DocumentOut, await self._do(calls.document(document_id, include_versions)))

    async def update_document(self, document_id: str, patch: dict[str, Any]) -> DocumentOut:
        return cast(DocumentOut, await self._do(calls.update_document(document_id, patch)))

    async def delete_document(self, document_id: str) -> DeletedOut:
        return cast(DeletedOut, await self._do(calls.delete_document(document_id)))

    async def related(self, document_id: str, *, limit: int | None = None) -> RelatedOut:
        return cast(RelatedOut, await self._do(calls.related(document_id, limit)))

    async def deletion(self, receipt_id: str) -> DeletionReceipt:
        return cast(DeletionReceipt, await self._do(calls.deletion(receipt_id)))

    async def memory_graph(self, project_id: str | None = None, *, max_nodes: int | None = None,
                           max_edges: int | None = None) -> MemoryGraphOut:
        return cast(MemoryGraphOut, await self._do(calls.memory_graph(project_id, max_nodes, max_edges)))

    async def forgotten(self, *, limit: int | None = None) -> list[ForgottenRecord]:
        return cast(list[ForgottenRecord], await self._do(calls.forgotten(limit)))

    async def stats(self) -> StatsOut:
        return cast(StatsOut, await self._do(calls.stats()))

    # ------------------------------------------------------------------------------ conversations and facts

    async def save_conversation(self, conversation_id: str, messages: list[dict[str, Any]], *,
                                project_id: str | None = None, subject: str | None = None,
                                extract: bool | None = None, idempotency_key: str | None = None) -> ConversationOut:
        return cast(ConversationOut, await self._do(calls.save_conversation(
            conversation_id, messages, project_id, subject, extract, idempotency_key)))

    async def conversation(self, conversation_id: str, *, project_id: str | None = None, limit: int | None = None,
                           cursor: str | None = None) -> ConversationMessagesOut:
        return cast(ConversationMessagesOut,
                    await self._do(calls.conversation(conversation_id, project_id, limit, cursor)))

    async def iter_conversation(self, conversation_id: str, *, project_id: str | None = None,
                                page_size: int = 100) -> AsyncIterator[ConversationMessageOut]:
        cursor: str | None = None
        while True:
            page = await self.conversation(conversation_id, project_id=project_id, limit=page_size, cursor=cursor)
            for message in page["messages"]:
                yield message
            cursor = page.get("next_cursor")
            if not cursor:
                return

    async def extraction(self, extraction_id: str) -> ExtractionOut:
        return cast(ExtractionOut, await self._do(calls.extraction(extraction_id)))

    async def profile(self, *, project_id: str | None = None, subject: str | None = None) -> ProfileOut:
        return cast(ProfileOut, await self._do(calls.profile(project_id, subject)))

    # ------------------------------------------------------------------------------ projects

    async def projects(self) -> list[ProjectOut]:
        return cast(list[ProjectOut], await self._do(calls.projects()))

    async def project(self, project_id: str) -> ProjectOut:
        return cast(ProjectOut, await self._do(calls.project(project_id)))

    async def create_project(self, name: str, **fields: Any) -> ProjectOut:
        return cast(ProjectOut, await self._do(calls.create_project(name, fields)))

    async def update_project(self, project_id: str, patch: dict[str, Any]) -> ProjectOut:
        return cast(ProjectOut, await self._do(calls.update_project(project_id, patch)))

    async def delete_project(self, project_id: str) -> ProjectDeletedOut:
        return cast(ProjectDeletedOut, await self._do(calls.delete_project(project_id)))

    async def project_id(self, wanted: str, *, create: bool = True) -> str | None:
        found = calls.project_matching(cast(list[dict[str, Any]], await self.projects()), wanted)
        if found is not None or not create:
            return found
        return (await self.create_project(wanted))["id"]

    async def project_documents(self, project_id: str, *, limit: int | None = None, cursor: str | None = None,
                                include_versions: bool = False) -> DocumentListOut:
        return cast(DocumentListOut, await self._do(calls.project_documents(project_id, limit, cursor,
                                                                            include_versions)))

    async def iter_project_documents(self, project_id: str, *, page_size: int = 100,
                                     include_versions: bool = False) -> AsyncIterator[DocumentListItem]:
        cursor: str | None = None
        while True:
            page = await self.project_documents(project_id, limit=page_size, cursor=cursor,
                                                include_versions=include_versions)
            for item in page["documents"]:
                yield item
            cursor = page.get("next_cursor")
            if not cursor:
                return

    # ------------------------------------------------------------------------------ identity and keys

    async def whoami(self) -> WhoAmIOut:
        return cast(WhoAmIOut, await self._do(calls.whoami()))

    async def keys(self) -> list[KeyOut]:
        return cast(list[KeyOut], await self._do(calls.keys()))

    async def create_key(self, name: str, **fields: Any) -> KeyCreatedOut:
        return cast(KeyCreatedOut, await self._do(calls.create_key(name, fields)))

    async def revoke_key(self, key_id: str) -> KeyRevokedOut:
        return cast(KeyRevokedOut, await self._do(calls.revoke_key(key_id)))

    # ------------------------------------------------------------------------------ documentation sets

    async def docs_index(self, body: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.docs_index(body)))

    async def docs_retrieve(self, body: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.docs_retrieve(body)))

    async def docs_status(self, **query: Any) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.docs_status(query)))

    async def docset(self, docset_id: str) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.docset(docset_id)))

    async def docset_pages(self, docset_id: str, *, status: str | None = None, limit: int = 100,
                           offset: int = 0) -> PagesOut:
        return cast(PagesOut, await self._do(calls.docset_pages(docset_id, status, limit, offset)))

    async def iter_docset_pages(self, docset_id: str, *, status: str | None = None,
                                page_size: int = 100) -> AsyncIterator[PageOut]:
        offset = 0
        while True:
            page = await self.docset_pages(docset_id, status=status, limit=page_size, offset=offset)
            for item in page["pages"]:
                yield item
            offset += len(page["pages"])
            if not page["pages"] or offset >= page["total"]:
                return

    async def docs_refresh(self, body: dict[str, Any]) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.docs_refresh(body)))

    async def delete_docset(self, docset_id: str) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.delete_docset(docset_id)))

    # ------------------------------------------------------------------------------ MCP tools

    async def mcp_call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return cast(dict[str, Any], await self._do(calls.mcp_call(name, arguments or {})))


def _schema_fields(document: dict[str, Any], schema: str) -> frozenset[str]:
    schemas = (document.get("components") or {}).get("schemas") or {}
    props = (schemas.get(schema) or {}).get("properties") if isinstance(schemas, dict) else None
    return frozenset(props) if isinstance(props, dict) else frozenset()


def _decode(r: httpx.Response) -> Any:
    if not r.content:
        return None
    try:
        return r.json()
    except (ValueError, jsonlib.JSONDecodeError):
        return r.text
