"""What the local server answers an HTTP request with (the gateway's and the web app's replies)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GatewayResponse:
    status: int
    headers: dict[str, str]
    body: bytes
