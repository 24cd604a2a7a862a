"""The framework integrations' tests, run in their own environment (.venv-integrations, which holds
langchain-core and llama-index-core; the main environment never does) by
tests/integration/clients/test_framework_integrations.py, against the local server it starts
(MEMLANE_URL, MEMLANE_API_KEY).

Nothing here may reach the internet: before any framework is imported, every socket is limited to
loopback, so a package that fetches tokenizer or NLTK data on import or first use fails the run."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address, *args, **kwargs):  # type: ignore[no-untyped-def]
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            allowed = ipaddress.ip_address(host).is_loopback
        except ValueError:
            allowed = host == "localhost"
        if not allowed:
            raise OSError(f"network access to {host} refused: the integrations must work offline")
    return _connect(self, address, *args, **kwargs)


_getaddrinfo = socket.getaddrinfo


def _resolve_loopback_only(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    name = host.decode() if isinstance(host, bytes) else host
    if name not in (None, "localhost"):
        try:
            loopback = ipaddress.ip_address(name).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise OSError(f"name resolution of {name} refused: the integrations must work offline")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _loopback_only  # type: ignore[method-assign]
socket.getaddrinfo = _resolve_loopback_only
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def memlane():
    from memlane_client import MemlaneClient

    url, key = os.environ.get("MEMLANE_URL"), os.environ.get("MEMLANE_API_KEY")
    if not url:
        pytest.fail("MEMLANE_URL is not set: run these through tests/integration/clients/test_framework_integrations.py")
    with MemlaneClient(url, key, timeout=30) as client:
        yield client
