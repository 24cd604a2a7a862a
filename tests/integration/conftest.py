from __future__ import annotations

import socket

import httpx
import pytest

from memlane.config import Settings
from memlane.local.server import LocalServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    srv = LocalServer(Settings(data_dir=tmp_path / "data"), host="127.0.0.1", port=free_port(), embedder=minilm)
    key = srv.prepare()
    srv.start_in_thread()
    running = RunningServer(srv, key)
    yield running
    running.client.close()
    srv.shutdown()
