"""OpenSearchIndex against osmem-server: an in-memory OpenSearch-compatible server bundled in the
`osmem-server` wheel, started on 127.0.0.1. It has no k-NN, so these tests cover the mapping, the
aliases, bulk writes, the BM25 leg with its filters, deletes and the doctor's aggregation; the
k-NN request bodies are checked in test_aws_opensearch_index.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import OpenSearch

from memlane.adapters.aws.opensearch_index import OpenSearchIndex, index_body
from memlane.adapters.aws.opensearch_mapping import chunk_source
from memlane.domain.errors import EmbedderMismatchError, IdTakenError
from memlane.domain.facts import Kind
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.ports import IndexedChunk, RecallFilters, SearchScope

pytestmark = pytest.mark.integration

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=2)
ALIAS = "memlane-chunks"
EMBEDDER = "bedrock/amazon.titan-embed-text-v2:0/1024"
DIM = 4


@pytest.fixture
def client(osmem: Any) -> Iterator[OpenSearch]:
    with osmem.clone() as clone:
        yield OpenSearch(hosts=[clone.url], timeout=10)


@pytest.fixture
def index(client: OpenSearch) -> OpenSearchIndex:
    search_index = OpenSearchIndex(client, ALIAS, DIM, embedder_id=EMBEDDER)
    search_index.ensure_index()
    return search_index


def chunk(doc_id: str, i: int, content: str, org: str = "org-a", kind: Kind = "memory", **overrides: Any) -> IndexedChunk:
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
    fields.update(overrides)
    return IndexedChunk(Chunk(**fields), [1.0, 0.0, 0.0, 0.0], kind=kind)


def text_hits(index: OpenSearchIndex, query: str, **filters: Any) -> list[str]:
    scope = SearchScope("org-a", ("proj-a", "proj-b"), RecallFilters(**filters), now=NOW)
    return [c.document_id for c in index.search(scope, query, None, 50).text]


def test_ensure_index_creates_the_mapping_behind_the_alias(
    client: OpenSearch, index: OpenSearchIndex
) -> None:
    mapping = client.indices.get_mapping(index=ALIAS)
    assert list(mapping) == ["memlane-chunks-v1"]
    created = mapping["memlane-chunks-v1"]["mappings"]
    expected = index_body(DIM, EMBEDDER)["mappings"]
    assert created["_meta"] == expected["_meta"]
    for name in ("text", "title", "heading_path", "organization_id", "tags", "created_at", "chunk_index"):
        assert created["properties"][name] == expected["properties"][name]
    vector = created["properties"]["vector"]
    assert (vector["type"], vector["dimension"], vector["method"]) == (
        "knn_vector",
        DIM,
        expected["properties"]["vector"]["method"],
    )
    assert client.indices.get_alias(name=ALIAS) == {"memlane-chunks-v1": {"aliases": {ALIAS: {}}}}
    assert index.recorded_embedder() == EMBEDDER


def test_bm25_leg_finds_stemmed_words_within_the_tenant_only(
    client: OpenSearch, index: OpenSearchIndex
) -> None:
    # Given the same words in org A's and org B's chunks
    index.upsert(
        EMBEDDER,
        [
            chunk("doc-a", 0, "Retrying requests with exponential backoff avoids throttling."),
            chunk("doc-a2", 0, "Pagination tokens are opaque."),
            chunk("doc-b", 0, "Retrying requests with exponential backoff avoids throttling.", org="org-b"),
        ],
    )
    client.indices.refresh(index=ALIAS)  # what the ~1 s refresh interval does on a domain
    # When org A searches with another form of the words
    results = text_hits(index, "retries throttled")
    # Then the english analyzer matches them, and org B's identical chunk is not returned
    assert results == ["doc-a"]


def test_bm25_leg_applies_every_scope_filter(client: OpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(
        EMBEDDER,
        [
            chunk("plain", 0, "backoff"),
            chunk("code", 0, "backoff", content_type=ContentType.CODE, tags=["python"]),
            chunk("tagged", 0, "backoff", tags=["aws", "sdk"], created_at=T0 + timedelta(days=1)),
            chunk("other-project", 0, "backoff", project_id="proj-b"),
            chunk("unlisted-project", 0, "backoff", project_id="proj-z"),
            chunk("expired", 0, "backoff", forget_after=NOW - timedelta(minutes=1)),
            chunk("expires-later", 0, "backoff", forget_after=NOW + timedelta(days=1)),
        ],
    )
    client.indices.refresh(index=ALIAS)
    assert sorted(text_hits(index, "backoff")) == [
        "code",
        "expires-later",
        "other-project",
        "plain",
        "tagged",
    ]
    assert text_hits(index, "backoff", content_types=(ContentType.CODE,)) == ["code"]
    assert sorted(text_hits(index, "backoff", tags=("aws", "python"))) == ["code", "tagged"]
    assert text_hits(index, "backoff", created_after=T0) == ["tagged"]


def test_title_and_section_weigh_more_than_body(client: OpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(
        EMBEDDER,
        [
            chunk("in-body", 0, "A note that mentions jitter once among many other words here."),
            chunk("in-title", 0, "A note about many other words here.", title="Jitter"),
        ],
    )
    client.indices.refresh(index=ALIAS)
    scope = SearchScope("org-a", ("proj-a",), now=NOW)
    results = index.search(scope, "jitter", None, 10).text
    assert [c.document_id for c in results] == ["in-title", "in-body"]
    assert results[0].score > results[1].score > 0


def test_upsert_is_idempotent_and_delete_removes_the_document(
    client: OpenSearch, index: OpenSearchIndex
) -> None:
    items = [chunk("doc-1", i, f"part {i} of the circuit breaker guide") for i in range(3)]
    index.upsert(EMBEDDER, items)
    index.upsert(EMBEDDER, items)  # a redelivered message
    index.upsert(EMBEDDER, [chunk("doc-2", 0, "circuit breaker")])
    client.indices.refresh(index=ALIAS)
    assert client.count(index=ALIAS)["count"] == 4
    assert index.document_ids("org-a") == {"doc-1", "doc-2"}

    # Deleting as another tenant removes nothing
    index.delete_document("org-b", "doc-1")
    assert client.count(index=ALIAS)["count"] == 4

    index.delete_document("org-a", "doc-1")
    assert sorted(text_hits(index, "circuit breaker")) == ["doc-2"]  # no refresh needed after a delete
    assert index.document_ids() == {"doc-2"}


def test_document_ids_pages_through_many_documents(client: OpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(EMBEDDER, [chunk(f"doc-{i:04d}", 0, "x") for i in range(1_203)])
    index.upsert(EMBEDDER, [chunk("doc-b", 0, "x", org="org-b")])
    client.indices.refresh(index=ALIAS)
    ids = index.document_ids("org-a")
    assert len(ids) == 1_203 and "doc-b" not in ids
    assert len(index.document_ids()) == 1_204


def test_embedder_mismatch_is_read_from_the_index_meta(client: OpenSearch, index: OpenSearchIndex) -> None:
    other = OpenSearchIndex(client, ALIAS, DIM)
    with pytest.raises(EmbedderMismatchError) as caught:
        other.upsert("openai/text-embedding-3-small/1536", [chunk("doc-1", 0, "x")])
    assert EMBEDDER in caught.value.message and "memlane reindex" in caught.value.message


def test_swap_alias_moves_reads_to_the_new_index(client: OpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(EMBEDDER, [chunk("old-doc", 0, "rollout")])
    v2 = OpenSearchIndex(client, ALIAS, DIM, embedder_id="bedrock/amazon.titan-embed-text-v2:0/1024")
    v2.ensure_index(2)
    client.index(
        index="memlane-chunks-v2",
        id=chunk_id_for("new-doc", 0),
        body=chunk_source(chunk("new-doc", 0, "rollout")),  # filling v2 directly
        refresh=True,
    )
    client.indices.refresh(index=ALIAS)
    assert text_hits(index, "rollout") == ["old-doc"]
    assert index.swap_alias(2) == ["memlane-chunks-v1"]
    assert text_hits(index, "rollout") == ["new-doc"]
    assert list(client.indices.get_alias(name=ALIAS)) == ["memlane-chunks-v2"]


def test_identifier_words_let_the_english_analyzer_match_joined_names(
    client: OpenSearch, index: OpenSearchIndex
) -> None:
    from memlane.ingest.identifiers import index_words, query_identifier_words

    # Given the same function indexed with its identifiers' words (as the writer does for code when
    # MEMLANE_INDEX_IDENTIFIER_WORDS is on) and without them
    source = "def read_user_name(acct):\n    return acct.getDisplayName()\n"
    plain = chunk("plain", 0, source, content_type=ContentType.CODE)
    with_words = chunk("with-words", 0, source, content_type=ContentType.CODE)
    with_words = IndexedChunk(with_words.chunk, with_words.vector, identifiers=index_words(with_words.chunk))
    assert with_words.identifiers == "read user name acct get display name"
    index.upsert(EMBEDDER, [plain, with_words])
    client.indices.refresh(index=ALIAS)
    # The standard tokenizer keeps `read_user_name` whole: asked in words, only the chunk carrying
    # the words matches (the local FTS5 index splits `_` itself; camelCase neither does)
    assert text_hits(index, "user name") == ["with-words"]
    assert text_hits(index, "display") == ["with-words"]
    # and a query naming the identifier in another spelling finds it through its words
    assert text_hits(index, query_identifier_words("readUserName")) == ["with-words"]


def test_an_index_created_before_kinds_gets_the_field_on_its_next_write_and_filters_by_it(
    client: OpenSearch,
) -> None:
    # Given an index an older memlane created (strict mapping, no `kind`) holding a chunk without one
    body = index_body(DIM, EMBEDDER)
    del body["mappings"]["properties"]["kind"]
    client.indices.create(index="memlane-chunks-v1", body={**body, "aliases": {ALIAS: {}}})
    old = chunk("old-message", 0, "Alice talks about hiking")
    client.index(index=ALIAS, id=old.chunk.id, body={k: v for k, v in chunk_source(old).items() if k != "kind"},
                 refresh=True)
    # When this memlane writes a fact and a message
    index = OpenSearchIndex(client, ALIAS, DIM, embedder_id=EMBEDDER)
    index.upsert(EMBEDDER, [chunk("fact", 0, "Alice likes hiking", kind="fact"),
                            chunk("message", 0, "hiking with Alice", kind="message")])
    client.indices.refresh(index=ALIAS)
    # Then the field was added to the mapping first, and the filter tells them apart; the older chunk,
    # with no kind, passes (recall checks its document's kind) until it is written again
    assert client.indices.get_mapping(index=ALIAS)["memlane-chunks-v1"]["mappings"]["properties"]["kind"] == {
        "type": "keyword"}
    assert set(text_hits(index, "hiking", kinds=("fact",))) == {"fact", "old-message"}
    assert set(text_hits(index, "hiking", kinds=("message",))) == {"message", "old-message"}
    assert set(text_hits(index, "hiking")) == {"fact", "message", "old-message"}


def test_bm25_statistics_are_the_whole_index_s_on_opensearch(client: OpenSearch, index: OpenSearchIndex) -> None:
    """What docs/deploy.md says of the AWS text leg ("BM25 statistics on OpenSearch differ from the
    embedded default"): Lucene counts N and df over every document of the shard, so another
    organization's saves move org A's scores (never its results). The embedded default does not
    (tests/unit/test_bm25_index.py); if this starts failing, OpenSearch (or the stack) counts per
    tenant and the documentation should say so."""
    scope = SearchScope("org-a", ("proj-a",), RecallFilters(), now=NOW)
    index.upsert(EMBEDDER, [
        chunk("doc-a", 0, "The kestrel hovered over the meadow."),
        chunk("doc-a2", 0, "Lanterns line the harbour wall."),
    ])
    client.indices.refresh(index=ALIAS)
    before = [(c.document_id, c.score) for c in index.search(scope, "kestrel", None, 10).text]
    # When another organization saves many chunks holding the word
    index.upsert(EMBEDDER, [chunk(f"doc-b{i}", 0, f"A kestrel, sighting {i}.", org="org-b") for i in range(30)])
    client.indices.refresh(index=ALIAS)
    after = [(c.document_id, c.score) for c in index.search(scope, "kestrel", None, 10).text]
    # Then org A still gets only its own chunk, with a lower score: the word is common index-wide
    assert [d for d, _ in before] == [d for d, _ in after] == ["doc-a"]
    assert after[0][1] < before[0][1]


def test_an_index_from_before_per_organization_ids_refuses_another_organizations_chunk_id(client: OpenSearch) -> None:
    """Issue 34, finding 1: in an index created before chunk `_id`s named the organization (its
    `_meta` says nothing of them), a write of a chunk id another organization holds is refused
    before anything is written; the holder's chunk stays. A new index behind the alias is named the new way."""
    # Given an index as an older memlane created it, holding org A's chunk under `_id` = chunk id
    body = index_body(DIM, EMBEDDER)
    del body["mappings"]["_meta"]["chunk_ids"]
    client.indices.create(index=f"{ALIAS}-v1", body=body)
    client.indices.put_alias(index=f"{ALIAS}-v1", name=ALIAS)
    index = OpenSearchIndex(client, ALIAS, DIM, embedder_id=EMBEDDER)
    index.upsert(EMBEDDER, [chunk("doc-held", 0, "Exponential backoff with jitter.")])
    client.indices.refresh(index=ALIAS)
    assert client.get(index=ALIAS, id=chunk_id_for("doc-held", 0))["_source"]["organization_id"] == "org-a"
    # When org B writes a chunk of that id (and one of its own in the same batch)
    with pytest.raises(IdTakenError):
        index.upsert(EMBEDDER, [chunk("doc-mine", 0, "Tides at the harbour.", org="org-b"),
                                chunk("doc-held", 0, "Forged text.", org="org-b")])
    client.indices.refresh(index=ALIAS)
    # Then nothing of the batch was written, A's chunk is as it was, and A still finds it
    assert client.count(index=ALIAS)["count"] == 1
    assert text_hits(index, "backoff jitter") == ["doc-held"] and text_hits(index, "forged") == []
    # while A's own rewrite of its chunk is an upsert, as before
    index.upsert(EMBEDDER, [chunk("doc-held", 0, "Exponential backoff with full jitter.")])
    client.indices.refresh(index=ALIAS)
    assert client.count(index=ALIAS)["count"] == 1 and text_hits(index, "full jitter") == ["doc-held"]


def test_a_new_index_names_each_chunk_by_its_organization(client: OpenSearch, index: OpenSearchIndex) -> None:
    index.upsert(EMBEDDER, [chunk("doc-held", 0, "Exponential backoff with jitter.")])
    index.upsert(EMBEDDER, [chunk("doc-held", 0, "Forged text.", org="org-b")])
    client.indices.refresh(index=ALIAS)
    # Then each organization's write is a document of its own: A's is unchanged
    assert client.get(index=ALIAS, id=f"org-a:{chunk_id_for('doc-held', 0)}")["_source"]["text"].startswith(
        "Exponential")
    assert client.count(index=ALIAS)["count"] == 2 and text_hits(index, "forged") == []
