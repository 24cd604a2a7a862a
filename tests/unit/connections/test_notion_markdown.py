"""A Notion page as the Markdown memlane saves: every block type the adapter renders (nested lists,
numbering that restarts, to-dos, code, links, tables) and every property type of a database row,
read from a scripted session that answers Notion's block-children listing."""

from __future__ import annotations

from typing import Any

from memlane.connections.providers import adapter_for
from memlane.domain.connections import ItemRef


def text(content: str) -> list[dict[str, Any]]:
    return [{"type": "text", "plain_text": content, "annotations": {}}]


def block(kind: str, content: str = "", children: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    data = {"rich_text": text(content), **extra} if kind not in ("divider", "table", "table_row") else extra
    return {"id": f"{kind}-{content}", "type": kind, kind: data, "has_children": bool(children),
            "_children": children or []}


class Session:
    """Answers GET /v1/blocks/<id>/children with the blocks under that id, in one page."""

    def __init__(self, root: str, blocks: list[dict[str, Any]]) -> None:
        self.tree = {root: blocks}
        todo = list(blocks)
        while todo:
            b = todo.pop()
            self.tree[b["id"]] = b["_children"]
            todo += b["_children"]

    def get_json(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"results": self.tree.get(path.split("/")[3], []), "has_more": False}


def test_a_database_row_page_becomes_markdown_with_its_properties_and_every_block_kind():
    # Given a database row with a property of each type, and a body of each block type
    blocks = [
        block("heading_1", "Runbook"), block("heading_3", "Deep"), block("paragraph", "Intro words"),
        block("paragraph", ""),
        block("bulleted_list_item", "Laptop", children=[block("to_do", "VPN", checked=True), block("to_do", "Badge")]),
        block("numbered_list_item", "One"), block("numbered_list_item", "Two"), block("toggle", "More"),
        block("numbered_list_item", "Again"),
        block("quote", "Said"), block("callout", "Note"), block("code", "print(1)", language="python"),
        block("divider"), block("child_page", "", title="Sub"), block("child_database", "", title="Db"),
        block("bookmark", "", url="https://a.example", caption=text("A")), block("embed", "", url="https://b.example"),
        block("link_preview", "", url="https://c.example"), block("unsupported", "ignored"),
        block("numbered_list_item", "Before"),
        block("table", children=[block("table_row", cells=[text("k"), text("v|w")]),
                                 block("table_row", cells=[text("x")])]),
        block("numbered_list_item", "After"),
    ]
    props = {
        "Name": {"type": "title", "title": text("Deal")}, "Notes": {"type": "rich_text", "rich_text": text("n")},
        "Stage": {"type": "select", "select": {"name": "Won"}}, "State": {"type": "status", "status": {"name": "Done"}},
        "Tags": {"type": "multi_select", "multi_select": [{"name": "a"}, {"name": "b"}]},
        "Close": {"type": "date", "date": {"start": "2025-06-30", "end": "2025-07-02"}},
        "Open": {"type": "date", "date": {"start": "2025-01-01"}},
        "Paid": {"type": "checkbox", "checkbox": True}, "Lost": {"type": "checkbox", "checkbox": False},
        "Owners": {"type": "people", "people": [{"name": "Ana"}, {"id": "u2"}]},
        "Links": {"type": "relation", "relation": [{"id": "1"}, {"id": "2"}]},
        "Score": {"type": "formula", "formula": {"type": "number", "number": 7}},
        "Files": {"type": "files", "files": [{"name": "a.pdf"}]},
        "By": {"type": "created_by", "created_by": {"name": "Bo"}},
        "Edit": {"type": "last_edited_by", "last_edited_by": {"id": "u9"}},
        "Count": {"type": "number", "number": 3}, "Empty": {"type": "select", "select": None}, "Odd": {"type": None},
    }
    page = {"id": "p1", "url": "https://notion.so/p1", "last_edited_time": "2025-01-01T00:00:00.000Z",
            "parent": {"type": "database_id", "database_id": "db1"}, "properties": props}
    # When it is fetched
    item = adapter_for("notion").fetch(Session("p1", blocks), None, ItemRef(external_id="page:p1", hint={"page": page}))
    # Then its Markdown holds the properties as a table, then the blocks in order
    assert item is not None and item.content == EXPECTED


EXPECTED = """# Deal

| Property | Value |
| --- | --- |
| Notes | n |
| Stage | Won |
| State | Done |
| Tags | a, b |
| Close | 2025-06-30 → 2025-07-02 |
| Open | 2025-01-01 |
| Paid | yes |
| Lost | no |
| Owners | Ana, u2 |
| Links | 2 linked |
| Score | 7 |
| Files | a.pdf |
| By | Bo |
| Edit | u9 |
| Count | 3 |
| Empty |  |
| Odd |  |

## Runbook

#### Deep

Intro words

- Laptop
  - [x] VPN
  - [ ] Badge
1. One
2. Two
- More
1. Again
> Said

> Note

```python
print(1)
```

---

- Subpage: Sub
- Database: Db
- [A](https://a.example)
- [https://b.example](https://b.example)
- [https://c.example](https://c.example)
1. Before
| k | v\\|w |
| --- | --- |
| x |  |

1. After
"""
