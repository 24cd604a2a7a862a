from __future__ import annotations

import pytest
from conftest_helpers import Running, free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.server import LocalServer


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
