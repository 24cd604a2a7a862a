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
def start_server(tmp_path):
    """Starts real local servers on loopback (hashing embedder) with the given serve options."""
    started: list[LocalServer] = []

    def start(**options) -> Running:
        srv = LocalServer(Settings(data_dir=tmp_path / f"data{len(started)}"), host="127.0.0.1",
                          port=free_port(), embedder=HashEmbedder(), **options)
        key = srv.prepare()
        srv.start_in_thread()
        started.append(srv)
        return Running(srv, key, f"http://127.0.0.1:{srv.port}")

    yield start
    for srv in started:
        srv.shutdown()
