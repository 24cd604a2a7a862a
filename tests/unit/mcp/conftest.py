from __future__ import annotations

import pytest
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.mcp import local_backend
from memlane.mcp.tools import MemlaneTools


@pytest.fixture
def backend(tmp_path):
    b = local_backend(Settings(data_dir=tmp_path / "data"), embedder=HashEmbedder())
    yield b
    b.close()


@pytest.fixture
def tools(backend) -> MemlaneTools:
    return MemlaneTools(backend)
