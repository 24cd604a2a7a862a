"""S3VectorsIndex beyond the contract suite (tests/contracts): what S3 Vectors itself makes memlane
decide. Moto holds the vectors; QueryVectors and the index configuration come from
tests/s3vectors_fake.py, which checks every request against botocore's service model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from s3vectors_fake import FakeS3Vectors, client_error

from memlane.adapters.aws import s3vectors_layout as lay
from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.s3vectors_index import S3VectorsIndex
from memlane.domain.errors import DependencyUnavailableError, EmbedderMismatchError, MemlaneError
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.ports import IndexedChunk, RecallFilters, SearchScope

pytestmark = pytest.mark.integration

BUCKET = "memlane-test-vectors"
EMBEDDER = "test/s3v/4"
A, B = "org-a", "org-b"
NEAR = (1.0, 0.0, 0.0, 0.0)
T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=2)


@pytest.fixture
def fake(aws: None) -> FakeS3Vectors:
    client = FakeS3Vectors(new_client("s3vectors"))
    client.create_vector_bucket(vectorBucketName=BUCKET)
    return client


@pytest.fixture
def index(fake: FakeS3Vectors) -> S3VectorsIndex:
    return S3VectorsIndex(fake, BUCKET, 4, embedder_id=EMBEDDER)


def item(doc: str, content: str, org: str = A, i: int = 0, vector: Sequence[float] = NEAR, *, context: str = "",
         **fields: Any) -> IndexedChunk:
    chunk = Chunk(**{"id": chunk_id_for(doc, i), "document_id": doc, "organization_id": org, "project_id": "p",
                     "content": content, "chunk_index": i, "chunk_count": 1, "start_offset": 0,
                     "end_offset": len(content), "title": "Notes", "content_type": ContentType.MARKDOWN,
                     "created_at": T0, **fields})
    return IndexedChunk(chunk, list(vector), context=context)


def scope(org: str = A, **filters: Any) -> SearchScope:
    return SearchScope(org, ("p",), RecallFilters(**filters), now=NOW)


def queries(fake: FakeS3Vectors) -> list[dict[str, Any]]:
    return [params for op, params in fake.calls if op == "QueryVectors"]


# ----------------------------------------------------------------------------- layout


def test_each_organization_has_its_own_index_and_every_query_names_only_its_own(fake, index):
    # Given the same words in two organizations, and many better matches in B's
    index.upsert(EMBEDDER, [item("a1", "exponential backoff")])
    index.upsert(EMBEDDER, [item(f"b{i}", "backoff backoff backoff", org=B) for i in range(20)])
    names = {i["indexName"] for i in fake.list_indexes(vectorBucketName=BUCKET)["indexes"]}
    assert names == {index.index_for(A), index.index_for(B)}
    assert len(index.index_for(A)) <= 63 and index.index_for(A).startswith("memlane-chunks-")
    fake.calls.clear()
    # When A searches both legs
    legs = index.search(scope(), "backoff", NEAR, 50)
    # Then only A's document comes back, and every request read A's index with A in its filter
    assert {c.document_id for c in legs.text} == {c.document_id for c in legs.vector} == {"a1"}
    sent = queries(fake)
    assert len(sent) == 2
    for request in sent:
        assert request["indexName"] == index.index_for(A)
        assert {lay.ORGANIZATION: {"$eq": A}} in request["filter"]["$and"]


def test_an_organizations_scores_do_not_move_when_another_organization_saves(index):
    # Given org A's one chunk holding a word
    index.upsert(EMBEDDER, [item("a1", "the lantern is on the shelf"), item("a2", "nothing of note here")])
    before = index.search(scope(), "lantern", None, 10).text
    # When org B saves thirty chunks holding that word (on one shared OpenSearch index, A's score drops:
    # tests/aws/test_aws_opensearch_osmem.py)
    index.upsert(EMBEDDER, [item(f"b{i}", "lantern lantern", org=B) for i in range(30)])
    after = index.search(scope(), "lantern", None, 10).text
    # Then A's BM25 is what it was: its index counts only its own chunks
    assert [(c.document_id, c.score) for c in after] == [(c.document_id, c.score) for c in before]
    assert after[0].score > 0


def test_a_shared_index_would_move_them_which_the_fake_can_show(aws):
    # The same writes, with the fake counting BM25 over the whole bucket (as one shared index would)
    fake = FakeS3Vectors(new_client("s3vectors"), statistics="bucket")
    fake.create_vector_bucket(vectorBucketName=BUCKET)
    index = S3VectorsIndex(fake, BUCKET, 4, embedder_id=EMBEDDER)
    index.upsert(EMBEDDER, [item("a1", "the lantern is on the shelf"), item("a2", "nothing of note here")])
    before = index.search(scope(), "lantern", None, 10).text[0].score
    index.upsert(EMBEDDER, [item(f"b{i}", "lantern lantern", org=B) for i in range(30)])
    assert index.search(scope(), "lantern", None, 10).text[0].score < before


def test_the_text_score_is_memlanes_weighted_sum_of_the_services_bm25_per_key(fake, index):
    index.upsert(EMBEDDER, [
        item("body", "jitter in the retries"),
        item("titled", "retries without it", title="Jitter"),
        item("context", "yes it helped", context="did you add jitter?"),
    ])
    fake.calls.clear()
    found = {c.document_id: c.score for c in index.search(scope(), "jitter", None, 10).text}
    # each score is Σ weight × the bm25 the service returned for the key (title 2, text 1, context 0.5)
    request = queries(fake)[0]
    assert {t["metadataKey"] for t in request["queryTexts"]} == {"text", "title", "headings", "context"}
    answer = fake.query_vectors(**request)
    by_doc = {r["metadata"]["document_id"]: {s["metadataKey"]: s["score"] for s in r["scores"]["bm25Scores"]}
              for r in answer["vectors"]}
    assert by_doc["titled"].keys() == {"title"} and by_doc["context"].keys() == {"context"}
    assert found["titled"] == pytest.approx(2.0 * by_doc["titled"]["title"], rel=1e-12)
    assert found["body"] == pytest.approx(by_doc["body"]["text"], rel=1e-12)
    assert found["context"] == pytest.approx(0.5 * by_doc["context"]["context"], rel=1e-12)
    # and a context weight of 0 leaves the context key out of the request
    quiet = S3VectorsIndex(fake, BUCKET, 4, embedder_id=EMBEDDER, context_boost=0.0)
    assert {c.document_id for c in quiet.search(scope(), "jitter", None, 10).text} == {"body", "titled"}


# ----------------------------------------------------------------------------- the service's limits


def test_the_largest_tag_set_memlane_accepts_fits_the_filterable_limit_and_filters_exactly(index):
    # Given a memory with 100 tags of 100 characters (memlane.domain.requests' limits) and long ids
    tags = [f"{i:03d}" + "t" * 97 for i in range(100)]
    long_project = "p" * 64
    big = item("tagged", "backoff", tags=tags)
    big = IndexedChunk(big.chunk.model_copy(update={"project_id": long_project}), big.vector)
    metadata = lay.chunk_metadata(big)
    assert lay.filterable_size(metadata) <= lay.MAX_FILTERABLE_BYTES
    # When it is written (the fake refuses metadata over the service's limits)
    index.upsert(EMBEDDER, [big, item("plain", "backoff")])
    # Then the last tag, in another case, finds it, and a tag it does not carry does not
    wide = SearchScope(A, ("p", long_project), RecallFilters(tags=(tags[99].upper(),)), now=NOW)
    assert [c.document_id for c in index.search(wide, "backoff", NEAR, 10).text] == ["tagged"]
    other = SearchScope(A, ("p", long_project), RecallFilters(tags=("t" * 100,)), now=NOW)
    assert index.search(other, "backoff", NEAR, 10).text == []


def test_a_text_over_forty_kilobytes_is_clipped_to_fit_and_still_found_by_its_words(index):
    long = "zebra " + " ".join(f"w{i}" for i in range(12_000))  # ~75 KB
    index.upsert(EMBEDDER, [item("long", long)])
    metadata = lay.chunk_metadata(item("long", long))
    assert len(json.dumps(metadata, ensure_ascii=False).encode()) <= lay.MAX_METADATA_BYTES
    assert [c.document_id for c in index.search(scope(), "zebra", None, 5).text] == ["long"]


def test_top_k_is_capped_at_100_and_pages_are_followed(aws):
    fake = FakeS3Vectors(new_client("s3vectors"), page_size=7)
    fake.create_vector_bucket(vectorBucketName=BUCKET)
    index = S3VectorsIndex(fake, BUCKET, 4, embedder_id=EMBEDDER)
    index.upsert(EMBEDDER, [item(f"d{i}", f"backoff {'x ' * i}", vector=(1.0, i / 100, 0.0, 0.0)) for i in range(130)])
    fake.calls.clear()
    legs = index.search(scope(), "backoff", NEAR, 500, complete=False)
    assert len(legs.text) == len(legs.vector) == 100
    sent = queries(fake)
    assert {q["topK"] for q in sent} == {100}
    assert sum(1 for q in sent if "nextToken" in q) == 2 * (100 // 7)  # 15 pages a leg: 14 continuations
    assert len({c.chunk_id for c in legs.vector}) == 100


def test_a_long_query_is_cut_to_what_the_service_takes(index):
    index.upsert(EMBEDDER, [item("d", "backoff")])
    query = "backoff " + "words " * 400  # a whole document as the query: related memories
    assert [c.document_id for c in index.search(scope(), query, NEAR, 5).text] == ["d"]


# ----------------------------------------------------------------------------- index lifecycle


def test_a_new_index_is_enhanced_with_the_four_text_keys_searchable_and_not_filterable(fake, index):
    index.upsert(EMBEDDER, [item("d", "backoff")])
    created = fake.get_index(vectorBucketName=BUCKET, indexName=index.index_for(A))["index"]
    assert created["indexMode"] == "ENHANCED" and created["dimension"] == 4 and created["distanceMetric"] == "cosine"
    config = created["metadataConfiguration"]
    assert set(config["nonFilterableMetadataKeys"]) == {"text", "title", "headings", "context"}
    assert {(c["metadataKey"], c["language"]) for c in config["textSearchConfigurations"]} == {
        ("text", "en"), ("title", "en"), ("headings", "en"), ("context", "en")}


def test_a_classic_index_is_made_enhanced_by_a_write_and_one_without_text_keys_is_refused(aws):
    # Given a vector bucket from before ENHANCED was the default (its indexes are CLASSIC)
    fake = FakeS3Vectors(new_client("s3vectors"), default_mode="CLASSIC")
    fake.create_vector_bucket(vectorBucketName=BUCKET)
    index = S3VectorsIndex(fake, BUCKET, 4, embedder_id=EMBEDDER)
    # When memlane writes there, the index it creates is switched to ENHANCED, and the text leg works
    index.upsert(EMBEDDER, [item("d", "backoff")])
    assert [op for op, _ in fake.calls if op == "UpdateIndexMode"] == ["UpdateIndexMode"]
    assert [c.document_id for c in index.search(scope(), "backoff", None, 5).text] == ["d"]
    # and an index made by hand without the text keys is refused with what to do, not written into
    fake.create_index(vectorBucketName=BUCKET, indexName=index.index_for(B), dataType="float32", dimension=4,
                      distanceMetric="cosine")
    with pytest.raises(MemlaneError, match="not created by memlane.*memlane reindex --aws"):
        index.upsert(EMBEDDER, [item("e", "backoff", org=B)])


def test_a_search_before_any_write_finds_no_index_and_nothing(index):
    assert index.search(scope(), "backoff", NEAR, 5).text == []
    assert index.document_ids(A) == set() and index.holdings("d", A).vector == 0


def test_another_embedder_writes_other_indexes_and_a_delete_reaches_every_one(fake, index):
    index.upsert(EMBEDDER, [item("d", "backoff", i=i) for i in range(3)])
    other = S3VectorsIndex(fake, BUCKET, 4, embedder_id="test/other/4")
    other.upsert("test/other/4", [item("d", "backoff", i=i) for i in range(3)])
    assert index.index_for(A) != other.index_for(A)
    with pytest.raises(EmbedderMismatchError):
        index.upsert("test/other/4", [item("e", "backoff")])
    assert index.holdings("d", A).vector == 6  # both embedders' copies
    index.delete_document(A, "d")
    assert index.holdings("d", A).vector == 0 and index.holdings("d").vector == 0


def test_a_document_of_150_chunks_is_deleted_and_versioned_whole(index):
    index.upsert(EMBEDDER, [item("big", f"part {i} backoff", i=i) for i in range(150)])
    assert index.holdings("big", A).vector == 150
    index.set_superseded(A, "big", True)
    assert index.search(scope(), "backoff", NEAR, 100).text == []
    assert len(index.search(scope(include_superseded=True), "backoff", NEAR, 100).text) == 100
    index.delete_document(A, "big")
    assert index.holdings("big", A).vector == 0 and index.document_ids(A) == set()


# ----------------------------------------------------------------------------- failures


def test_throttling_becomes_a_dependency_error_and_a_refusal_propagates(fake, index, monkeypatch):
    index.upsert(EMBEDDER, [item("d", "backoff")])

    def throttled(**_: Any) -> Any:
        raise client_error("QueryVectors", "TooManyRequestsException", "slow down", 429)

    monkeypatch.setattr(fake, "query_vectors", throttled)
    with pytest.raises(DependencyUnavailableError, match="search index unavailable"):
        index.search(scope(), "backoff", NEAR, 5)

    def refused(**_: Any) -> Any:
        raise client_error("QueryVectors", "AccessDeniedException", "no", 403)

    monkeypatch.setattr(fake, "query_vectors", refused)
    with pytest.raises(ClientError):
        index.search(scope(), "backoff", NEAR, 5)


def test_the_fake_refuses_what_the_service_refuses(fake, index):
    index.upsert(EMBEDDER, [item("d", "backoff")])
    name = index.index_for(A)
    for bad, code in (
        ({"topK": 101, "queryVector": {"float32": list(NEAR)}}, "ValidationException"),
        ({"topK": 5, "queryVector": {"float32": [1.0, 0.0]}}, "ValidationException"),
        ({"topK": 5, "queryTexts": [{"text": "x", "metadataKey": "document_id"}]}, "ValidationException"),
        ({"topK": 5, "queryVector": {"float32": list(NEAR)}, "filter": {"text": {"$eq": "x"}}}, "ValidationException"),
        ({"topK": 5, "queryVector": {"float32": list(NEAR)}, "filter": {"created_us": {"$gt": "yesterday"}}},
         "ValidationException"),
    ):
        with pytest.raises(ClientError) as refused:
            fake.query_vectors(vectorBucketName=BUCKET, indexName=name, **bad)
        assert refused.value.response["Error"]["Code"] == code, bad
    from botocore.exceptions import ParamValidationError

    with pytest.raises(ParamValidationError):  # the shape itself: botocore's model
        fake.query_vectors(vectorBucketName=BUCKET, indexName=name, topK=0, queryTexts=[{"text": "x" * 1025,
                                                                                          "metadataKey": "text"}])


def test_the_fakes_three_modes_answer_as_the_api_reference_says(fake, index):
    # Given two chunks near the query vector that never say the word, and two far ones that do
    index.upsert(EMBEDDER, [item("near-1", "a note about queues", vector=NEAR),
                            item("near-2", "retries and queues", vector=(0.9, 0.43, 0.0, 0.0)),
                            item("far-1", "backoff backoff", vector=(0.1, 0.0, 0.995, 0.0)),
                            item("far-2", "backoff", vector=(0.0, 1.0, 0.0, 0.0))])
    where = {"vectorBucketName": BUCKET, "indexName": index.index_for(A)}
    texts = [{"text": "backoff", "metadataKey": "text"}]
    vector = {"float32": list(NEAR)}
    # vector-only: by distance; returnScores adds nothing
    only_vector = fake.query_vectors(**where, topK=2, queryVector=vector, returnDistance=True, returnScores=True)
    assert [v["key"] for v in only_vector["vectors"]] == [chunk_id_for("near-1", 0), chunk_id_for("near-2", 0)]
    assert only_vector["vectors"][0]["distance"] == pytest.approx(0.0, abs=1e-6) and "scores" not in only_vector["vectors"][0]
    # full-text only: by BM25, the chunks holding the word and no other, with their bm25Scores, no fused
    only_text = fake.query_vectors(**where, topK=5, queryTexts=texts, returnScores=True)["vectors"]
    assert [v["key"] for v in only_text] == [chunk_id_for("far-1", 0), chunk_id_for("far-2", 0)]
    assert all("fused" not in v["scores"] and v["scores"]["bm25Scores"][0]["metadataKey"] == "text" for v in only_text)
    # hybrid: reciprocal rank fusion of both rankings; vectorDistance only where the vector search returned it
    hybrid = fake.query_vectors(**where, topK=4, queryVector=vector, queryTexts=texts, returnScores=True)["vectors"]
    fused = {v["key"]: v["scores"] for v in hybrid}
    assert fused[chunk_id_for("far-1", 0)]["fused"] == pytest.approx(1 / 61 + 1 / 63, rel=1e-12)  # text 1st, vector 3rd
    assert fused[chunk_id_for("near-1", 0)]["fused"] == pytest.approx(1 / 61, rel=1e-12)  # vector 1st, no word
    assert "bm25Scores" in fused[chunk_id_for("far-2", 0)] and fused[chunk_id_for("near-1", 0)]["bm25Scores"] == []
    assert fused[chunk_id_for("near-1", 0)]["vectorDistance"] == pytest.approx(0.0, abs=1e-6)
    # with topK 2 each ranking holds two: far-1 is fused from its text rank alone and has no distance
    narrow = {v["key"]: v["scores"] for v in fake.query_vectors(**where, topK=2, queryVector=vector, queryTexts=texts,
                                                                  returnScores=True)["vectors"]}
    assert set(narrow) == {chunk_id_for("near-1", 0), chunk_id_for("far-1", 0)}
    assert "vectorDistance" not in narrow[chunk_id_for("far-1", 0)] and narrow[chunk_id_for("far-1", 0)]["fused"] == \
        pytest.approx(1 / 61, rel=1e-12)
