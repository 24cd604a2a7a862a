"""Data directories whose search index was built before it held each memory's kind
(memlane.local.index_rules): the kind filter stays exact meanwhile, the server says at start to run
`memlane reindex`, and reindex gives every row its document's kind."""

from __future__ import annotations

from datetime import UTC, datetime

from fakes import HashEmbedder

from memlane.config import Settings
from memlane.domain.models import Project
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.local.index_rules import KINDS
from memlane.ports import RecallFilters, SearchScope
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory


def _open(data):
    stack = build_local(Settings(data_dir=data), embedder=HashEmbedder(), summarizer=LocalSummarizer())
    org, _ = ensure_organization(stack.metadata, "acme")
    return stack, Principal(organization_id=org.id, key_id="k")


def _kinds(stack) -> dict[str | None, int]:
    rows = stack.db.connection().execute("SELECT kind, COUNT(*) AS n FROM search_rows GROUP BY kind").fetchall()
    return {r["kind"]: r["n"] for r in rows}


def test_a_new_data_directory_holds_every_rows_kind(tmp_path):
    stack, who = _open(tmp_path / "data")
    try:
        project = stack.metadata.create_project(Project(organization_id=who.organization_id, name="n", slug="n")).id
        save_memory(stack.services, who, MemoryIn(content="the ferry leaves at dawn", project_id=project))
        assert _kinds(stack) == {"memory": 1}
        assert not KINDS.stale(stack.db)
    finally:
        stack.close()


def test_an_index_from_before_kinds_is_flagged_at_start_and_reindex_gives_each_row_its_kind(tmp_path, capsys,
                                                                                            monkeypatch):
    from memlane.cli import main
    from memlane.local import compose
    from memlane.local.server import LocalServer

    # Given a data directory indexed by a memlane whose index held no kind
    data = tmp_path / "data"
    stack, who = _open(data)
    project = stack.metadata.create_project(Project(organization_id=who.organization_id, name="n", slug="n")).id
    saved = [save_memory(stack.services, who, MemoryIn(content=f"note {i} about the ferry", project_id=project)).id
             for i in range(3)]
    with stack.db.transaction() as conn:
        conn.execute("UPDATE search_rows SET kind = NULL")
        conn.execute("DELETE FROM meta WHERE key = ?", (KINDS.key,))
    stack.close()
    # Then the server says so at start
    server = LocalServer(Settings(data_dir=data), embedder=HashEmbedder())
    try:
        server.prepare()
        assert KINDS.hint in capsys.readouterr().err
        assert KINDS.stale(server.stack.db)
        # and meanwhile the legs let the old rows through any kind filter (recall checks each document)
        scope = SearchScope(who.organization_id, (project,), RecallFilters(kinds=("fact",)), now=datetime.now(UTC))
        assert {c.document_id for c in server.stack.index.search(scope, "ferry", None, 10).text} == set(saved)
    finally:
        server.shutdown()
    # When `memlane reindex` runs
    monkeypatch.setattr(compose, "make_embedder", lambda settings, models_dir=None: HashEmbedder())
    assert main(["reindex", "--data-dir", str(data)]) == 0
    stack, who = _open(data)
    try:
        # Then every row has its kind, a fact filter passes none of these plain memories, and the flag is set
        assert _kinds(stack) == {"memory": 3}
        scope = SearchScope(who.organization_id, (project,), RecallFilters(kinds=("fact",)), now=datetime.now(UTC))
        assert stack.index.search(scope, "ferry", None, 10).text == []
        assert not KINDS.stale(stack.db)
    finally:
        stack.close()
