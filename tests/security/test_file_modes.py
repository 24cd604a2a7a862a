"""Finding 1: the data directory is private to its owner whatever the umask: 0700, files 0600,
created with that mode (never written first and tightened), and `memlane doctor` repairs drift."""

from __future__ import annotations

import contextlib
import os
import stat
import threading

import pytest

from memlane.adapters.local import private_files, vector_ann
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.adapters.local.token_vault import FileTokenVault
from memlane.config import Settings
from memlane.local.compose import build_local
from memlane.local.doctor import examine


def modes(root) -> dict[str, int]:
    return {str(p.relative_to(root.parent)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}


def assert_private(root) -> None:
    found = modes(root)
    assert found[root.name] == 0o700, found
    for name, mode in found.items():
        if name != root.name:
            assert mode == (0o700 if (root.parent / name).is_dir() else 0o600), (name, oct(mode))


def test_after_a_save_everything_in_the_data_directory_is_private(secure_server, data_dir):
    # Given a server started under umask 022, When a memory is saved and a connection's secret sealed
    with secure_server.client() as c:
        assert c.post("/v3/memory", json={"content": "The spare key is under the blue flowerpot."}).status_code in (
            200, 201, 202)
    secure_server.server.stack.services.connections.vault.seal({"k": "v"}, b"token")
    # Then the directory, the database and its -wal/-shm, the key file and the vault key are private
    names = set(modes(data_dir))
    assert {"data/memlane.sqlite3", "data/memlane.sqlite3-wal", "data/local-api-key"} <= names
    assert any("key" in n and n != "data/local-api-key" for n in names)  # the token vault's key
    assert_private(data_dir)


def test_the_database_file_is_never_visible_to_others_even_briefly(tmp_path, open_umask):
    # Given a watcher that records the mode of every file the moment it appears
    seen: dict[str, int] = {}
    done = threading.Event()
    root = tmp_path / "d"

    def watch():
        while not done.is_set():
            if root.exists():
                for p in root.iterdir():
                    with contextlib.suppress(FileNotFoundError):
                        seen.setdefault(p.name, stat.S_IMODE(p.stat().st_mode))

    t = threading.Thread(target=watch)
    t.start()
    try:
        db = SqliteDatabase(root / "x.sqlite3")
        db.set_meta("k", "v")
        private_files.write_private(root / "secret", b"s")
    finally:
        done.set()
        t.join()
    db.close()
    assert seen and all(m & 0o077 == 0 for m in seen.values()), seen


def test_write_private_tightens_an_existing_file_before_writing(tmp_path):
    path = tmp_path / "k"
    path.write_text("old")
    os.chmod(path, 0o644)
    private_files.write_private(path, b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_bytes() == b"new"


def test_the_token_vault_key_is_created_private(tmp_path, open_umask):
    vault = FileTokenVault(tmp_path / "v")
    vault.seal({"a": "b"}, b"x")
    assert stat.S_IMODE(vault.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(vault.path.parent.stat().st_mode) == 0o700


def test_doctor_reports_and_repairs_wrong_modes(tmp_path, open_umask, hash_embedder):
    # Given a data directory left open by an older version
    data = tmp_path / "data"
    stack = build_local(Settings(data_dir=data), embedder=hash_embedder)
    os.chmod(data, 0o755)
    os.chmod(data / "memlane.sqlite3", 0o644)
    (data / "stray.txt").write_text("x")
    try:
        # When the doctor looks, Then it names each wrong path
        report = examine(stack)
        assert len(report.wrong_modes) == 3 and report.total >= 3 and not report.repaired
        assert report.as_dict()["wrong_modes"] == 3
        # And with --repair it makes them private
        fixed = examine(stack, repair=True)
        assert fixed.repaired
        assert examine(stack).wrong_modes == []
        assert_private(data)
    finally:
        stack.close()


def test_after_a_crawl_everything_is_private(tmp_path, open_umask):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "integration" / "docsets"))
    from docsets_site import DocsSite, build_site, index, start_server

    site = DocsSite()
    build_site(site)
    running = start_server(tmp_path / "data")
    try:
        docset_id = index(running, site)["docsetId"]
        running.wait_ready(docset_id, timeout=60)
        assert_private(tmp_path / "data")
    finally:
        running.client.close()
        running.server.shutdown()
        site.close()


def test_after_a_connection_syncs_everything_is_private(tmp_path, open_umask):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "integration" / "connections"))
    from connection_world import World
    from fake_github import FakeGitHub

    from memlane.domain.connections import Provider

    fake = FakeGitHub().start()
    try:
        fake.reset_data()
        fake.repo("acme/modes").files.update({"README.md": b"# Modes\n"})
        world = World(tmp_path, fake, Provider.GITHUB)
        try:
            conn = world.connect(world.a, {"repositories": ["acme/modes"]})
            assert world.sync(conn).errors == []
            assert (tmp_path / "data" / FileTokenVault(tmp_path / "data").path.name).exists()
            assert_private(tmp_path / "data")
        finally:
            world.close()
    finally:
        fake.stop()


def test_the_server_warns_at_start_about_an_open_data_directory(tmp_path, open_umask, capsys):
    from conftest_helpers import free_port
    from fakes import HashEmbedder

    from memlane.local.server import LocalServer

    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    srv = LocalServer(Settings(data_dir=data), port=free_port(), embedder=HashEmbedder())
    try:
        srv.prepare()
    finally:
        srv.shutdown()
    assert "memlane doctor --repair" in capsys.readouterr().err


@pytest.mark.skipif(not vector_ann.available(), reason="usearch is not installed")
def test_the_vector_index_and_its_snapshot_are_private(tmp_path, open_umask, monkeypatch):
    """Issue 34, finding 5: the HNSW graphs, the saved projection, their manifests and lock were
    created 0644 in a 0755 `search-ann/` directory."""
    from fakes import HashEmbedder

    from memlane.adapters.local import search_index
    from memlane.domain.principal import Principal
    from memlane.domain.requests import MemoryIn, RecallIn
    from memlane.local.runtime import LocalRuntime
    from memlane.recall.service import recall
    from memlane.services.memory import save_memory

    monkeypatch.setattr(search_index, "ANN_AT", 1)  # the graphs from the first row
    data = tmp_path / "data"
    # Given memories saved and recalled (the graphs built), When the process stops (the snapshot saved)
    with LocalRuntime(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False) as rt:
        who = Principal(organization_id=rt.organization().id, key_id="k")
        for i in range(5):
            save_memory(rt.services, who, MemoryIn(content=f"Locker {i} opens with code {i}{i}{i}."))
        assert recall(rt.services, who, RecallIn(query="locker code")).results
        assert rt.stack.index._matrix.ann is not None  # searched through the graphs
    # Then the graphs, the projection, both manifests and the lock exist, each private
    ann = data / search_index.ANN_DIR
    names = {p.name for p in ann.iterdir()}
    assert {"manifest.json", "projection.json", "lock"} <= names, names
    assert any(n.endswith(".usearch") for n in names) and any(n.startswith("p-") for n in names), names
    assert_private(data)
