"""Migration of data directories indexed by the old contextual-indexing rule (any two saves of a
project within 30 minutes were one sitting): the server says at start to run `memlane reindex`,
and reindex rebuilds the index by the conversation rule and records it (memlane.local.index_rules)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.documents.contextual import CONTEXT_SCHEME
from memlane.domain.models import Project
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.local.index_rules import CONTEXT
from memlane.ports import IndexedChunk, RecallFilters, SearchScope
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory

LANDLORD = "Tenancy: I must give my landlord two months' notice before moving out."
BM25 = "BM25 parameters: k1 = 1.2 and b = 0.75 work well for short notes."


def _open(data, embedder):
    stack = build_local(Settings(data_dir=data), embedder=embedder, summarizer=LocalSummarizer())
    org, _ = ensure_organization(stack.metadata, "acme")
    return stack, Principal(organization_id=org.id, key_id="k")


def _text_hits(stack, who, project, query):
    scope = SearchScope(who.organization_id, (project,), RecallFilters(), now=datetime.now(UTC))
    return list(dict.fromkeys(c.document_id for c in stack.index.search(scope, query, None, 50).text))


def test_a_new_data_directory_follows_the_conversation_rule(tmp_path):
    stack, _ = _open(tmp_path / "data", HashEmbedder())
    try:
        assert stack.db.get_meta(CONTEXT.key) == CONTEXT_SCHEME
        assert not CONTEXT.stale(stack.db)
    finally:
        stack.close()


@pytest.fixture
def old_directory(tmp_path):
    """A data directory as the time-based rule left it: two unrelated notes saved a minute apart,
    the landlord note's entry carrying the BM25 note's words as context, and no scheme recorded."""
    data = tmp_path / "data"
    embedder = HashEmbedder()
    stack, who = _open(data, embedder)
    project = stack.metadata.create_project(Project(organization_id=who.organization_id, name="n", slug="n")).id
    landlord = save_memory(stack.services, who, MemoryIn(content=LANDLORD, project_id=project)).id
    bm25 = save_memory(stack.services, who, MemoryIn(content=BM25, project_id=project)).id
    chunk = stack.metadata.get_chunks(who.organization_id, landlord)[0]
    stack.index.upsert(embedder.id, [IndexedChunk(chunk, embedder.embed_documents([LANDLORD])[0], context=BM25)])
    stack.db.connection().execute("DELETE FROM meta WHERE key = ?", (CONTEXT.key,))
    assert set(_text_hits(stack, who, project, "BM25 parameters")) == {landlord, bm25}
    stack.close()
    return data, project, landlord, bm25


def test_the_server_says_to_reindex_an_index_built_by_the_old_rule(old_directory, capsys):
    from memlane.local.server import LocalServer

    data, *_ = old_directory
    server = LocalServer(Settings(data_dir=data), embedder=HashEmbedder())
    try:
        server.prepare()
        assert "run: memlane reindex" in capsys.readouterr().err
        assert CONTEXT.stale(server.stack.db)
    finally:
        server.shutdown()


def test_reindex_rebuilds_the_index_without_the_old_context_and_records_the_rule(old_directory, monkeypatch):
    from memlane.cli import main
    from memlane.local import compose

    data, project, landlord, bm25 = old_directory
    monkeypatch.setattr(compose, "make_embedder", lambda settings, models_dir=None: HashEmbedder())
    assert main(["reindex", "--data-dir", str(data)]) == 0
    stack, who = _open(data, HashEmbedder())
    try:
        # Then the landlord note no longer matches the other note's words, and the directory is current
        assert _text_hits(stack, who, project, "BM25 parameters") == [bm25]
        assert _text_hits(stack, who, project, "landlord notice") == [landlord]
        assert not CONTEXT.stale(stack.db)
    finally:
        stack.close()
