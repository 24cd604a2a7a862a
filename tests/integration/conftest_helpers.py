from __future__ import annotations

import socket
from dataclasses import dataclass

import httpx

from memlane.local.server import LocalServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Running:
    """A local server started by a test, with a client factory for its key (or none)."""

    server: LocalServer
    key: str
    url: str

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {key or self.key}"} if key != "" else {}
        return httpx.Client(base_url=self.url, headers={**auth, **headers}, timeout=60)
