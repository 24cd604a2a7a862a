"""raged's item metadata on a memlane document: where the item's own fields live
(`Document.metadata[RAGED_KEY]`) and the filter tags (`raged-repo:`, `raged-lang:`, `raged-path:`)
that let a raged `/query` filter be pushed down to the search legs.

On the ground floor because two features write it: collections (raged's own ingest) and the
repository connections (a repository's files as raged items).
"""

from __future__ import annotations

from typing import Any

RAGED_KEY = "raged"  # Document.metadata[RAGED_KEY] holds the item's own fields
TAG_PREFIXES = ("raged-repo:", "raged-lang:", "raged-path:")
MAX_TAG_CHARS = 100


def filter_tag(prefix: str, value: str) -> str | None:
    """`<prefix><value>` in lowercase, or None when it is too long to be a tag."""
    tag = f"{prefix}{value.lower()}"
    return tag if len(tag) <= MAX_TAG_CHARS else None


def path_prefix_tags(path: str) -> list[str]:
    """One tag per directory prefix (`src/`, `src/auth/`), so a `path` filter that names a
    directory is pushed down exactly."""
    parts = path.split("/")[:-1]
    prefixes = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]
    return [t for p in prefixes if (t := filter_tag("raged-path:", p)) is not None]


def filter_tags_for(fields: dict[str, Any]) -> list[str]:
    """The filter tags of an item with these raged fields (`repoId`, `lang`, `path`)."""
    tags: list[str] = []
    if isinstance(fields.get("repoId"), str) and (t := filter_tag("raged-repo:", fields["repoId"])):
        tags.append(t)
    if isinstance(fields.get("lang"), str) and (t := filter_tag("raged-lang:", fields["lang"])):
        tags.append(t)
    if isinstance(fields.get("path"), str):
        tags.extend(path_prefix_tags(fields["path"]))
    return tags
