"""What the local server answers an HTTP request with (the gateway's and the web app's replies)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GatewayResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    # Names this exact body when it is a file's (path, modification time, size): its compressed
    # form can be kept and reused (memlane.local.compression). None for answers made per request.
    cache_key: str | None = None
