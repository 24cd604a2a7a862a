"""The embedded default's BM25 leg (memlane.adapters.local.bm25 behind SqliteSearchIndex): the same
ranking and scores as SQLite FTS5's bm25() over the same rows, under the same scope as the vector
leg, kept current across writes, deletes, updates and processes."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import numpy as np
import pytest
from fakes import HashEmbedder
from numeric import assert_ranking_close

from memlane.adapters.local import bm25
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.adapters.local.search_index import SqliteSearchIndex, fts_query
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, chunk_id_for
from memlane.ports import IndexedChunk, RecallFilters, SearchScope

NOW = datetime(2026, 11, 1, tzinfo=UTC)
EMB = HashEmbedder()
WORDS = tuple(
    [
        "kestrel",
        "falcon",
        "harrier",
        "meadow",
        "barn",
        "river",
        "stone",
        "lantern",
        "copper",
        "violet",
        "orbit",
        "signal",
        "ledger",
        "harbour",
        "compass",
        "thistle",
        "granite",
        "beacon",
        "ember",
        "willow",
        "quarry",
        "saddle",
        "timber",
        "cobalt",
    ]
)


@pytest.fixture
def db(tmp_path):
    d = SqliteDatabase(tmp_path / "m.sqlite3")
    yield d
    d.close()


def _chunks(org: str, project: str, text: str, *, title: str = "", headings=(), n: int = 1, **kw):
    doc = Document(
        organization_id=org,
        project_id=project,
        user_id="u",
        title=title or text[:20],
        content=text,
        status=DocumentStatus.READY,
        created_at=kw.pop("created_at", NOW),
        **kw,
    )
    chunks = [
        Chunk(
            id=chunk_id_for(doc.id, i),
            document_id=doc.id,
            organization_id=org,
            project_id=project,
            content=text,
            chunk_index=i,
            chunk_count=n,
            start_offset=0,
            end_offset=len(text),
            title=doc.title,
            heading_path=list(headings),
            content_type=doc.content_type,
            created_at=doc.created_at,
            forget_after=doc.forget_after,
        )
        for i in range(n)
    ]
    return doc, chunks


def _index(idx: SqliteSearchIndex, chunks: list[Chunk]) -> None:
    idx.upsert(EMB.id, [IndexedChunk(c, EMB.embed_query(c.content)) for c in chunks])


def _scope(org="o", projects=("p",), **kw):
    return SearchScope(organization_id=org, project_ids=tuple(projects), now=NOW, **kw)


def _fts5_reference(db: SqliteDatabase, query: str, k: int) -> list[tuple[str, float]]:
    """What the text leg computed before: FTS5 ranking every match with bm25(), weights 2/1.5/1."""
    rows = (
        db.connection()
        .execute(
            "SELECT r.chunk_id, -bm25(search_fts, 2.0, 1.5, 1.0) AS score FROM search_fts"
            " JOIN search_rows r ON r.rowid = search_fts.rowid WHERE search_fts MATCH ?"
            " ORDER BY bm25(search_fts, 2.0, 1.5, 1.0) LIMIT ?",
            (fts_query(query), k),
        )
        .fetchall()
    )
    return [(r["chunk_id"], r["score"]) for r in rows]


def _random_corpus(idx: SqliteSearchIndex, rng: random.Random, docs: int) -> None:
    for _ in range(docs):
        body = " ".join(rng.choices(WORDS, k=rng.randint(3, 40)))
        title = " ".join(rng.choices(WORDS, k=rng.randint(0, 3)))
        headings = [" ".join(rng.choices(WORDS, k=2))] if rng.random() < 0.5 else []
        _, chunks = _chunks("o", "p", body, title=title or "untitled", headings=headings)
        _index(idx, chunks)


def _assert_same_as_fts5(db, idx, queries, k=15):
    for q in queries:
        got = [(c.chunk_id, c.score) for c in idx.search(_scope(), q, None, k).text]
        ref = _fts5_reference(db, q, k)
        assert [s for _, s in got] == pytest.approx([s for _, s in ref], rel=1e-9), q
        # the same chunks, up to the order of equal scores at the cut
        if len(ref) == k:
            cut = ref[-1][1]
            assert {c for c, s in got if s > cut * (1 + 1e-9)} == {
                c for c, s in ref if s > cut * (1 + 1e-9)
            }, q
        else:
            assert {c for c, _ in got} == {c for c, _ in ref}, q


QUERIES = [
    "kestrel",
    "kestrel meadow",
    "copper orbit signal ledger",
    "Falcons over the barns",  # stemming: falcon, barn
    "the",  # only a stopword: it is kept
    "willow thistle quarry ember beacon saddle",
    "nothing matches this",
]


def test_scores_and_ranking_are_fts5_bm25(db):
    # Given 300 chunks with titles, headings and bodies of varied length
    idx = SqliteSearchIndex(db, EMB.dimension)
    _random_corpus(idx, random.Random(5), 300)
    # Then every query ranks the same chunks with the same scores as FTS5's bm25()
    _assert_same_as_fts5(db, idx, QUERIES)


def test_ranking_stays_fts5_bm25_through_updates_deletes_and_folds(db, monkeypatch):
    # Given a tail that folds every few writes
    monkeypatch.setattr(bm25.Postings, "FOLD_AT", 50)
    md, idx = SqliteMetadataStore(db), SqliteSearchIndex(db, EMB.dimension)
    rng = random.Random(9)
    _random_corpus(idx, rng, 120)
    _assert_same_as_fts5(db, idx, QUERIES)
    # When documents are deleted and chunks rewritten with other text, searching in between
    for r in db.connection().execute("SELECT DISTINCT document_id FROM search_rows LIMIT 30").fetchall():
        idx.delete_document("o", r["document_id"])
        md.delete_document("o", r["document_id"])
    rewritten = db.connection().execute("SELECT chunk_id, document_id FROM search_rows LIMIT 20").fetchall()
    for r in rewritten:
        idx.search(_scope(), "kestrel", None, 5)
        text = " ".join(rng.choices(WORDS, k=rng.randint(3, 30)))
        c = Chunk(
            id=r["chunk_id"],
            document_id=r["document_id"],
            organization_id="o",
            project_id="p",
            content=text,
            chunk_index=0,
            chunk_count=1,
            start_offset=0,
            end_offset=len(text),
            title="rewritten",
            created_at=NOW,
        )
        _index(idx, [c])
    _random_corpus(idx, rng, 40)
    # Then the statistics (rows, lengths, document frequencies) and the ranking still match FTS5's
    _assert_same_as_fts5(db, idx, QUERIES)
    m = idx._matrix
    assert m.rows == db.connection().execute("SELECT COUNT(*) AS n FROM search_rows").fetchone()["n"]


def test_a_keyword_only_match_surfaces_in_the_text_leg(db):
    # Given many chunks close to the query vector and one far from it holding the rare keyword
    idx = SqliteSearchIndex(db, EMB.dimension)
    for i in range(40):
        _, chunks = _chunks("o", "p", f"deployment guide for the staging cluster part {i}")
        _index(idx, chunks)
    needle, needle_chunks = _chunks("o", "p", "ticket ZX-4471 was closed without comment")
    _index(idx, needle_chunks)
    q = "deployment guide staging cluster ZX-4471"
    legs = idx.search(_scope(), q, EMB.embed_query(q), 10)
    # Then the vector leg's ten nearest miss it but the text leg ranks it first: no threshold hides it
    assert needle.id not in {c.document_id for c in legs.vector[:10]}
    assert legs.text[0].document_id == needle.id
    # and the vector leg gives it its cosine all the same, after its ten (every candidate of either
    # leg is scored on both: memlane.ports.SearchIndex.search)
    filled = [c for c in legs.vector if c.document_id == needle.id]
    assert len(filled) == 1 and filled[0].score <= legs.vector[9].score


def test_a_possessive_is_searched_as_its_word_as_opensearch_english_analyzer_does(db):
    # Given memories that hold possessives and one about the family, and none naming Maria
    idx = SqliteSearchIndex(db, EMB.dimension)
    for text in ("Tom's bike is red", "Priya's flat is small", "Sam's dog barks"):
        _index(idx, _chunks("o", "p", text)[1])
    family, family_chunks = _chunks("o", "p", "the family trip to the lake")
    _index(idx, family_chunks)
    # When a question with a possessive is searched
    q = "Maria's family"
    legs = idx.search(_scope(), q, EMB.embed_query(q), 10)
    # Then the text leg asks for "maria" and "family", not for the `s` every possessive holds
    assert [c.document_id for c in legs.text] == [family.id]
    assert fts_query("Maria\u2019s family") == '"maria" OR "family"'


def test_text_leg_applies_every_scope_filter(db):
    md = SqliteMetadataStore(db)
    idx = SqliteSearchIndex(db, EMB.dimension)
    docs = {
        "mine": _chunks("o", "p", "lantern lantern lantern"),
        "other_project": _chunks("o", "p2", "lantern lantern lantern"),
        "other_tenant": _chunks("x", "p", "lantern lantern lantern"),
        "old": _chunks("o", "p", "lantern notes", created_at=datetime(2020, 1, 1, tzinfo=UTC)),
        "html": _chunks(
            "o", "p", "lantern page", content_type=ContentType.HTML, metadata={"tags": ["Lamps"]}
        ),
        "expired": _chunks("o", "p", "lantern gone", forget_after=datetime(2026, 10, 1, tzinfo=UTC)),
    }
    for doc, chunks in docs.values():
        md.put_document(doc)
        _index(idx, chunks)
    idx.set_superseded("o", docs["old"][0].id, True)
    ids = {name: doc.id for name, (doc, _) in docs.items()}

    def found(**filters):
        versions = filters.pop("include_superseded", False)
        f = RecallFilters(include_superseded=versions, **filters)
        return {
            d
            for d, i in ids.items()
            if i in {c.document_id for c in idx.search(_scope(filters=f), "lantern", None, 50).text}
        }

    assert found() == {"mine", "html"}  # not another project, tenant, an expired or superseded one
    assert found(include_superseded=True) == {"mine", "html", "old"}
    assert found(content_types=(ContentType.HTML,)) == {"html"}
    assert found(created_after=datetime(2025, 1, 1, tzinfo=UTC)) == {"mine", "html"}
    assert found(tags=("lamps",)) == {"html"}
    assert idx.search(_scope("o", ("p", "p2")), "lantern", None, 50).text[0].document_id in {
        ids["mine"],
        ids["other_project"],
    }


def test_updates_and_deletes_are_visible_to_the_next_search(db):
    idx = SqliteSearchIndex(db, EMB.dimension)
    doc, chunks = _chunks("o", "p", "the copper kettle")
    _index(idx, chunks)
    assert [c.document_id for c in idx.search(_scope(), "copper", None, 5).text] == [doc.id]
    # When the chunk is rewritten under the same id
    _index(idx, [chunks[0].model_copy(update={"content": "the cobalt kettle", "title": "kettle"})])
    # Then the old word is gone and the new one found, at once
    assert idx.search(_scope(), "copper", None, 5).text == []
    assert [c.document_id for c in idx.search(_scope(), "cobalt", None, 5).text] == [doc.id]
    idx.delete_document("o", doc.id)
    assert idx.search(_scope(), "cobalt kettle", None, 5).text == []
    assert idx._matrix.rows == 0 and idx._matrix.tokens == 0


def test_a_second_process_sees_new_changed_and_deleted_text(tmp_path):
    # Given two handles on one data directory (the server and a CLI), the server's index loaded
    db1, db2 = SqliteDatabase(tmp_path / "x.db"), SqliteDatabase(tmp_path / "x.db")
    server, cli = SqliteSearchIndex(db1, EMB.dimension), SqliteSearchIndex(db2, EMB.dimension)
    assert server.search(_scope(), "lighthouse", None, 5).text == []
    # When the CLI writes, rewrites and deletes
    doc, chunks = _chunks("o", "p", "the lighthouse keeper")
    _index(cli, chunks)
    assert [c.document_id for c in server.search(_scope(), "lighthouse", None, 5).text] == [doc.id]
    _index(cli, [chunks[0].model_copy(update={"content": "the harbour master", "title": "harbour"})])
    assert server.search(_scope(), "lighthouse", None, 5).text == []
    assert [c.document_id for c in server.search(_scope(), "harbour", None, 5).text] == [doc.id]
    cli.delete_document("o", doc.id)
    # Then the server's next search reflects each change
    assert server.search(_scope(), "harbour", None, 5).text == []
    db1.close()
    db2.close()


def test_rows_without_stored_terms_are_tokenised_from_the_fts5_text_once(db):
    # Given rows written before search_rows had terms (an older data directory)
    idx = SqliteSearchIndex(db, EMB.dimension)
    doc, chunks = _chunks("o", "p", "granite quarry timber", title="Quarry notes")
    _index(idx, chunks)
    db.connection().execute("UPDATE search_rows SET terms = NULL")
    # When a fresh process loads the index
    fresh = SqliteSearchIndex(db, EMB.dimension)
    legs = fresh.search(_scope(), "quarry", None, 5)
    # Then the text leg finds the row, with FTS5's score, and the terms are stored for next time
    assert [c.document_id for c in legs.text] == [doc.id]
    assert legs.text[0].score == pytest.approx(_fts5_reference(db, "quarry", 5)[0][1], rel=1e-9)
    assert (
        db.connection().execute("SELECT COUNT(*) AS n FROM search_rows WHERE terms IS NULL").fetchone()["n"]
        == 0
    )


def test_old_data_directories_get_the_terms_column(tmp_path):
    # Given a search_rows table from before the column existed
    import sqlite3

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE search_rows (rowid INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, document_id TEXT NOT NULL,"
        " organization_id TEXT NOT NULL, project_id TEXT NOT NULL, chunk_index INTEGER NOT NULL,"
        " content_type TEXT NOT NULL, created_at REAL NOT NULL, forget_after REAL, vector BLOB NOT NULL,"
        " seq INTEGER NOT NULL, superseded INTEGER NOT NULL DEFAULT 0)"
    )
    conn.close()
    # When memlane opens it, twice
    SqliteDatabase(path).close()
    db = SqliteDatabase(path)
    # Then the column is there
    assert "terms" in {r["name"] for r in db.connection().execute("PRAGMA table_info(search_rows)")}
    db.close()


def test_terms_come_from_the_same_tokenizer_as_the_fts5_table(db):
    sql = db.connection().execute("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").fetchone()["sql"]
    assert f"tokenize = '{bm25.TOKENIZER}'" in sql
    assert "title, headings, body" in sql and bm25.OWN_COLUMNS == ("title", "headings", "body")
    tok = bm25.Fts5Tokenizer()
    assert tok.word_terms(["running", "cafés", "max_length"]) == [
        (bm25.term_key("run"),),
        (bm25.term_key("cafe"),),
        (bm25.term_key("max"), bm25.term_key("length")),
    ]


@pytest.mark.numeric
def test_compacting_dead_slots_keeps_both_legs_exact(db, monkeypatch):
    from memlane.adapters.local import search_index

    # Given an index that compacts after a few dead slots, and a lot of churn
    monkeypatch.setattr(search_index, "COMPACT_AT", 8)
    idx = SqliteSearchIndex(db, EMB.dimension)
    rng = random.Random(13)
    _random_corpus(idx, rng, 80)
    idx.search(_scope(), "kestrel", None, 5)  # loaded
    doc_ids = [r["document_id"] for r in db.connection().execute("SELECT document_id FROM search_rows")]
    for i, document_id in enumerate(doc_ids[:50]):
        if i % 2:
            idx.delete_document("o", document_id)
        else:
            row = (
                db.connection()
                .execute("SELECT chunk_id FROM search_rows WHERE document_id = ?", (document_id,))
                .fetchone()
            )
            text = " ".join(rng.choices(WORDS, k=12))
            _, [c] = _chunks("o", "p", text, title="rewritten")
            _index(idx, [c.model_copy(update={"id": row["chunk_id"], "document_id": document_id})])
        idx.search(_scope(), "kestrel meadow", EMB.embed_query("kestrel meadow"), 5)
    # Then the arrays were compacted along the way (80 rows + 25 rewrites made 105 slots)
    m = idx._matrix
    assert m.rows == 55 and m.size < 80 and m.dead <= max(8, m.size // 4)
    # And both legs answer as an index loaded from scratch does, the text leg as FTS5 does
    fresh = SqliteSearchIndex(db, EMB.dimension)
    for q in QUERIES:
        vec = EMB.embed_query(q)
        got, want = idx.search(_scope(), q, vec, 20), fresh.search(_scope(), q, vec, 20)
        # the compacted matrix holds its rows at other places than the fresh one, which BLAS may sum in
        # another order: the same ranking within a stated tolerance (tests/numeric.py)
        assert_ranking_close([[c.chunk_id, c.score] for c in got.vector], [[c.chunk_id, c.score] for c in want.vector])
        assert_ranking_close([["", c.score] for c in got.text], [["", c.score] for c in want.text])
    _assert_same_as_fts5(db, idx, QUERIES)


def _index_with_context(idx: SqliteSearchIndex, chunks: list[Chunk], context: str) -> None:
    idx.upsert(EMB.id, [IndexedChunk(c, EMB.embed_query(c.content), context=context) for c in chunks])


def test_context_words_match_below_the_memorys_own_words(db):
    # Given a memory that says "poetry" itself, and an answer whose context (the turn before it)
    # asked about poetry
    idx = SqliteSearchIndex(db, EMB.dimension)
    _, own = _chunks("o", "p", "I love reading poetry at night", title="A")
    _, answer = _chunks("o", "p", "Yes, last Friday, it was so calming", title="B")
    _, other = _chunks("o", "p", "The harbour was quiet today", title="C")
    _index(idx, own)
    _index_with_context(idx, answer, "Did you go to the poetry reading?")
    _index(idx, other)
    # When the text leg looks for poetry
    found = idx.search(_scope(), "poetry reading", None, 10).text
    # Then both are found, the memory's own words first; the unrelated memory is not
    ids = [c.chunk_id for c in found]
    assert ids[:2] == [own[0].id, answer[0].id] or ids[:2] == [answer[0].id, own[0].id]
    assert other[0].id not in ids
    # and a context hit scores below the same hit in the body: "reading" is in both
    only = idx.search(_scope(), "calming", None, 10).text
    assert [c.chunk_id for c in only] == [answer[0].id]


def test_a_context_hit_counts_half_a_body_hit_and_adds_no_length(db):
    # Given two one-word-body memories, one holding "kestrel" in its body, the other in its context
    idx = SqliteSearchIndex(db, EMB.dimension)
    _, in_body = _chunks("o", "p", "kestrel", title="t")
    _, in_context = _chunks("o", "p", "falcon", title="t")
    _index(idx, in_body)
    _index_with_context(idx, in_context, "kestrel " + "meadow " * 30)
    for _ in range(3):  # rows of the same length without the word
        _index(idx, _chunks("o", "p", "barn", title="t")[1])
    # When the text leg looks for it
    scores = {c.chunk_id: c.score for c in idx.search(_scope(), "kestrel", None, 10).text}
    # Then, every row two tokens long (context is not counted), the context hit has f 0.5, not 1
    n, rows = 2, 5
    idf = math.log((rows - n + 0.5) / (n + 0.5))
    avgdl = 2.0
    norm = bm25.K1 * (1 - bm25.B + bm25.B * 2.0 / avgdl)
    assert scores[in_body[0].id] == pytest.approx(idf * (bm25.K1 + 1) * 1.0 / (1.0 + norm))
    assert scores[in_context[0].id] == pytest.approx(idf * (bm25.K1 + 1) * 0.5 / (0.5 + norm))


def test_context_weight_zero_leaves_the_text_leg_as_fts5(db):
    idx = SqliteSearchIndex(db, EMB.dimension, context_weight=0.0)
    _, a = _chunks("o", "p", "kestrel meadow", title="t")
    _, b = _chunks("o", "p", "barn owl", title="t")
    _index(idx, a)
    _index_with_context(idx, b, "kestrel kestrel")
    assert [c.chunk_id for c in idx.search(_scope(), "kestrel", None, 10).text] == [a[0].id]


def test_terms_stored_before_the_context_column_are_upgraded_once(tmp_path):
    # Given a data directory whose rows hold terms in the three-column layout
    path = tmp_path / "old.sqlite3"
    db = SqliteDatabase(path)
    idx = SqliteSearchIndex(db, EMB.dimension)
    _, chunks = _chunks("o", "p", "kestrel over the meadow", title="birds")
    _index(idx, chunks)
    conn = db.connection()
    stored = conn.execute("SELECT terms FROM search_rows").fetchone()["terms"]
    new = np.frombuffer(stored, dtype=bm25.TERMS_DTYPE)
    old = np.zeros(len(new), dtype=bm25.TERMS_DTYPE_V1)
    old["term"], old["tf"] = new["term"], new["tf"][:, :3]
    with db.transaction() as tx:
        tx.execute("UPDATE search_rows SET terms = ?", (old.tobytes(),))
        tx.execute("DELETE FROM meta WHERE key = 'bm25_terms_format'")
    db.close()
    # When memlane opens it again
    db = SqliteDatabase(path)
    idx = SqliteSearchIndex(db, EMB.dimension)
    # Then the rows hold the same terms with an empty context column, and are found as before
    assert db.connection().execute("SELECT terms FROM search_rows").fetchone()["terms"] == stored
    assert [c.chunk_id for c in idx.search(_scope(), "kestrel birds", None, 5).text] == [chunks[0].id]
    db.close()


def _text_leg(idx: SqliteSearchIndex, scope: SearchScope, queries=QUERIES, k=50) -> dict[str, list]:
    return {q: [(c.chunk_id, c.score) for c in idx.search(scope, q, None, k).text] for q in queries}


def _skewed_corpus(idx: SqliteSearchIndex, org: str, project: str, rng: random.Random, docs: int) -> None:
    """Long chunks heavy in a few of the shared words: they would make those words common, and the
    average chunk long, in an index-wide count."""
    for _ in range(docs):
        body = " ".join(rng.choices(WORDS[:4], k=rng.randint(60, 120)))
        _, chunks = _chunks(org, project, body, title="bulk")
        _index(idx, chunks)


def test_a_projects_ranking_and_scores_do_not_move_when_another_project_or_tenant_saves(db):
    # Given a project with its own chunks, searched once
    idx = SqliteSearchIndex(db, EMB.dimension)
    _random_corpus(idx, random.Random(21), 120)
    before = _text_leg(idx, _scope())
    assert sum(len(v) for v in before.values()) > 200
    # When another project of the same organization, and another organization (with a project of
    # the same name), save many long chunks full of the project's words
    rng = random.Random(22)
    _skewed_corpus(idx, "o", "elsewhere", rng, 150)
    _skewed_corpus(idx, "other-org", "p", rng, 150)
    # Then every query ranks the same chunks with the same scores (BM25's N, df and avgdl come from
    # the project searched, not from the whole index: no other tenant's saves show in its scores)
    assert _text_leg(idx, _scope()) == before
    # and the same holds for a process that loads the index afresh
    assert _text_leg(SqliteSearchIndex(db, EMB.dimension), _scope()) == before
    # while the other organization's project of the same name is scored over its own rows
    theirs = idx.search(_scope("other-org"), "kestrel", None, 5).text
    assert theirs and all(c.score != s for c, (_, s) in zip(theirs, before["kestrel"], strict=False))


def test_a_projects_scores_are_fts5_bm25_over_that_project_alone(tmp_path):
    # Given the same project written into an index of its own and into one shared with other
    # projects and organizations
    alone, shared = SqliteDatabase(tmp_path / "alone.db"), SqliteDatabase(tmp_path / "shared.db")
    idx_alone, idx_shared = SqliteSearchIndex(alone, EMB.dimension), SqliteSearchIndex(shared, EMB.dimension)
    _random_corpus(idx_alone, random.Random(31), 150)
    rng = random.Random(32)
    _skewed_corpus(idx_shared, "o", "before", rng, 60)
    _random_corpus(idx_shared, random.Random(31), 150)
    _skewed_corpus(idx_shared, "x", "p", rng, 60)
    # Then the shared index scores the project as FTS5's bm25() scores the index holding it alone
    # (document ids are random, so the two indexes are compared by their scores, best first)
    for q in QUERIES:
        got = [round(c.score, 9) for c in idx_shared.search(_scope(), q, None, 30).text]
        assert got == [round(s, 9) for _, s in _fts5_reference(alone, q, 30)], q
        assert got == [round(c.score, 9) for c in idx_alone.search(_scope(), q, None, 30).text], q
    # and a scope of two projects counts both: as FTS5 over an index holding the two
    both = SqliteDatabase(tmp_path / "both.db")
    idx_both = SqliteSearchIndex(both, EMB.dimension)
    _random_corpus(idx_both, random.Random(31), 150)
    _skewed_corpus(idx_both, "o", "before", random.Random(32), 60)
    for q in QUERIES:
        got = [round(c.score, 9) for c in idx_shared.search(_scope("o", ("p", "before")), q, None, 30).text]
        want = [round(s, 9) for _, s in _fts5_reference(both, q, 30)]
        assert got == want, q
    for d in (alone, shared, both):
        d.close()


def test_filters_choose_rows_but_do_not_change_their_scores(db):
    # Given a project of text and code chunks
    md = SqliteMetadataStore(db)
    idx = SqliteSearchIndex(db, EMB.dimension)
    rng = random.Random(41)
    code = set()
    for i in range(80):
        doc, chunks = _chunks(
            "o", "p", " ".join(rng.choices(WORDS, k=rng.randint(3, 30))),
            content_type=ContentType.CODE if i % 4 == 0 else ContentType.TEXT,
        )
        md.put_document(doc)
        _index(idx, chunks)
        if i % 4 == 0:
            code.update(c.id for c in chunks)
    everything = _text_leg(idx, _scope(), k=100)
    # When the text leg is asked for code only
    only_code = _text_leg(idx, _scope(filters=RecallFilters(content_types=(ContentType.CODE,))), k=100)
    # Then it returns the code chunks, each with the score it has unfiltered: the statistics are the
    # project's (a filter admitting a handful of rows would leave an idf that measures nothing)
    assert sum(len(v) for v in only_code.values()) > 20
    for q in QUERIES:
        assert only_code[q] == [(c, s) for c, s in everything[q] if c in code], q


def test_a_projects_bm25_does_not_move_when_another_project_of_its_organization_saves(tmp_path):
    # Given a project written alone into one index and, into another, beside a second project of the
    # same organization whose long chunks are full of the same words
    alone, shared = SqliteDatabase(tmp_path / "alone.db"), SqliteDatabase(tmp_path / "shared.db")
    idx_alone, idx_shared = SqliteSearchIndex(alone, EMB.dimension), SqliteSearchIndex(shared, EMB.dimension)
    for idx in (idx_alone, idx_shared):
        _random_corpus(idx, random.Random(51), 100)
    _skewed_corpus(idx_shared, "o", "notes", random.Random(52), 150)
    assert sum(len(idx_shared.search(_scope(), q, None, 30).text) for q in QUERIES) > 20
    for q in QUERIES:
        got = idx_shared.search(_scope(), q, None, 30).text
        # Then each text candidate's score, which relevance reads too (memlane.recall.relevance), is
        # FTS5's bm25() over the index holding that project alone
        by_text = dict(_fts5_reference(alone, q, 1000))
        own = idx_alone.search(_scope(), q, None, 30).text
        assert [round(c.score, 9) for c in got] == [round(c.score, 9) for c in own], q
        assert all(round(c.score, 9) == round(by_text[c.chunk_id], 9) for c in own), q
    for d in (alone, shared):
        d.close()


def test_postings_keep_new_writes_in_sorted_runs_and_leave_the_main_arrays_alone(monkeypatch):
    # Given postings folded into the main arrays, then written to in many small batches, some rows dying
    monkeypatch.setattr(bm25.Postings, "FOLD_AT", 100)
    rng = np.random.default_rng(3)
    n_rows = 20_000
    alive = np.zeros(n_rows, dtype=bool)
    want: dict[int, dict[int, float]] = {}
    p = bm25.Postings()

    def write(first: int, count: int) -> None:
        rows = np.repeat(np.arange(first, first + count, dtype=np.int32), 6)
        keys = rng.integers(0, 300, size=rows.size).astype(np.int64)
        freq = rng.integers(1, 5, size=rows.size).astype(np.float32)
        alive[first : first + count] = True
        for k, r, f in zip(keys.tolist(), rows.tolist(), freq.tolist(), strict=True):
            want.setdefault(k, {})
            want[k][r] = want[k].get(r, 0.0) + f
        # the postings take one (term, row) pair once, as a row's terms are counted per term
        pairs = np.unique(np.stack([keys, rows.astype(np.int64)]), axis=1)
        merged = {(k, r): want[k][r] for k, r in zip(pairs[0].tolist(), pairs[1].tolist(), strict=True)}
        p.add(pairs[0], pairs[1].astype(np.int32), np.asarray([merged[(k, r)] for k, r in zip(
            pairs[0].tolist(), pairs[1].tolist(), strict=True)], dtype=np.float32))

    write(0, 10_000)
    p.fold(alive)
    main_rows = p.rows
    for first in range(10_000, 14_000, 20):
        write(first, 20)
        p.settle(alive)
    alive[rng.choice(14_000, size=1_500, replace=False)] = False
    for first in range(14_000, 15_000, 20):
        write(first, 20)
        p.settle(alive)
    # Then the main arrays were never rewritten, the runs stay few (each at most half the one before)
    assert p.rows is main_rows
    runs = [run[2].size for run in p._runs]
    assert 1 <= len(runs) <= 8 and all(a > b for a, b in zip(runs, runs[1:], strict=False))
    assert p.tail_size <= bm25.Postings.FOLD_AT

    # and every term's live postings are found, with their frequencies, before and after a fold
    def live_postings(key: int) -> dict[int, float]:
        rows, freq = p.lookup(key)
        return {int(r): float(f) for r, f in zip(rows, freq, strict=True) if alive[r]}

    expected = {k: {r: f for r, f in v.items() if alive[r]} for k, v in want.items()}
    assert {k: live_postings(k) for k in expected} == expected
    p.fold(alive)
    assert p.pending == 0 and not p._runs
    assert {k: live_postings(k) for k in expected} == expected
    assert alive[p.rows].all()  # dead rows' postings were dropped
