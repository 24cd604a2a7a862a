from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest
from conftest_helpers import free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.server import LocalServer


@dataclass
class Running:
    server: LocalServer
    key: str
    url: str

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {key or self.key}"} if key != "" else {}
        return httpx.Client(base_url=self.url, headers={**auth, **headers}, timeout=60)


@pytest.fixture
def hash_server(tmp_path):
    """A real local server on loopback with the hashing embedder: fast, for shapes and plumbing."""
    srv = LocalServer(Settings(data_dir=tmp_path / "data"), host="127.0.0.1", port=free_port(),
                      embedder=HashEmbedder())
    key = srv.prepare()
    srv.start_in_thread()
    yield Running(srv, key, f"http://127.0.0.1:{srv.port}")
    srv.shutdown()
