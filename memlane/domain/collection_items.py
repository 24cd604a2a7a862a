"""What marks a document as an item of a raged collection (memlane.collections), and the tags
that let a collection's filters be pushed down to the search index. Shared by the collections API
and the connections that sync repositories into collections (memlane.connections.providers.repository)."""

from __future__ import annotations

from typing import Any

RAGED_KEY = "raged"  # Document.metadata[RAGED_KEY] holds the item's own fields
TAG_PREFIXES = ("raged-repo:", "raged-lang:", "raged-path:")
MAX_TAG_CHARS = 100


def item_tag(prefix: str, value: str) -> str | None:
    tag = f"{prefix}{value.lower()}"
    return tag if len(tag) <= MAX_TAG_CHARS else None


def path_prefix_tags(path: str) -> list[str]:
    """One tag per directory prefix (`src/`, `src/auth/`), so a `path` filter that names a
    directory is pushed down exactly."""
    parts = path.split("/")[:-1]
    prefixes = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]
    return [t for p in prefixes if (t := item_tag("raged-path:", p)) is not None]


def filter_tags_for(fields: dict[str, Any]) -> list[str]:
    tags: list[str] = []
    if isinstance(fields.get("repoId"), str) and (t := item_tag("raged-repo:", fields["repoId"])):
        tags.append(t)
    if isinstance(fields.get("lang"), str) and (t := item_tag("raged-lang:", fields["lang"])):
        tags.append(t)
    if isinstance(fields.get("path"), str):
        tags.extend(path_prefix_tags(fields["path"]))
    return tags
