"""The embedded default's adapters: metadata store, search index (both legs), job queue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fakes import HashEmbedder

from memlane.adapters.local.job_queue import SqliteJobQueue
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.adapters.local.search_index import SqliteSearchIndex, fts_query
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.errors import ConflictError, EmbedderMismatchError
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, IngestJob, chunk_id_for
from memlane.ports import IndexedChunk, RecallFilters, SearchScope
from memlane.services.keys import ensure_organization

NOW = datetime(2026, 11, 1, tzinfo=UTC)
EMB = HashEmbedder()


@pytest.fixture
def db(tmp_path):
    d = SqliteDatabase(tmp_path / "m.sqlite3")
    yield d
    d.close()


def _doc(org: str, project: str, text: str, **kw) -> tuple[Document, list[Chunk]]:
    doc = Document(
        organization_id=org,
        project_id=project,
        user_id="u",
        title=kw.pop("title", text[:20]),
        content=text,
        status=DocumentStatus.READY,
        created_at=kw.pop("created_at", NOW),
        **kw,
    )
    chunk = Chunk(
        id=chunk_id_for(doc.id, 0),
        document_id=doc.id,
        organization_id=org,
        project_id=project,
        content=text,
        chunk_index=0,
        chunk_count=1,
        start_offset=0,
        end_offset=len(text),
        title=doc.title,
        content_type=doc.content_type,
        created_at=doc.created_at,
        forget_after=doc.forget_after,
        tags=doc.tags,
    )
    return doc, [chunk]


def _store(md: SqliteMetadataStore, idx: SqliteSearchIndex, doc: Document, chunks: list[Chunk]) -> None:
    md.put_document(doc)
    md.put_chunks(doc.organization_id, doc.id, chunks)
    idx.upsert(EMB.id, [IndexedChunk(c, EMB.embed_query(c.content)) for c in chunks])


def _scope(org, projects, **kw):
    return SearchScope(organization_id=org, project_ids=tuple(projects), now=NOW, **kw)


def test_fts_query_quotes_terms_and_drops_stopwords():
    assert fts_query("what is the ZX-4471 ticket?") == '"zx" OR "4471" OR "ticket"'
    assert fts_query('"; DROP TABLE x; --') == '"drop" OR "table" OR "x"'
    assert fts_query("the") == '"the"'
    assert fts_query("  !? ") is None


def test_both_legs_never_cross_tenants(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    a_doc, a_chunks = _doc("org-a", "pa", "secret falcon launch codes in the red binder")
    b_doc, b_chunks = _doc("org-b", "pb", "secret falcon launch codes in the red binder")
    _store(md, idx, a_doc, a_chunks)
    _store(md, idx, b_doc, b_chunks)
    q = "falcon launch codes"
    legs = idx.search(_scope("org-a", ["pa", "pb"]), q, EMB.embed_query(q), 100)
    assert {c.document_id for c in legs.vector} == {a_doc.id}
    assert {c.document_id for c in legs.text} == {a_doc.id}
    assert md.get_document("org-b", a_doc.id) is None
    assert md.delete_document("org-b", a_doc.id) is False


def test_filters_apply_to_both_legs(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    old, old_c = _doc("o", "p", "solar panel notes", created_at=NOW - timedelta(days=400))
    html, html_c = _doc(
        "o", "p", "solar panel page", content_type=ContentType.HTML, metadata={"tags": ["Energy"]}
    )
    gone, gone_c = _doc("o", "p", "solar panel expired", forget_after=NOW - timedelta(minutes=1))
    for d, c in ((old, old_c), (html, html_c), (gone, gone_c)):
        _store(md, idx, d, c)
    vec = EMB.embed_query("solar panel")

    def ids(**filters):
        legs = idx.search(_scope("o", ["p"], filters=RecallFilters(**filters)), "solar panel", vec, 10)
        return {c.document_id for c in legs.vector}, {c.document_id for c in legs.text}

    assert ids() == ({old.id, html.id}, {old.id, html.id})  # the expired one is invisible already
    assert ids(content_types=(ContentType.HTML,)) == ({html.id}, {html.id})
    assert ids(created_after=NOW - timedelta(days=30)) == ({html.id}, {html.id})
    assert ids(tags=("energy",)) == ({html.id}, {html.id})
    assert ids(tags=("nothing",)) == (set(), set())


def test_bm25_scores_are_positive_and_title_matches_count(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    titled, tc = _doc("o", "p", "how to order things by a key", title="Sorting HOW TO")
    plain, pc = _doc("o", "p", "a paragraph about nothing much", title="Misc")
    _store(md, idx, titled, tc)
    _store(md, idx, plain, pc)
    legs = idx.search(_scope("o", ["p"]), "sorting", None, 10)
    assert [c.document_id for c in legs.text] == [titled.id]
    assert legs.text[0].score > 0 and legs.vector == []


def test_delete_removes_rows_from_both_legs_and_the_matrix(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    doc, chunks = _doc("o", "p", "spare key under the flowerpot")
    _store(md, idx, doc, chunks)
    vec = EMB.embed_query("spare key")
    assert idx.search(_scope("o", ["p"]), "spare key", vec, 5).vector
    idx.delete_document("o", doc.id)
    md.delete_document("o", doc.id)
    legs = idx.search(_scope("o", ["p"]), "spare key", vec, 5)
    assert legs.vector == [] and legs.text == []
    assert idx.document_ids() == set() and md.get_chunks("o", doc.id) == []


def test_a_second_process_sees_writes_through_the_sequence_log(tmp_path):
    # Given two handles on the same file (the server and a CLI)
    db1, db2 = SqliteDatabase(tmp_path / "x.db"), SqliteDatabase(tmp_path / "x.db")
    md1, idx1 = SqliteMetadataStore(db1), SqliteSearchIndex(db1, EMB.dimension)
    idx2 = SqliteSearchIndex(db2, EMB.dimension)
    vec = EMB.embed_query("lighthouse")
    assert idx2.search(_scope("o", ["p"]), "lighthouse", vec, 5).vector == []  # matrix loaded (empty)
    doc, chunks = _doc("o", "p", "the lighthouse keeper")
    _store(md1, idx1, doc, chunks)
    assert [c.document_id for c in idx2.search(_scope("o", ["p"]), "lighthouse", vec, 5).vector] == [doc.id]
    idx1.delete_document("o", doc.id)
    assert idx2.search(_scope("o", ["p"]), "lighthouse", vec, 5).vector == []
    db1.close()
    db2.close()


def test_upsert_is_idempotent(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    doc, chunks = _doc("o", "p", "deterministic chunk ids make writes upserts")
    _store(md, idx, doc, chunks)
    _store(md, idx, doc, chunks)
    assert idx.chunk_count() == 1
    legs = idx.search(_scope("o", ["p"]), "deterministic upserts", EMB.embed_query("deterministic"), 10)
    assert len(legs.text) == 1 and len(legs.vector) == 1


def test_index_refuses_vectors_from_another_embedder(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    doc, chunks = _doc("o", "p", "first")
    _store(md, idx, doc, chunks)
    with pytest.raises(EmbedderMismatchError, match="memlane reindex"):
        idx.upsert("openai/text-embedding-3-small/1536", [IndexedChunk(chunks[0], EMB.embed_query("x"))])


def test_slugs_are_unique_per_scope(db):
    md = SqliteMetadataStore(db)
    org, created = ensure_organization(md, "Acme Corp")
    assert created and org.slug == "acme-corp"
    again, created_again = ensure_organization(md, "acme corp")
    assert again.id == org.id and not created_again
    [default] = md.list_projects(org.id)
    assert default.is_default and default.slug == "default"
    from memlane.domain.models import Project

    with pytest.raises(ConflictError):
        md.create_project(Project(organization_id=org.id, name="Default 2", slug="default"))


def test_recent_documents_orders_and_filters(db):
    md = SqliteMetadataStore(db)
    docs = []
    for i in range(3):
        d, _ = _doc("o", "p", f"note {i}", created_at=NOW - timedelta(hours=3 - i))
        md.put_document(d)
        docs.append(d)
    queued, _ = _doc("o", "p", "not ready")
    md.put_document(queued.model_copy(update={"status": DocumentStatus.QUEUED}))
    got = md.recent_documents("o", ["p"], RecallFilters(), NOW, 10)
    assert [d.id for d in got] == [docs[2].id, docs[1].id, docs[0].id]
    assert md.recent_documents("o", ["other"], RecallFilters(), NOW, 10) == []


def test_job_lease_expires_so_a_dead_workers_job_is_claimed_again(db):
    q = SqliteJobQueue(db)
    q.enqueue(IngestJob(document_id="d1", organization_id="o", not_before=NOW))
    q.enqueue(IngestJob(document_id="d1", organization_id="o", not_before=NOW))  # same document: one job
    assert q.pending_count() == 1
    job = q.claim(NOW, lease_seconds=60)
    assert job is not None and job.attempts == 1
    assert q.claim(NOW + timedelta(seconds=30), 60) is None  # leased
    again = q.claim(NOW + timedelta(seconds=61), 60)  # the worker died; the lease ran out
    assert again is not None and again.id == job.id and again.attempts == 2
    q.retry_later(job.id, "503", NOW + timedelta(minutes=5))
    assert q.claim(NOW + timedelta(minutes=1), 60) is None
    assert q.claim(NOW + timedelta(minutes=6), 60) is not None
    q.complete(job.id)
    assert q.pending_count() == 0


def test_release_leases_on_restart(db):
    q = SqliteJobQueue(db)
    q.enqueue(IngestJob(document_id="d", organization_id="o", not_before=NOW))
    assert q.claim(NOW, 600) is not None
    assert q.release_leases() == 1
    assert q.claim(NOW, 600) is not None


def test_text_leg_finds_a_tenants_match_even_when_another_tenant_outranks_it_many_times(db):
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    # Given another tenant's 450 chunks that all out-rank ours on BM25 (the word three times)
    for i in range(450):
        d, c = _doc("org-noisy", "pn", f"kestrel kestrel kestrel sighting number {i}")
        _store(md, idx, d, c)
    mine, mine_c = _doc("org-quiet", "pq", "a single kestrel seen over the long meadow near the old barn")
    _store(md, idx, mine, mine_c)
    # When our tenant searches
    legs = idx.search(_scope("org-quiet", ["pq"]), "kestrel", None, 10)
    # Then every in-scope match is ranked, and ours is found
    assert [c.document_id for c in legs.text] == [mine.id]
    noisy = idx.search(_scope("org-noisy", ["pn"]), "kestrel", None, 10)
    assert len(noisy.text) == 10 and mine.id not in {c.document_id for c in noisy.text}


def test_loading_many_documents_by_id_uses_the_primary_key(db):
    # Given a tenant with many documents (the planner would rather walk an organization index)
    md = SqliteMetadataStore(db)
    docs = [_doc("o", "p", f"note {i}")[0] for i in range(40)]
    for d in docs:
        md.put_document(d)
    statements: list[str] = []
    db.connection().set_trace_callback(statements.append)
    # When recall loads 20 of them and marks them accessed
    ids = [d.id for d in docs[:20]]
    assert {d.id for d in md.get_documents("o", ids)} == set(ids)
    md.touch_documents("o", ids, NOW)
    db.connection().set_trace_callback(None)
    # Then each statement is a primary-key lookup per id, not a scan of the tenant's documents
    lookups = [s for s in statements if "FROM documents" in s or s.startswith("UPDATE documents")]
    assert len(lookups) == 2
    for sql in lookups:
        plan = " ".join(r["detail"] for r in db.connection().execute("EXPLAIN QUERY PLAN " + sql))
        assert "sqlite_autoindex_documents_1 (id=?)" in plan, plan
    assert md.get_documents("other-org", ids) == []


def test_the_duplicate_check_of_a_save_looks_the_hash_up_instead_of_walking_the_project(db):
    # Given a project with many documents (the planner would rather walk them in created_at order)
    md = SqliteMetadataStore(db)
    docs = [_doc("o", "p", f"note {i}", content_hash=f"h{i}")[0] for i in range(40)]
    for d in docs:
        md.put_document(d)
    statements: list[str] = []
    db.connection().set_trace_callback(statements.append)
    # When a save checks whether the same content is already stored
    found = md.find_document_by_hash("o", "p", docs[7].content_hash)
    db.connection().set_trace_callback(None)
    # Then it finds it through the hash index (1.5 s per save at a million chunks otherwise)
    assert found is not None and found.id == docs[7].id
    [sql] = [s for s in statements if "FROM documents" in s]
    plan = " ".join(r["detail"] for r in db.connection().execute("EXPLAIN QUERY PLAN " + sql))
    assert "documents_hash" in plan, plan
