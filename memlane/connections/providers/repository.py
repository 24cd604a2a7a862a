"""A repository's files as items, for GitHub and for a local git clone alike.

Which files: every blob of the branch's tree except vendored and build folders, lock files,
binaries and files over MAX_FILE_BYTES (raged's indexer draws the same lines). How: prose (README,
docs) as markdown or text; everything else as `code`, kept verbatim and chunked at function and
class boundaries by its language. Each file carries raged's repository metadata — `repoId`,
`path`, `lang` (raged's short language names: `py`, `ts`, `md`) — so raged's `/query` with a
`repoId`, `lang` or `path` filter finds it in the connection's project.

The version of a file is its git blob SHA: the same in GitHub's tree, its contents API and a
local `git ls-tree`, so a file a webhook already wrote is not fetched again by the periodic sync.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from memlane.domain.collection_items import RAGED_KEY, filter_tags_for
from memlane.domain.connections import Item
from memlane.domain.models import ContentType

MAX_FILE_BYTES = 500_000
DEFAULT_MAX_FILES = 4000
SKIPPED_DIRS = frozenset({".git", "node_modules", "dist", "build", "target", ".next", ".cache", "vendor",
                          "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache", "coverage"})
SKIPPED_FILES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "cargo.lock",
                           "composer.lock", "gemfile.lock", "uv.lock", "go.sum"})
BINARY_EXTENSIONS = frozenset({
    "png", "jpg", "jpeg", "gif", "webp", "ico", "bmp", "tiff", "pdf", "zip", "gz", "tgz", "tar", "7z", "bz2",
    "xz", "jar", "war", "whl", "egg", "so", "dylib", "dll", "exe", "bin", "o", "a", "class", "pyc", "mp3",
    "mp4", "mov", "wav", "ogg", "webm", "woff", "woff2", "ttf", "otf", "eot", "psd", "sqlite", "db", "parquet",
    "npy", "pkl", "onnx", "pt", "h5",
})  # fmt: skip
PROSE_EXTENSIONS = {"md": ContentType.MARKDOWN, "markdown": ContentType.MARKDOWN, "mdx": ContentType.MARKDOWN,
                    "rst": ContentType.TEXT, "txt": ContentType.TEXT, "adoc": ContentType.TEXT}
# raged's `lang` is the file's short language name (its indexer's extToLang); others keep the extension.
RAGED_LANG = {"markdown": "md", "mdx": "md", "yml": "yaml", "txt": "text", "rst": "text"}


def file_id(repo_id: str, path: str) -> str:
    return f"{repo_id}:file:{path}"


def extension(path: str) -> str:
    base = posixpath.basename(path).lower()
    return base.rsplit(".", 1)[1] if "." in base.lstrip(".") else ""


def raged_lang(path: str) -> str:
    ext = extension(path)
    return RAGED_LANG.get(ext, ext) if ext else "text"


def wanted(path: str, size: int | None, options: Mapping[str, Any]) -> bool:
    """Whether a file of the tree is synced (by its path and size alone, before reading it)."""
    parts = path.split("/")
    if any(p in SKIPPED_DIRS for p in parts[:-1]):
        return False
    name = parts[-1].lower()
    if name in SKIPPED_FILES or extension(path) in BINARY_EXTENSIONS:
        return False
    if size is not None and size > MAX_FILE_BYTES:
        return False
    include = options.get("include") or []
    exclude = options.get("exclude") or []
    if include and not any(path.startswith(p) for p in include):
        return False
    return not any(path.startswith(p) for p in exclude)


def decode_text(data: bytes) -> str | None:
    """The file as text, or None when it is binary (a NUL byte, or not UTF-8)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def file_item(*, repo_id: str, repo_url: str, path: str, blob_sha: str, text: str, source_url: str,
              provider_tag: str) -> Item:
    """A file as an item: raged's metadata, the language for function-level chunking, and tags
    (`repo:<id>`, `lang:<lang>`, raged's filter tags) that recall can filter on."""
    from memlane.ingest.extract import detect_language  # bs4 and lxml: off the API's cold start

    ext = extension(path)
    prose = PROSE_EXTENSIONS.get(ext)
    lang = raged_lang(path)
    language = None if prose else detect_language(text, title=path)
    fields = {"baseId": f"{repo_id}:{path}", "source": f"{repo_url}#{path}", "repoId": repo_id, "path": path,
              "lang": lang}
    synthetic = filter_tags_for(fields)
    metadata: dict[str, Any] = {"repoId": repo_id, "repoUrl": repo_url, "path": path, "lang": lang,
                                "bytes": len(text.encode("utf-8")), "blob_sha": blob_sha,
                                RAGED_KEY: {**fields, "tags": synthetic}}
    if language:
        metadata["language"] = language
    readme = posixpath.basename(path).lower().startswith("readme")
    tags = [provider_tag, f"repo:{repo_id.lower()}", *synthetic, *(["readme"] if readme else [])]
    return Item(
        external_id=file_id(repo_id, path),
        version=blob_sha,
        title=path,
        content=text,
        content_type=prose or ContentType.CODE,
        source_url=source_url,
        metadata=metadata,
        tags=tags,
        summarize=bool(prose),  # prose gets a summary; code is verbatim, chunked by function
    )
