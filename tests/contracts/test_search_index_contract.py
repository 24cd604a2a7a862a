"""The SearchIndex contract: the scope (tenant, projects, expiry, versions, content types, time,
tags) applied inside both legs; upserts by chunk id; deletes that leave no row behind.

Adapters: SQLite (the embedded default), OpenSearchIndex on osmem-server (an in-memory
OpenSearch-compatible server on loopback), S3VectorsIndex on moto with the QueryVectors of
tests/s3vectors_fake.py (every request checked against botocore's service model) and the in-memory
fake. Two honest differences:

* osmem-server has no k-NN, so the vector-leg cases run on SQLite and the fake only; the k-NN
  request body (the same scope filter inside the knn clause) is checked in
  tests/aws/test_aws_opensearch_index.py.
* OpenSearch makes writes searchable at its refresh interval (~1 s) and the local index at once;
  the harness refreshes after writes, as waiting for the interval would.
* The local index resolves the tag filter against the documents' tags in the same database (the
  write path saves the document before indexing it), so its harness saves each document too.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memory_stores import MemorySearchIndex

from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.adapters.local.search_index import SqliteSearchIndex
from memlane.domain.errors import EmbedderMismatchError, IdTakenError
from memlane.domain.facts import Kind
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, chunk_id_for
from memlane.ports import UNKNOWN_KIND, IndexedChunk, LegResults, RecallFilters, SearchScope

pytestmark = pytest.mark.integration
# the fixtures they need are in tests/contracts/conftest.py; "sqlite-ann" is the embedded index with
# its vector leg on the HNSW partitions from the first row, every scope searched through the graphs
ADAPTERS = ["sqlite", "sqlite-ann", "aws", "s3vectors", "memory"]

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=2)
A, B = "org-a", "org-b"
EMBEDDER = "test/contract/4"
DIM = 4
NEAR, FAR, ORTHOGONAL = (1.0, 0.0, 0.0, 0.0), (0.6, 0.8, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0)


@dataclass
class Index:
    index: Any
    vectors: bool  # whether the engine answers the k-NN leg
    settle: Any = lambda: None  # what the refresh interval does
    metadata: Any = None  # the local index's own database, for the tag filter
    docs: set[str] = field(default_factory=set)
    # makes the named documents' rows look written by a memlane from before the index held kinds
    unkind: Any = None

    def write(self, items: Sequence[IndexedChunk], embedder: str = EMBEDDER) -> None:
        if self.metadata is not None:
            for item in items:
                c = item.chunk
                if c.document_id not in self.docs:
                    self.docs.add(c.document_id)
                    self.metadata.put_document(
                        Document(
                            id=c.document_id,
                            organization_id=c.organization_id,
                            project_id=c.project_id,
                            user_id="u",
                            title=c.title,
                            metadata={"tags": c.tags},
                            status=DocumentStatus.READY,
                            created_at=c.created_at,
                        )
                    )
        self.index.upsert(embedder, items)
        self.settle()

    def search(
        self,
        query: str,
        vector: Sequence[float] | None = None,
        k: int = 50,
        org: str = A,
        projects: tuple[str, ...] = ("proj-a", "proj-b"),
        created_until: datetime | None = None,
        **filters: Any,
    ) -> LegResults:
        scope = SearchScope(org, projects, RecallFilters(**filters), now=NOW, created_until=created_until)
        return self.index.search(scope, query, vector if self.vectors else None, k)

    def found(self, query: str = "backoff", **kwargs: Any) -> tuple[set[str], set[str] | None]:
        """The documents each leg returns (the vector leg's as None where the engine has none)."""
        legs = self.search(query, NEAR, **kwargs)
        text = {c.document_id for c in legs.text}
        return text, ({c.document_id for c in legs.vector} if self.vectors else None)


@pytest.fixture(scope="module")
def osmem() -> Iterator[Any]:
    osmem_server = pytest.importorskip("osmem_server", reason="osmem-server is not installed")
    server = osmem_server.OsmemServer.start(japanese=False)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(params=ADAPTERS)
def idx(request: pytest.FixtureRequest) -> Iterator[Index]:
    if request.param == "sqlite":
        db = request.getfixturevalue("sqlite_db")
        yield Index(SqliteSearchIndex(db, DIM), vectors=True, metadata=SqliteMetadataStore(db),
                    unkind=_sqlite_unkind(db))
    elif request.param == "sqlite-ann":
        from memlane.adapters.local import search_legs

        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setattr(search_legs, "GATHER_AT_MOST", 0)
        db = request.getfixturevalue("sqlite_db")
        yield Index(SqliteSearchIndex(db, DIM, ann_at=1), vectors=True, metadata=SqliteMetadataStore(db),
                    unkind=_sqlite_unkind(db))
    elif request.param == "aws":
        from opensearchpy import OpenSearch

        from memlane.adapters.aws.opensearch_index import OpenSearchIndex

        with request.getfixturevalue("osmem").clone() as clone:
            client = OpenSearch(hosts=[clone.url], timeout=10)
            index = OpenSearchIndex(client, "memlane-chunks", DIM)
            index.ensure_index()
            yield Index(index, vectors=False, settle=lambda: client.indices.refresh(index="memlane-chunks"),
                        unkind=_opensearch_unkind(client, "memlane-chunks"))
    elif request.param == "s3vectors":
        yield _s3vectors_index(request)
    else:
        memory = MemorySearchIndex(DIM)
        yield Index(memory, vectors=True, metadata=None, unkind=_memory_unkind(memory))


def _s3vectors_index(request: pytest.FixtureRequest) -> Index:
    """S3VectorsIndex on a new vector bucket in moto, QueryVectors from the fake."""
    from s3vectors_fake import FakeS3Vectors

    from memlane.adapters.aws._boto import new_client
    from memlane.adapters.aws.s3vectors_index import S3VectorsIndex

    request.getfixturevalue("aws")
    fake = FakeS3Vectors(new_client("s3vectors"))
    bucket = f"memlane-vectors-{uuid.uuid4().hex[:12]}"
    fake.create_vector_bucket(vectorBucketName=bucket)
    index = S3VectorsIndex(fake, bucket, DIM)
    return Index(index, vectors=True, unkind=_s3vectors_unkind(index))


def _s3vectors_unkind(index: Any) -> Any:
    def unkind(doc_ids: Sequence[str]) -> None:  # vectors written without a kind (ports.UNKNOWN_KIND)
        name = index.index_for(A)
        keys = [chunk_id_for(d, i) for d in doc_ids for i in range(3)]
        found = index.client.get_vectors(vectorBucketName=index.bucket, indexName=name, keys=keys,
                                         returnData=True, returnMetadata=True)["vectors"]
        index.client.put_vectors(vectorBucketName=index.bucket, indexName=name, vectors=[
            {"key": v["key"], "data": v["data"], "metadata": {**v["metadata"], "kind": UNKNOWN_KIND}} for v in found])
    return unkind


def _sqlite_unkind(db: Any) -> Any:
    def unkind(doc_ids: Sequence[str]) -> None:  # an older memlane's rows: no kind column value
        with db.transaction() as conn:
            seq = int(conn.execute("SELECT value FROM meta WHERE key = 'index_seq'").fetchone()["value"]) + 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'index_seq'", (str(seq),))
            conn.execute(f"UPDATE search_rows SET kind = NULL, seq = ? WHERE document_id IN ({','.join('?' * len(doc_ids))})",
                         (seq, *doc_ids))
    return unkind


def _opensearch_unkind(client: Any, alias: str) -> Any:
    def unkind(doc_ids: Sequence[str]) -> None:  # an older memlane's documents: no `kind` field
        found = client.search(index=alias, body={"query": {"terms": {"document_id": list(doc_ids)}}, "size": 100})
        for hit in found["hits"]["hits"]:
            source = {k: v for k, v in hit["_source"].items() if k != "kind"}
            client.index(index=alias, id=hit["_id"], body=source)
        client.indices.refresh(index=alias)
    return unkind


def _memory_unkind(memory: MemorySearchIndex) -> Any:
    def unkind(doc_ids: Sequence[str]) -> None:
        for row in memory._rows.values():
            if row.chunk.document_id in doc_ids:
                row.kind = UNKNOWN_KIND
    return unkind


def chunk(
    doc_id: str, content: str, org: str = A, i: int = 0, vector: Sequence[float] = NEAR, kind: Kind = "memory",
    **overrides: Any,
) -> IndexedChunk:
    fields: dict[str, Any] = {
        "id": chunk_id_for(doc_id, i),
        "document_id": doc_id,
        "organization_id": org,
        "project_id": "proj-a",
        "content": content,
        "chunk_index": i,
        "chunk_count": 1,
        "start_offset": 0,
        "end_offset": len(content),
        "title": "Notes",
        "content_type": ContentType.MARKDOWN,
        "created_at": T0,
    }
    return IndexedChunk(Chunk(**{**fields, **overrides}), list(vector), kind=kind)


# ----------------------------------------------------------------------------- tenants and projects


def test_another_organizations_chunks_are_never_returned_by_either_leg(idx: Index) -> None:
    # Given the same words and vectors in org A and org B, and many better matches in org B
    idx.write(
        [
            chunk("doc-a", "Exponential backoff avoids throttling."),
            chunk("doc-b", "Exponential backoff avoids throttling.", org=B),
            *(chunk(f"doc-b{i}", "backoff backoff backoff", org=B) for i in range(30)),
        ]
    )
    # When org A searches with a small k
    legs = idx.search("backoff", NEAR, k=5)
    # Then it finds its own chunk in each leg, and nothing of org B's
    assert [c.document_id for c in legs.text] == ["doc-a"]
    if idx.vectors:
        assert [c.document_id for c in legs.vector] == ["doc-a"]
    # and org B, asking for org A's project, sees only its own
    theirs = idx.search("backoff", NEAR, org=B, k=50)
    assert {c.document_id for c in theirs.text} == {"doc-b", *(f"doc-b{i}" for i in range(30))}
    assert idx.search("backoff", NEAR, org="org-c").text == []


def test_a_chunk_another_organization_holds_is_never_overwritten(idx: Index) -> None:
    """Issue 34, finding 1: the chunk id is derived from the document id alone, and a write under
    another organization's id replaced its row (SQLite) or its OpenSearch document (`_id` = chunk
    id). An adapter refuses such a write (IdTakenError) or keeps it apart under the writer's
    organization; the holder's chunk never changes."""
    idx.write([chunk("doc-held", "Exponential backoff with jitter spreads retries.", org=A)])
    with contextlib.suppress(IdTakenError):
        idx.write([chunk("doc-held", "Forged notes about harbour tides.", org=B, vector=ORTHOGONAL)])
    # Then A's chunk is found by its own words on both legs, and the forged words find nothing of A's
    assert idx.found("backoff jitter") == ({"doc-held"}, {"doc-held"} if idx.vectors else None)
    assert idx.found("harbour tides") == (set(), {"doc-held"} if idx.vectors else None)
    legs = idx.search("backoff", NEAR if idx.vectors else None)
    assert [c.chunk_id for c in legs.text] == [chunk_id_for("doc-held", 0)]
    if idx.vectors:
        assert legs.vector[0].score == pytest.approx(1.0, abs=1e-6)  # A's vector, not B's orthogonal one


def test_only_the_projects_in_scope_are_searched(idx: Index) -> None:
    idx.write(
        [
            chunk("in-a", "backoff"),
            chunk("in-b", "backoff", project_id="proj-b"),
            chunk("in-z", "backoff", project_id="proj-z"),
        ]
    )
    assert idx.found() == ({"in-a", "in-b"}, {"in-a", "in-b"} if idx.vectors else None)
    assert idx.found(projects=("proj-b",)) == ({"in-b"}, {"in-b"} if idx.vectors else None)


# ----------------------------------------------------------------------------- filters


def test_every_scope_filter_applies_in_both_legs(idx: Index) -> None:
    idx.write(
        [
            chunk("plain", "backoff"),
            chunk("code", "backoff", content_type=ContentType.CODE, tags=["python"]),
            chunk("tagged", "backoff", tags=["AWS", "sdk"], created_at=T0 + timedelta(days=1)),
            chunk("expired", "backoff", forget_after=NOW - timedelta(minutes=1)),
            chunk("expires-now", "backoff", forget_after=NOW),
            chunk("expires-later", "backoff", forget_after=NOW + timedelta(days=1)),
        ]
    )

    def both(**filters: Any) -> set[str]:
        text, vector = idx.found(**filters)
        assert vector is None or vector == text, filters  # one scope, the same in both legs
        return text

    assert both() == {"plain", "code", "tagged", "expires-later"}
    assert both(content_types=(ContentType.CODE, ContentType.HTML)) == {"code"}
    # created_after is strict: the chunks created at T0 itself are not after it
    assert both(created_after=T0) == {"tagged"}
    assert both(created_after=T0 - timedelta(microseconds=1)) == {"plain", "code", "tagged", "expires-later"}
    # tags: any of them, whatever their case
    assert both(tags=("aws", "python")) == {"code", "tagged"}
    assert both(tags=("SDK",)) == {"tagged"}
    assert both(tags=("nothing",)) == set()


def test_the_kind_filter_applies_in_both_legs_so_a_page_of_facts_is_full(idx: Index) -> None:
    # Given 3 facts among 40 messages that match the query better, and a plain memory
    idx.write(
        [
            *(chunk(f"message-{i}", "backoff backoff backoff retries", kind="message") for i in range(40)),
            *(chunk(f"fact-{i}", "the user prefers backoff", vector=FAR, kind="fact") for i in range(3)),
            chunk("plain", "backoff notes", vector=FAR),
        ]
    )
    facts = {"fact-0", "fact-1", "fact-2"}
    # When a search asks for facts with k=3, each leg returns the 3 facts and nothing else
    legs = idx.search("backoff", NEAR, k=3, kinds=("fact",))
    assert {c.document_id for c in legs.text} == facts
    if idx.vectors:
        assert {c.document_id for c in legs.vector} == facts
    # several kinds: any of them
    text, vector = idx.found(kinds=("fact", "memory"))
    assert text == {*facts, "plain"} and vector in (None, {*facts, "plain"})
    # no kind filter: every kind
    assert len(idx.found()[0]) == 44
    # a kind nothing has is nothing
    assert idx.found(kinds=("nothing",)) == (set(), set() if idx.vectors else None)


def test_as_of_leaves_out_chunks_created_after_it_and_sees_every_version(idx: Index) -> None:
    # Given a fact superseded by a newer version a day later, and many messages after that
    idx.write(
        [
            chunk("paris", "Alice lives in Paris", kind="fact", superseded=True),
            chunk("berlin", "Alice lives in Berlin", kind="fact", created_at=T0 + timedelta(days=1)),
            *(chunk(f"later-{i}", "Alice Alice lives lives", kind="message", created_at=T0 + timedelta(days=1, hours=1))
              for i in range(20)),
        ]
    )
    # When the legs search as of T0 (recall's as_of: every version, nothing created after it)
    legs = idx.search("Alice lives", NEAR, k=3, created_until=T0, include_superseded=True, kinds=("fact",))
    # Then only the version current then is there, however many newer chunks match better
    assert {c.document_id for c in legs.text} == {"paris"}
    if idx.vectors:
        assert {c.document_id for c in legs.vector} == {"paris"}
    # the bound is inclusive, and a later one sees both versions
    text, _ = idx.found("Alice lives", created_until=T0 + timedelta(days=1), include_superseded=True, kinds=("fact",))
    assert text == {"paris", "berlin"}


def test_rows_indexed_before_kinds_pass_every_kind_filter_until_written_again(idx: Index) -> None:
    # Given a fact and a message indexed by a memlane whose index held no kind
    idx.write([chunk("old-fact", "backoff", kind="fact"), chunk("old-message", "backoff", kind="message"),
               chunk("new-message", "backoff", kind="message")])
    idx.unkind(["old-fact", "old-message"])
    # Then a kind filter cannot tell them apart: both pass (recall checks their documents' kind)
    assert idx.found(kinds=("fact",))[0] == {"old-fact", "old-message"}
    # and once written again (memlane reindex), each is filtered by its kind
    idx.write([chunk("old-fact", "backoff", kind="fact"), chunk("old-message", "backoff", kind="message")])
    text, vector = idx.found(kinds=("fact",))
    assert text == {"old-fact"} and vector in (None, {"old-fact"})


def test_superseded_versions_are_hidden_unless_asked_for(idx: Index) -> None:
    # Given an old version indexed as superseded, and a version superseded after indexing
    idx.write(
        [
            chunk("v1", "lantern", superseded=True),
            chunk("v2", "lantern"),
            chunk("v3", "lantern"),
            chunk("theirs", "lantern", org=B),
        ]
    )
    idx.index.set_superseded(A, "v2", True)
    idx.index.set_superseded(B, "v3", True)  # another tenant cannot hide org A's document
    idx.settle()
    assert idx.found("lantern") == ({"v3"}, {"v3"} if idx.vectors else None)
    assert idx.found("lantern", include_superseded=True)[0] == {"v1", "v2", "v3"}
    # When the newer version is deleted, the older one is the latest again
    idx.index.set_superseded(A, "v2", False)
    idx.settle()
    assert idx.found("lantern")[0] == {"v2", "v3"}


# ----------------------------------------------------------------------------- writes


def test_upserts_are_idempotent_and_replace_a_chunks_text(idx: Index) -> None:
    items = [chunk("doc-1", f"part {i} of the circuit breaker guide", i=i) for i in range(3)]
    # When the same chunks are written twice (a redelivered message) and another document once
    idx.write(items)
    idx.write(items)
    idx.write([chunk("doc-2", "circuit breaker")])
    # Then each chunk is there once
    text = idx.search("circuit breaker").text
    assert sorted(c.chunk_id for c in text) == sorted(
        [*(i.chunk.id for i in items), chunk_id_for("doc-2", 0)]
    )
    assert idx.index.document_ids(A) == {"doc-1", "doc-2"}
    # When a chunk is rewritten with other words, the old words no longer find it
    idx.write([chunk("doc-1", "bulkhead isolation", i=0)])
    assert {(c.document_id, c.chunk_index) for c in idx.search("circuit").text} == {
        ("doc-1", 1),
        ("doc-1", 2),
        ("doc-2", 0),
    }
    assert [(c.document_id, c.chunk_index) for c in idx.search("bulkhead").text] == [("doc-1", 0)]


def test_deleting_a_document_removes_every_row_from_both_legs(idx: Index) -> None:
    idx.write(
        [*(chunk("doc-1", "circuit breaker", i=i) for i in range(3)), chunk("doc-2", "circuit breaker")]
    )
    idx.write([chunk("doc-1", "circuit breaker", org=B, i=5)])
    # When another tenant deletes the document's id, nothing of org A's goes
    idx.index.delete_document(B, "doc-1")
    idx.settle()
    assert idx.index.document_ids(A) == {"doc-1", "doc-2"} and idx.index.document_ids(B) == set()
    # When its own tenant deletes it
    idx.index.delete_document(A, "doc-1")
    idx.index.delete_document(A, "doc-1")  # a retried delete
    idx.settle()
    assert idx.found("circuit breaker") == ({"doc-2"}, {"doc-2"} if idx.vectors else None)
    assert idx.index.document_ids() == {"doc-2"}
    idx.index.delete_document(A, "never-indexed")


def test_vectors_from_another_embedder_are_refused(idx: Index) -> None:
    idx.write([chunk("doc-1", "backoff")])
    with pytest.raises(EmbedderMismatchError):
        idx.index.upsert("another/model/4", [chunk("doc-2", "backoff")])
    with pytest.raises(EmbedderMismatchError):
        idx.index.upsert(EMBEDDER, [chunk("doc-3", "backoff", vector=(1.0, 0.0, 0.0))])
    assert idx.index.document_ids(A) == {"doc-1"}


# ----------------------------------------------------------------------------- ranking


def test_the_text_leg_returns_at_most_k_best_first_with_what_the_ranking_needs(idx: Index) -> None:
    created = T0 + timedelta(hours=3, microseconds=500)
    idx.write(
        [
            chunk("once", "a note that mentions jitter once among many other words here"),
            chunk("in-title", "a note about many other words", title="Jitter", created_at=created),
            chunk("twice", "jitter and more jitter", i=2),
            chunk("none", "nothing relevant at all"),
        ]
    )
    results = idx.search("jitter", k=2).text
    assert len(results) == 2
    assert results[0].score >= results[1].score > 0
    assert {c.document_id for c in idx.search("jitter").text} == {"once", "in-title", "twice"}
    best = {c.document_id: c for c in idx.search("jitter").text}
    assert best["in-title"].score > best["once"].score  # a word in the title counts more
    assert (best["twice"].chunk_id, best["twice"].chunk_index) == (chunk_id_for("twice", 2), 2)
    assert best["in-title"].created_at == created
    assert idx.search("", k=5).text == []


def test_context_is_matched_below_a_chunks_own_words_and_replaced_with_it(idx: Index) -> None:
    # Given a memory that says "jitter" itself, and one whose context (the memory saved before it)
    # does, in the same number of own words
    own = chunk("own", "we added jitter to the retries")
    answer = chunk("answer", "yes it fixed the thundering herd")
    idx.write([own, IndexedChunk(answer.chunk, answer.vector, context="did you add jitter to the retries?")])
    # When the text leg looks for a context word
    results = idx.search("jitter").text
    # Then both are found, the memory's own words first
    assert [c.document_id for c in results] == ["own", "answer"]
    assert results[0].score > results[1].score > 0
    # and the context is not the memory's text: its own words find it alone
    assert [c.document_id for c in idx.search("herd").text] == ["answer"]
    # When the entry is written again with another context (its neighbour was deleted)
    idx.write([IndexedChunk(answer.chunk, answer.vector, context="")])
    # Then the old context no longer finds it
    assert [c.document_id for c in idx.search("jitter").text] == ["own"]


def test_the_vector_leg_returns_the_nearest_chunks_first_with_their_cosine(idx: Index) -> None:
    if not idx.vectors:
        pytest.skip(
            "osmem-server has no k-NN; the knn body is checked in tests/aws/test_aws_opensearch_index.py"
        )
    idx.write(
        [
            chunk("far", "x", vector=FAR),
            chunk("orthogonal", "y", vector=ORTHOGONAL),
            chunk("near", "z", vector=NEAR),
        ]
    )
    results = idx.search("", NEAR, k=2).vector
    assert [c.document_id for c in results] == ["near", "far"]
    assert [round(c.score, 4) for c in results] == [1.0, 0.6]
    assert [c.document_id for c in idx.search("", NEAR, k=10).vector] == ["near", "far", "orthogonal"]


# osmem-server has no k-NN, so there is no vector leg to fill from: tests/aws covers OpenSearch's fill
@pytest.mark.parametrize("idx", [a for a in ADAPTERS if a != "aws"], indirect=True)
def test_each_legs_candidates_are_scored_on_the_other_leg_too(idx: Index) -> None:
    # Given chunks near the query vector that barely (or never) say the word, and chunks that say it
    # often but point elsewhere
    idx.write(
        [
            chunk("near-says-it", "one note that mentions backoff once among many other words of its own", vector=NEAR),
            chunk("near-silent", "a note about retries and queues", vector=(0.99, 0.141, 0.0, 0.0)),
            chunk("far-loud", "backoff backoff backoff", vector=FAR),
            chunk("far-louder", "backoff backoff backoff backoff", vector=(0.5, 0.866, 0.0, 0.0)),
            chunk("elsewhere", "backoff backoff", vector=ORTHOGONAL),
        ]
    )
    legs = idx.search("backoff", NEAR, k=2)
    full = idx.search("backoff", NEAR, k=50)
    cosine = {c.document_id: c.score for c in full.vector}
    bm25 = {c.document_id: c.score for c in full.text}
    # Then each leg's own top two come first
    assert [c.document_id for c in legs.vector[:2]] == ["near-says-it", "near-silent"]
    assert [c.document_id for c in legs.text[:2]] == ["far-louder", "far-loud"]
    # and every chunk the text leg returned is in the vector leg with its cosine, the near chunk that
    # says the word once is in the text leg with its BM25, and the one that never says it is not
    assert {c.document_id: round(c.score, 6) for c in legs.vector} == {
        d: round(cosine[d], 6) for d in ("near-says-it", "near-silent", "far-louder", "far-loud")}
    assert {c.document_id: round(c.score, 6) for c in legs.text} == {
        d: round(bm25[d], 6) for d in ("far-louder", "far-loud", "near-says-it")}
    assert bm25["near-says-it"] < bm25["far-loud"] and cosine["far-louder"] < cosine["near-silent"]
    # best first in both lists
    assert [c.score for c in legs.vector] == sorted((c.score for c in legs.vector), reverse=True)
    assert [c.score for c in legs.text] == sorted((c.score for c in legs.text), reverse=True)


def test_holdings_count_what_each_leg_still_has_of_a_document(idx: Index) -> None:
    idx.write([chunk("doc-1", "circuit breaker", i=i) for i in range(3)])
    idx.write([chunk("doc-2", "circuit breaker")])
    idx.settle()
    held = idx.index.holdings("doc-1")
    assert held.text >= 3 and held.vector >= 3
    idx.index.delete_document(A, "doc-1")
    idx.settle()
    assert (idx.index.holdings("doc-1").text, idx.index.holdings("doc-1").vector) == (0, 0)
    assert idx.index.holdings("doc-2").vector >= 1
    assert (idx.index.holdings("never-indexed").text, idx.index.holdings("never-indexed").vector) == (0, 0)
