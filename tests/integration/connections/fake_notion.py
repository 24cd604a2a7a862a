"""Notion's API on loopback, from https://developers.notion.com/reference: `POST /v1/search` (pages,
sorted by last_edited_time, `start_cursor`/`has_more`/`next_cursor`), `GET /v1/pages/{id}`,
`GET /v1/blocks/{id}/children` (paginated, nested), the `Notion-Version` header, and the OAuth
token endpoint (JSON body, HTTP Basic client authentication, `workspace_name` in the answer).
Trashed pages leave the search results, as they do at Notion. Timestamps have minute precision."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fake_provider import FakeProvider, Reply, Request, json_reply


def text(content: str) -> list[dict[str, Any]]:
    return [{"type": "text", "plain_text": content, "text": {"content": content}, "annotations": {}}]


def block(kind: str, content: str = "", children: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    data = {"rich_text": text(content), **extra} if kind not in ("divider", "table", "table_row") else extra
    return {"id": str(uuid.uuid4()), "type": kind, kind: data, "has_children": bool(children),
            "_children": children or []}


@dataclass
class Page:
    id: str
    title: str
    blocks: list[dict[str, Any]]
    last_edited_time: str
    database_id: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    in_trash: bool = False


class FakeNotion(FakeProvider):
    token_ttl_s = None  # Notion's access tokens do not expire by time
    token_body_format = "json"
    client_auth = "basic"
    page_size_cap = 2

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self._tick = datetime(2025, 3, 1, tzinfo=UTC)
        super().__init__()

    def reset_data(self) -> None:
        self.pages.clear()
        self.reset()

    def edit_time(self) -> str:
        self._tick += timedelta(minutes=1)
        return self._tick.strftime("%Y-%m-%dT%H:%M:00.000Z")

    def add_page(self, title: str, blocks: list[dict[str, Any]], database_id: str | None = None,
                 properties: dict[str, Any] | None = None) -> Page:
        page = Page(str(uuid.uuid4()), title, blocks, self.edit_time(), database_id, properties or {})
        self.pages[page.id] = page
        return page

    def edit(self, page: Page, blocks: list[dict[str, Any]]) -> None:
        page.blocks = blocks
        page.last_edited_time = self.edit_time()

    def token_answer(self, pair: dict[str, Any], first: bool) -> dict[str, Any]:
        return {**pair, "bot_id": "bot-1", "workspace_id": "ws-1", "workspace_name": "Acme HQ",
                "owner": {"type": "user", "user": {"id": "u-1"}}}

    def setup_routes(self) -> None:
        self.route("POST", r"/v1/search", self.search)
        self.route("GET", r"/v1/pages/(?P<id>[^/]+)", self.get_page)
        self.route("GET", r"/v1/blocks/(?P<id>[^/]+)/children", self.children)

    def dispatch(self, request: Request) -> Reply:
        if request.path.startswith("/v1/") and not request.path.startswith("/v1/oauth") \
                and not request.header("Notion-Version"):
            return json_reply({"object": "error", "code": "missing_version"}, 400)
        return super().dispatch(request)

    def _page_json(self, page: Page) -> dict[str, Any]:
        props = {"Name": {"type": "title", "title": text(page.title)}, **page.properties}
        parent = {"type": "database_id", "database_id": page.database_id} if page.database_id \
            else {"type": "workspace", "workspace": True}
        return {"object": "page", "id": page.id, "last_edited_time": page.last_edited_time, "parent": parent,
                "properties": props, "url": f"https://www.notion.so/{page.id.replace('-', '')}",
                "in_trash": page.in_trash, "archived": page.in_trash}

    def _paginate(self, items: list[Any], cursor: str | None, size: int) -> dict[str, Any]:
        start = int(cursor or 0)
        size = min(size, self.page_size_cap)
        chunk = items[start : start + size]
        more = start + size < len(items)
        return {"object": "list", "results": chunk, "has_more": more, "next_cursor": str(start + size) if more else None}

    def search(self, request: Request) -> Reply:
        body = request.json()
        pages = [p for p in self.pages.values() if not p.in_trash]
        descending = (body.get("sort") or {}).get("direction") != "ascending"
        pages.sort(key=lambda p: p.last_edited_time, reverse=descending)
        return json_reply(self._paginate([self._page_json(p) for p in pages], body.get("start_cursor"),
                                         int(body.get("page_size") or 100)))

    def get_page(self, request: Request) -> Reply:
        page = self.pages.get(request.match["id"])
        if page is None:
            return json_reply({"object": "error", "status": 404, "code": "object_not_found"}, 404)
        return json_reply(self._page_json(page))

    def _find_block(self, block_id: str, blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
        for b in blocks:
            if b["id"] == block_id:
                return b
            found = self._find_block(block_id, b.get("_children") or [])
            if found:
                return found
        return None

    def children(self, request: Request) -> Reply:
        block_id = request.match["id"]
        if block_id in self.pages:
            kids = self.pages[block_id].blocks
        else:
            parent = next((b for p in self.pages.values() if (b := self._find_block(block_id, p.blocks))), None)
            if parent is None:
                return json_reply({"object": "error", "status": 404, "code": "object_not_found"}, 404)
            kids = parent["_children"]
        visible = [{k: v for k, v in b.items() if k != "_children"} for b in kids]
        return json_reply(self._paginate(visible, request.arg("start_cursor"), int(request.arg("page_size", "100"))))
