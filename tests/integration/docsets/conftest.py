"""Fixtures for the docset tests; the site and server helpers live in docsets_site.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # docsets_site, shared by this directory's tests

from docsets_site import DocsSite, Running, build_site, start_server  # noqa: E402


@pytest.fixture
def site() -> Iterator[DocsSite]:
    s = DocsSite()
    build_site(s)
    yield s
    s.close()


@pytest.fixture
def docs_server(tmp_path) -> Iterator[Running]:
    running = start_server(tmp_path / "data")
    yield running
    running.client.close()
    running.server.shutdown()


@pytest.fixture
def public_server(tmp_path) -> Iterator[Running]:
    """A server with the default policy: loopback and private targets refused."""
    running = start_server(tmp_path / "public", allow_private_network=False)
    yield running
    running.client.close()
    running.server.shutdown()
