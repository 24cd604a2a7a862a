"""Data directories prepared the way a user fills them: memories saved through `memlane mcp`'s
tools over the data directory, with the hashing embedder (tests/fakes.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.mcp import local_backend
from memlane.mcp.tools import MemlaneTools


def save_memories(data_dir: Path, contents: Iterable[str]) -> None:
    """Save each text as a memory in `data_dir` and close it again."""
    backend = local_backend(Settings(data_dir=data_dir), embedder=HashEmbedder(), docsets=False)
    try:
        tools = MemlaneTools(backend)
        for content in contents:
            tools.call("memory", {"content": content})
    finally:
        backend.close()
