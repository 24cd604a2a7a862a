"""`memlane connect git PATH`: a real git repository on disk, synced with no network — files kept
verbatim and chunked by function, raged's repoId/path/lang metadata, a changed file versioned, a
deleted file removed everywhere."""

from __future__ import annotations

import json
import subprocess

import pytest
from connection_world import World
from fakes import HashEmbedder

from memlane.cli import main
from memlane.collections.models import QueryIn
from memlane.collections.service import query as raged_query
from memlane.connections import service
from memlane.domain.connections import Provider


def _function(name: str, n: int) -> str:
    body = "\n".join(f"    step_{i} = lines[{i}].amount * rate  # apply the {name} rule to line {i}" for i in range(n))
    return f'def {name}(lines, rate):\n    """{name.replace("_", " ")}."""\n{body}\n    return rate\n'


# Long enough for several chunks, so the cut points show: every chunk starts at a definition.
PY = ('"""Billing helpers."""\n\n\n' + "\n\n".join(_function(f"compute_{w}", 22) for w in ("invoice_total", "tax",
                                                                                            "discount", "shipping"))
      + "\n\nclass RefundPolicy:\n    def allows(self, order):\n        return order.age_days <= 30\n")


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "billing-service"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# Billing service\n\nIssues invoices and refunds for the shop.\n")
    (path / "src").mkdir()
    (path / "src" / "billing.py").write_text(PY)
    (path / "node_modules").mkdir()
    (path / "node_modules" / "left-pad.js").write_text("module.exports = 1;\n")
    (path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def test_a_local_clone_is_synced_verbatim_versioned_and_pruned(tmp_path, repo):
    world = World(tmp_path, None, Provider.GIT)
    try:
        # Given a connection to a clone (made the way `memlane connect git` makes it)
        conn = service.connect_git(world.svc, world.a, str(repo))
        assert conn.status.value == "active" and conn.options["repo_id"] == "billing-service"

        # When it syncs the first time
        first = world.sync(conn)

        # Then exactly the README and the source file became memories; vendored and binary files did not
        assert (first.added, first.updated, first.deleted, first.errors) == (2, 0, 0, [])
        docs = world.current(world.a, conn)
        assert set(docs) == {"README.md", "src/billing.py"}
        code = world.document(world.a, docs["src/billing.py"].id)
        assert code.content == PY, "code is kept byte for byte"
        assert code.content_type.value == "code" and code.metadata["language"] == "python"
        assert code.metadata["raged"] | {"tags": None} == {
            "baseId": "billing-service:src/billing.py", "source": f"{repo}#src/billing.py",
            "repoId": "billing-service", "path": "src/billing.py", "lang": "py", "tags": None}
        chunks = world.stack.metadata.get_chunks(world.a.organization_id, code.id)
        assert len(chunks) >= 3, "a long file is cut into several chunks"
        assert all(c.content.lstrip().startswith(("def ", "class ", '"""')) for c in chunks), \
            [c.content[:30] for c in chunks]  # cut at function and class boundaries, never inside one

        # and raged's query finds it by repoId and lang in the connection's project
        project = world.stack.metadata.get_project(world.a.organization_id, conn.project_id)
        found = raged_query(world.svc, world.a, QueryIn.model_validate(
            {"collection": project.name, "query": "", "filter": {"repoId": "billing-service", "lang": "py"}}))
        assert {r.payload["path"] for r in found.results} == {"src/billing.py"}

        # When a file changes, another is deleted, and the clone is committed again
        (repo / "src" / "billing.py").write_text(PY.replace("<= 30", "<= 14"))
        (repo / "README.md").unlink()
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "shorter refunds")
        readme_id = docs["README.md"].id
        second = world.sync(conn)

        # Then the changed file is a new version of the old one, and the deleted one is gone everywhere
        assert (second.added, second.updated, second.deleted, second.errors) == (0, 1, 1, [])
        after = world.current(world.a, conn)
        assert set(after) == {"src/billing.py"}
        new = world.document(world.a, after["src/billing.py"].id)
        assert new.updates_memory_id == docs["src/billing.py"].id and "<= 14" in new.content
        assert world.document(world.a, docs["src/billing.py"].id).superseded_by == new.id
        world.assert_gone(world.a, [readme_id])

        # and a sync with nothing new does nothing
        assert (world.sync(conn).added, world.sync(conn).updated) == (0, 0)
        # and the other organization sees none of it
        assert world.documents(world.b) == [] and world.ports.store.list_connections(world.b.organization_id) == []
    finally:
        world.close()


def test_connect_git_command_syncs_a_clone_into_a_named_project(tmp_path, repo, capsys, monkeypatch):
    # Given the CLI on a data directory (the hashing embedder instead of loading the model)
    monkeypatch.setattr("memlane.local.compose.make_embedder", lambda settings, models_dir=None: HashEmbedder())
    # When the CLI connects the clone into a project
    code = main(["--data-dir", str(tmp_path / "cli-data"), "connect", "git", str(repo), "--project", "Billing",
                 "--repo-id", "shop/billing"])

    # Then it printed the active connection and synced both files into that project
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "active" and out["last_result"]["added"] == 2 and out["last_result"]["errors"] == []
    assert out["options"]["repo_id"] == "shop/billing"
    # and connecting a path that is no repository is a clear error naming the option
    assert main(["--data-dir", str(tmp_path / "cli-data"), "connect", "git", str(tmp_path)]) == 1
    assert "options.path" in capsys.readouterr().err


def test_deleting_a_connection_keeps_or_removes_what_it_brought_in(tmp_path, repo):
    from memlane.connections.sync import LEASE, run_due

    world = World(tmp_path, None, Provider.GIT)
    try:
        kept = service.connect_git(world.svc, world.a, str(repo))
        world.sync(kept)
        kept_docs = [d.id for d in world.documents(world.a, kept)]
        # When a connection is deleted without its memories, they stay (and are no longer synced)
        out, finished = service.delete_connection(world.svc, world.a, kept.id)
        assert finished and out.documents_removed == 0
        assert world.ports.store.get_connection(world.a.organization_id, kept.id) is None
        assert world.ports.store.list_items(kept.id) == []
        assert sorted(d.id for d in world.documents(world.a)) == sorted(kept_docs)

        # When a connection is deleted with its memories while a sync holds its lease
        other = service.connect_git(world.svc, world.a, str(repo), project_id=None, repo_id="billing-2")
        assert other.id != kept.id  # another repo id, same clone: another connection
        world.sync(other)
        other_docs = [d.id for d in world.documents(world.a, other)]
        now = world.clock.now()
        assert world.ports.store.claim(world.a.organization_id, other.id, now, now + LEASE)
        out, finished = service.delete_connection(world.svc, world.a, other.id, remove_documents=True)

        # Then it says so (202 over HTTP), and the runner finishes it once the lease is free
        assert not finished and not out.deleted
        assert service.get_connection(world.svc, world.a, other.id).status.value == "deleting"
        world.clock.advance(seconds=LEASE.total_seconds() + 1)
        run_due(world.svc)
        assert world.ports.store.get_connection(world.a.organization_id, other.id) is None
        world.assert_gone(world.a, other_docs)
        assert sorted(d.id for d in world.documents(world.a)) == sorted(kept_docs)
    finally:
        world.close()
