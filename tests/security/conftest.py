"""The security suite (issue 21, docs/security.md): each finding of the attack on a3b7283 replayed,
with the class it belongs to. Fast: the hashing embedder, a real local server on loopback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest_helpers import Running, free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.local.server import LocalServer


@pytest.fixture
def open_umask():
    """The umask most machines start with: files 0644, directories 0755 unless memlane says otherwise."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / "data"


@pytest.fixture
def secure_server(data_dir, open_umask):
    srv = LocalServer(Settings(data_dir=data_dir), host="127.0.0.1", port=free_port(), embedder=HashEmbedder())
    key = srv.prepare()
    srv.start_in_thread()
    yield Running(srv, key, f"http://127.0.0.1:{srv.port}")
    srv.shutdown()


# The connection tests' fake GitHub and their World (a local stack with a GitHub connection).
sys.path.insert(0, str(Path(__file__).parents[1] / "integration" / "connections"))


@pytest.fixture(scope="module")
def fake():
    from fake_github import FakeGitHub

    f = FakeGitHub().start()
    yield f
    f.stop()


@pytest.fixture
def github_world(tmp_path, fake):
    """`make(repo, files)`: a World whose GitHub holds one repository with these files."""
    from connection_world import World

    from memlane.domain.connections import Provider

    worlds = []

    def make(repo: str, files: dict[str, bytes]):
        fake.reset_data()
        fake.repo(repo).files.update(files)
        worlds.append(World(tmp_path, fake, Provider.GITHUB))
        return worlds[-1]

    yield make
    for w in worlds:
        w.close()
