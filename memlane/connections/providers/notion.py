"""Notion (https://developers.notion.com/reference): the pages and database rows shared with the
integration, as markdown.

Changes: `POST /v1/search` filtered to pages, sorted by `last_edited_time` descending, read until
the first page older than the cursor (Notion's timestamps have minute precision, so pages of the
cursor's own minute are read again and compared by content). Pages in the trash are deleted.
Deletions the search no longer shows (a page un-shared or trashed and purged) are found by a full
listing every RECONCILE_EVERY.

Content: `GET /v1/blocks/{id}/children`, paginated, nested blocks down to MAX_DEPTH, rendered as
markdown (headings, lists, to-dos, quotes, callouts, code, tables, toggles). A database row is a
page whose parent is a database: its properties come first, as a table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from memlane.connections.errors import ProviderItemError
from memlane.connections.oauth import OAuthSpec
from memlane.connections.providers.base import Batch, ProviderDefaults
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider, TokenSet
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType

NOTION_VERSION = "2022-06-28"
PAGE_SIZE = 100
MAX_DEPTH = 3
MAX_BLOCKS = 5000  # per page
RECONCILE_EVERY = timedelta(hours=1)


def page_id(notion_id: str) -> str:
    return f"page:{notion_id}"


def rich_text(parts: list[dict[str, Any]] | None) -> str:
    out = []
    for part in parts or []:
        text = part.get("plain_text") or (part.get("text") or {}).get("content") or ""
        annotations = part.get("annotations") or {}
        if annotations.get("code") and text:
            text = f"`{text}`"
        href = part.get("href")
        if href and text:
            text = f"[{text}]({href})"
        out.append(text)
    return "".join(out)


def page_title(page: dict[str, Any]) -> str:
    for prop in (page.get("properties") or {}).values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            return rich_text(prop.get("title")).strip() or "Untitled"
    return "Untitled"


def _user(value: dict[str, Any]) -> str:
    return value.get("name") or value.get("id", "")


# A database row's property as text, by the property's type; any other type as its value.
_PROPERTY_TEXT: dict[str, Callable[[Any], str]] = {
    "title": rich_text,
    "rich_text": rich_text,
    "select": lambda v: v.get("name", ""),
    "status": lambda v: v.get("name", ""),
    "multi_select": lambda v: ", ".join(o.get("name", "") for o in v),
    "date": lambda v: v.get("start", "") + (f" → {v['end']}" if v.get("end") else ""),
    "checkbox": lambda v: "yes" if v else "no",
    "people": lambda v: ", ".join(_user(p) for p in v),
    "relation": lambda v: f"{len(v)} linked",
    "formula": lambda v: str(v.get(v.get("type"), "")),
    "files": lambda v: ", ".join(f.get("name", "") for f in v),
    "created_by": _user,
    "last_edited_by": _user,
}


def property_value(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if not isinstance(kind, str) or prop.get(kind) is None:
        return ""
    return _PROPERTY_TEXT.get(kind, str)(prop[kind])


@dataclass(frozen=True)
class _Block:
    """One block as its Markdown lines need it: its data, its text, its indent and, in a numbered
    list, its number."""

    data: dict[str, Any]
    text: str
    indent: str
    number: int


def _link(b: _Block) -> list[str]:
    url = b.data.get("url", "")
    return [f"{b.indent}- [{rich_text(b.data.get('caption')) or url}]({url})"]


# A block's Markdown lines by its type (headings apart: heading_1..3); a type not named has none.
_BLOCK_LINES: dict[str, Callable[[_Block], list[str]]] = {
    "paragraph": lambda b: [f"{b.indent}{b.text}", ""] if b.text else [],
    "bulleted_list_item": lambda b: [f"{b.indent}- {b.text}"],
    "numbered_list_item": lambda b: [f"{b.indent}{b.number}. {b.text}"],
    "to_do": lambda b: [f"{b.indent}- [{'x' if b.data.get('checked') else ' '}] {b.text}"],
    "toggle": lambda b: [f"{b.indent}- {b.text}"],
    "quote": lambda b: [f"{b.indent}> {b.text}", ""],
    "callout": lambda b: [f"{b.indent}> {b.text}", ""],
    "code": lambda b: [f"```{b.data.get('language', '')}", b.text, "```", ""],
    "divider": lambda b: ["---", ""],
    "child_page": lambda b: [f"{b.indent}- Subpage: {b.data.get('title', '')}"],
    "child_database": lambda b: [f"{b.indent}- Database: {b.data.get('title', '')}"],
    "bookmark": _link,
    "embed": _link,
    "link_preview": _link,
}


def _block_lines(kind: str, b: _Block) -> list[str]:
    if kind.startswith("heading_"):
        level = kind[-1] if kind[-1].isdigit() else "2"
        return [f"{'#' * (int(level) + 1)} {b.text}", ""]
    return _BLOCK_LINES.get(kind, lambda _: [])(b)


class NotionProvider(ProviderDefaults):
    name: ClassVar[Provider] = Provider.NOTION
    api_url: ClassVar[str] = "https://api.notion.com"
    relists_everything: ClassVar[bool] = False
    oauth: ClassVar[OAuthSpec | None] = OAuthSpec(
        authorize_url="https://api.notion.com/v1/oauth/authorize",
        token_url="https://api.notion.com/v1/oauth/token",
        scopes=(),  # capabilities are set on the integration; the user picks the pages to share
        pkce=False,
        client_auth="basic",
        body_format="json",
        authorize_params={"owner": "user"},
    )

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        if options:
            raise InvalidInputError(f"options.{sorted(options)[0]}",
                                    "notion connections take no options: share pages with the integration")
        return {}

    def label(self, options: dict[str, Any], account: str | None) -> str:
        return f"Notion: {account}" if account else "Notion"

    def session_headers(self) -> dict[str, str]:
        return {"Notion-Version": NOTION_VERSION}

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        name = tokens.extra.get("workspace_name")
        return str(name) if name else None

    # ------------------------------------------------------------------ listing

    def _search(self, session: ProviderSession) -> Iterator[list[dict[str, Any]]]:
        body: dict[str, Any] = {"filter": {"property": "object", "value": "page"},
                                "sort": {"direction": "descending", "timestamp": "last_edited_time"},
                                "page_size": PAGE_SIZE}
        while True:
            answer = session.post_json("/v1/search", body)
            yield answer.get("results") or []
            if not answer.get("has_more") or not answer.get("next_cursor"):
                return
            body = {**body, "start_cursor": answer["next_cursor"]}

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        since = conn.cursor.get("since")
        newest = since
        refs: list[ItemRef] = []
        deletes: list[str] = []
        done = False
        for results in self._search(session):
            for page in results:
                edited = page.get("last_edited_time") or ""
                if since and edited < since:
                    done = True
                    break
                newest = max(newest or "", edited)
                if page.get("in_trash") or page.get("archived"):
                    deletes.append(page_id(page["id"]))
                else:
                    refs.append(ItemRef(external_id=page_id(page["id"]), version=edited,
                                        hint={"page": page, "recheck": bool(since and edited == since)}))
            if done:
                break
        now = session.clock.now()
        if since is None:  # a first sync lists everything: that listing is also the reconciliation
            yield Batch(upserts=refs, deletes=deletes, reconcile=("page:", {r.external_id for r in refs}),
                        cursor={"since": newest, "reconciled_at": now.isoformat()})
            return
        yield Batch(upserts=refs, deletes=deletes, cursor={"since": newest})
        reconciled = conn.cursor.get("reconciled_at")
        if reconciled is None or datetime.fromisoformat(reconciled) + RECONCILE_EVERY <= now:
            present = {page_id(p["id"]) for results in self._search(session) for p in results
                       if not (p.get("in_trash") or p.get("archived"))}
            yield Batch(reconcile=("page:", present), cursor={"reconciled_at": now.isoformat()})

    # ------------------------------------------------------------------ reading a page

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        notion_id = ref.external_id[len("page:"):]
        page = ref.hint.get("page")
        if page is None:
            try:
                page = session.get_json(f"/v1/pages/{notion_id}")
            except ProviderItemError as exc:
                if exc.gone:
                    return None
                raise
        if page.get("in_trash") or page.get("archived"):
            return None
        title = page_title(page)
        lines = [f"# {title}", ""]
        parent = page.get("parent") or {}
        if parent.get("type") == "database_id":
            rows = [(name, property_value(p)) for name, p in (page.get("properties") or {}).items()
                    if isinstance(p, dict) and p.get("type") != "title"]
            if rows:
                lines += ["| Property | Value |", "| --- | --- |"]
                lines += [f"| {_cell(name)} | {_cell(value)} |" for name, value in rows]
                lines.append("")
        counter = [0]
        lines += self._blocks(session, notion_id, 0, counter)
        text = "\n".join(lines).strip() + "\n"
        return Item(
            external_id=ref.external_id,
            version=page.get("last_edited_time"),
            title=title[:500],
            content=text,
            content_type=ContentType.MARKDOWN,
            source_url=page.get("url"),
            metadata={"notion_id": notion_id, "kind": "database_row" if parent.get("type") == "database_id" else "page",
                      **({"database_id": parent["database_id"]} if parent.get("database_id") else {})},
            tags=["notion", "database-row" if parent.get("type") == "database_id" else "page"],
        )

    def _children(self, session: ProviderSession, block_id: str) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] = {"page_size": PAGE_SIZE}
        while True:
            answer = session.get_json(f"/v1/blocks/{block_id}/children", params=params)
            yield from answer.get("results") or []
            if not answer.get("has_more") or not answer.get("next_cursor"):
                return
            params = {"page_size": PAGE_SIZE, "start_cursor": answer["next_cursor"]}

    def _blocks(self, session: ProviderSession, block_id: str, depth: int, counter: list[int]) -> list[str]:
        """The Markdown of a block's children, nested ones indented, at most MAX_BLOCKS in all."""
        lines: list[str] = []
        number = 0
        for block in self._children(session, block_id):
            counter[0] += 1
            if counter[0] > MAX_BLOCKS:
                break
            kind = block.get("type", "")
            number = number + 1 if kind == "numbered_list_item" else 0  # any other block ends a list
            if kind == "table":
                lines += self._table(session, block["id"])
                continue
            data = block.get(kind) or {}
            lines += _block_lines(kind, _Block(data, rich_text(data.get("rich_text")), "  " * depth, number))
            if block.get("has_children") and depth < MAX_DEPTH and kind not in ("child_page", "child_database"):
                lines += self._blocks(session, block["id"], depth + 1, counter)
        return lines

    def _table(self, session: ProviderSession, block_id: str) -> list[str]:
        rows = [[_cell(rich_text(cell)) for cell in (row.get("table_row") or {}).get("cells", [])]
                for row in self._children(session, block_id) if row.get("type") == "table_row"]
        if not rows:
            return []
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        return ["| " + " | ".join(rows[0]) + " |", "| " + " | ".join(["---"] * width) + " |",
                *("| " + " | ".join(r) + " |" for r in rows[1:]), ""]


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ").strip()
