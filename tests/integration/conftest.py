from __future__ import annotations

import httpx
import pytest
from conftest_helpers import Running, free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.server import LocalServer


class RunningServer:
    def __init__(self, server: LocalServer, key: str) -> None:
        self.server = server
        self.key = key
        self.url = f"http://127.0.0.1:{server.port}"
        self.client = httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)

    def new_key(self, org: str) -> str:
        from memlane.services.keys import create_key

        secret, _, _ = create_key(self.server.stack.metadata, org)
        return secret

    def as_key(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


@pytest.fixture
def server(tmp_path, minilm):
    srv = LocalServer(
        Settings(data_dir=tmp_path / "data"), host="127.0.0.1", port=free_port(), embedder=minilm
    )
    key = srv.prepare()
    srv.start_in_thread()
    running = RunningServer(srv, key)
    yield running
    running.client.close()
    srv.shutdown()


@pytest.fixture
def hash_server(tmp_path):
    """A real local server on loopback with the hashing embedder: fast, for shapes and plumbing."""
    srv = LocalServer(Settings(data_dir=tmp_path / "hash-data"), host="127.0.0.1", port=free_port(),
                      embedder=HashEmbedder())
    key = srv.prepare()
    srv.start_in_thread()
    yield Running(srv, key, f"http://127.0.0.1:{srv.port}")
    srv.shutdown()
