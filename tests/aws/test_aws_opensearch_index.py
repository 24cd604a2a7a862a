"""OpenSearchIndex without a server: a fake client records every request and answers with
responses shaped like OpenSearch's, so the request bodies can be checked field by field."""

from __future__ import annotations

import copy
import http.server
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.credentials import Credentials
from opensearchpy import RequestsHttpConnection
from opensearchpy import exceptions as os_errors

from memlane.adapters.aws.opensearch_index import (
    OpenSearchIndex,
    cosine_from_knn_score,
    index_body,
    knn_score_from_cosine,
    make_opensearch_client,
)
from memlane.domain.errors import DependencyUnavailableError, EmbedderMismatchError, MemlaneError
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.ports import IndexedChunk, LegResults, RecallFilters, SearchScope

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=2)
ALIAS = "memlane-chunks"
EMBEDDER = "bedrock/amazon.titan-embed-text-v2:0/1024"


def not_found() -> os_errors.NotFoundError:
    return os_errors.NotFoundError(
        404, "index_not_found_exception", {"error": {"type": "index_not_found_exception"}}
    )


class FakeIndices:
    def __init__(self, owner: FakeOpenSearch) -> None:
        self.owner = owner

    def _resolve(self, name: str) -> list[str]:
        if name in self.owner.indices_state:
            return [name]
        if name in self.owner.aliases:
            return sorted(self.owner.aliases[name])
        raise not_found()

    def exists(self, index: str) -> bool:
        self.owner.calls.append(("indices.exists", {"index": index}))
        return index in self.owner.indices_state

    def create(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.owner.calls.append(("indices.create", {"index": index, "body": copy.deepcopy(body)}))
        self.owner.indices_state[index] = copy.deepcopy(body)
        return {"acknowledged": True, "index": index}

    def exists_alias(self, name: str) -> bool:
        self.owner.calls.append(("indices.exists_alias", {"name": name}))
        return bool(self.owner.aliases.get(name))

    def put_alias(self, index: str, name: str) -> dict[str, Any]:
        self.owner.calls.append(("indices.put_alias", {"index": index, "name": name}))
        self.owner.aliases.setdefault(name, set()).add(index)
        return {"acknowledged": True}

    def get_alias(self, name: str) -> dict[str, Any]:
        self.owner.calls.append(("indices.get_alias", {"name": name}))
        if not self.owner.aliases.get(name):
            raise not_found()
        return {index: {"aliases": {name: {}}} for index in self.owner.aliases[name]}

    def update_aliases(self, body: dict[str, Any]) -> dict[str, Any]:
        self.owner.calls.append(("indices.update_aliases", {"body": copy.deepcopy(body)}))
        for action in body["actions"]:
            for verb, spec in action.items():
                members = self.owner.aliases.setdefault(spec["alias"], set())
                (members.discard if verb == "remove" else members.add)(spec["index"])
        return {"acknowledged": True}

    def get_mapping(self, index: str) -> dict[str, Any]:
        self.owner.calls.append(("indices.get_mapping", {"index": index}))
        return {
            name: {"mappings": copy.deepcopy(self.owner.indices_state[name]["mappings"])}
            for name in self._resolve(index)
        }

    def put_mapping(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.owner.calls.append(("indices.put_mapping", {"index": index, "body": copy.deepcopy(body)}))
        for name in self._resolve(index):  # a mapping update merges: _meta replaced, properties added
            mappings = self.owner.indices_state[name]["mappings"]
            if "_meta" in body:
                mappings["_meta"] = copy.deepcopy(body["_meta"])
            mappings.setdefault("properties", {}).update(copy.deepcopy(body.get("properties", {})))
        return {"acknowledged": True}


class FakeOpenSearch:
    """Records calls; msearch/search/bulk answer from queues of canned responses."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.indices_state: dict[str, dict[str, Any]] = {}
        self.aliases: dict[str, set[str]] = {}
        self.indices = FakeIndices(self)
        self.msearch_responses: list[Any] = []
        self.search_responses: list[Any] = []
        self.bulk_responses: list[Any] = []

    def named(self, name: str) -> list[dict[str, Any]]:
        return [kwargs for call, kwargs in self.calls if call == name]

    @staticmethod
    def _answer(queue: list[Any], default: Any) -> Any:
        answer = queue.pop(0) if queue else default
        if isinstance(answer, Exception):
            raise answer
        return answer

    def msearch(self, body: list[dict[str, Any]], index: str) -> dict[str, Any]:
        self.calls.append(("msearch", {"body": copy.deepcopy(body), "index": index}))
        return self._answer(self.msearch_responses, {"responses": []})

    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("search", {"index": index, "body": copy.deepcopy(body)}))
        return self._answer(self.search_responses, {"hits": {"hits": []}})

    def bulk(self, body: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("bulk", {"body": copy.deepcopy(body), **copy.deepcopy(kwargs)}))
        return self._answer(self.bulk_responses, {"errors": False, "items": []})

    def delete_by_query(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("delete_by_query", copy.deepcopy(kwargs)))
        return {"deleted": 3, "failures": []}


@pytest.fixture
def fake() -> FakeOpenSearch:
    return FakeOpenSearch()


def make_chunk(doc_id: str, index: int, org: str = "org-a", **overrides: Any) -> Chunk:
    fields: dict[str, Any] = {
        "id": chunk_id_for(doc_id, index),
        "document_id": doc_id,
        "organization_id": org,
        "project_id": "proj-a",
        "content": f"Retries use exponential backoff ({index}).",
        "chunk_index": index,
        "chunk_count": 2,
        "start_offset": 0,
        "end_offset": 40,
        "heading_path": ["Guide", "Retries"],
        "title": "Resilience",
        "content_type": ContentType.MARKDOWN,
        "source_url": "https://docs.example.com/retries",
        "tags": ["aws"],
        "created_at": T0,
    }
    fields.update(overrides)
    return Chunk(**fields)


def scope(**filters: Any) -> SearchScope:
    return SearchScope(
        organization_id="org-a", project_ids=("proj-a", "proj-b"), filters=RecallFilters(**filters), now=NOW
    )


# --------------------------------------------------------------------------- mapping and aliases


def test_index_body_maps_every_field() -> None:
    body = index_body(1024, EMBEDDER)
    assert body["settings"]["index"]["knn"] is True
    mappings = body["mappings"]
    assert mappings["_meta"]["embedder"] == EMBEDDER
    assert mappings["dynamic"] == "strict"
    props = mappings["properties"]
    assert props["vector"] == {
        "type": "knn_vector",
        "dimension": 1024,
        "method": {
            "name": "hnsw",
            "engine": "faiss",
            "space_type": "innerproduct",
            "parameters": {"m": 16, "ef_construction": 128},
        },
    }
    for name in ("text", "title", "heading_path", "context"):
        assert props[name] == {"type": "text", "analyzer": "english"}
    for name in (
        "organization_id",
        "project_id",
        "document_id",
        "content_type",
        "tags",
        "source_url",
        "chunk_id",
    ):
        assert props[name] == {"type": "keyword"}
    assert props["created_at"] == props["forget_after"] == {"type": "date"}
    assert props["chunk_index"] == {"type": "integer"}
    assert props["superseded"] == {"type": "boolean"}
    assert "number_of_shards" not in index_body(384, serverless=True)["settings"]["index"]


def test_replicas_follow_the_domain_s_data_nodes() -> None:
    # One replica could never be assigned on the default single-node domain (it would stay yellow): none
    # there, one from two data nodes up. Serverless manages its own.
    assert index_body(1024, EMBEDDER)["settings"]["index"]["auto_expand_replicas"] == "0-1"
    assert "number_of_replicas" not in index_body(1024, EMBEDDER)["settings"]["index"]
    assert "auto_expand_replicas" not in index_body(1024, EMBEDDER, serverless=True)["settings"]["index"]


def test_ensure_index_creates_a_versioned_index_behind_the_alias(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 1024, embedder_id=EMBEDDER)
    assert index.ensure_index() == "memlane-chunks-v1"
    assert index.ensure_index() == "memlane-chunks-v1"  # second call: nothing new
    creates = fake.named("indices.create")
    assert creates == [{"index": "memlane-chunks-v1", "body": index_body(1024, EMBEDDER)}]
    assert fake.aliases == {ALIAS: {"memlane-chunks-v1"}}

    # A new version is created without moving the alias, until the swap
    index.ensure_index(2)
    assert fake.aliases == {ALIAS: {"memlane-chunks-v1"}}
    assert index.swap_alias(2) == ["memlane-chunks-v1"]
    assert fake.named("indices.update_aliases") == [
        {
            "body": {
                "actions": [
                    {"remove": {"index": "memlane-chunks-v1", "alias": ALIAS}},
                    {"add": {"index": "memlane-chunks-v2", "alias": ALIAS}},
                ]
            }
        }
    ]
    assert fake.aliases == {ALIAS: {"memlane-chunks-v2"}}
    with pytest.raises(MemlaneError):
        index.swap_alias(9)


# --------------------------------------------------------------------------- writes


def test_upsert_bulk_indexes_with_deterministic_ids(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    expiring = make_chunk("doc-1", 1, forget_after=T0 + timedelta(days=30), source_url=None)
    items = [IndexedChunk(make_chunk("doc-1", 0), [3.0, 4.0]), IndexedChunk(expiring, [0.0, 2.0])]

    index.upsert(EMBEDDER, items)

    # The index did not exist: it was created with this embedder recorded
    assert fake.named("indices.create")[0]["body"]["mappings"]["_meta"]["embedder"] == EMBEDDER
    (bulk,) = fake.named("bulk")
    body = bulk["body"]
    assert body[0] == {"index": {"_index": ALIAS, "_id": f"org-a:{chunk_id_for('doc-1', 0)}"}}
    assert body[1] == {
        "chunk_id": chunk_id_for("doc-1", 0),
        "document_id": "doc-1",
        "organization_id": "org-a",
        "project_id": "proj-a",
        "chunk_index": 0,
        "text": "Retries use exponential backoff (0).\naws",  # the body, then the tags: a tag word finds it
        "title": "Resilience",
        "heading_path": ["Guide", "Retries"],
        "content_type": "markdown",
        "kind": "memory",  # IndexedChunk.kind: a plain memory unless the writer says otherwise
        "tags": ["aws"],
        "created_at": "2025-03-01T12:00:00.000000+00:00",
        "vector": pytest.approx([0.6, 0.8]),
        "source_url": "https://docs.example.com/retries",
    }
    assert body[2] == {"index": {"_index": ALIAS, "_id": f"org-a:{chunk_id_for('doc-1', 1)}"}}
    assert body[3]["forget_after"] == "2025-03-31T12:00:00.000000+00:00"
    assert "source_url" not in body[3]
    assert body[3]["vector"] == pytest.approx([0.0, 1.0])
    assert "refresh" not in bulk  # writes become searchable with the next refresh (~1 s)
    # sent to <alias>/_bulk, not /_bulk: the functions' grants name memlane's paths only
    assert bulk["index"] == ALIAS


def test_first_embedder_claims_an_unclaimed_index(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    index.ensure_index()  # created before any embedder was known
    index.upsert(EMBEDDER, [IndexedChunk(make_chunk("doc-1", 0), [1.0, 0.0])])
    assert fake.named("indices.put_mapping")[0]["body"]["_meta"]["embedder"] == EMBEDDER
    assert index.recorded_embedder() == EMBEDDER


def test_vectors_from_another_embedder_are_refused(fake: FakeOpenSearch) -> None:
    OpenSearchIndex(fake, ALIAS, 2, embedder_id="openai/text-embedding-3-small/1536").ensure_index()
    index = OpenSearchIndex(fake, ALIAS, 2)
    with pytest.raises(EmbedderMismatchError) as caught:
        index.upsert(EMBEDDER, [IndexedChunk(make_chunk("doc-1", 0), [1.0, 0.0])])
    assert "openai/text-embedding-3-small/1536" in caught.value.message
    assert "memlane reindex" in caught.value.message
    assert fake.named("bulk") == []


def test_vectors_of_the_wrong_dimension_are_refused(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 1024)
    with pytest.raises(EmbedderMismatchError) as caught:
        index.upsert(EMBEDDER, [IndexedChunk(make_chunk("doc-1", 0), [1.0, 0.0])])
    assert "memlane reindex" in caught.value.message
    with pytest.raises(EmbedderMismatchError):
        index.search(scope(), "q", [1.0, 0.0], 5)
    assert fake.named("bulk") == fake.named("msearch") == []


def test_bulk_item_failures_are_typed(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    items = [IndexedChunk(make_chunk("doc-1", 0), [1.0, 0.0])]
    fake.bulk_responses = [
        {
            "errors": True,
            "items": [{"index": {"status": 429, "error": {"type": "es_rejected_execution_exception"}}}],
        },
        {
            "errors": True,
            "items": [{"index": {"status": 400, "error": {"reason": "mapper_parsing_exception"}}}],
        },
    ]
    with pytest.raises(DependencyUnavailableError):
        index.upsert(EMBEDDER, items)
    with pytest.raises(MemlaneError) as caught:
        index.upsert(EMBEDDER, items)
    assert not isinstance(caught.value, DependencyUnavailableError)
    assert "mapper_parsing_exception" in caught.value.message


def test_an_unreachable_cluster_is_dependency_unavailable(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [os_errors.ConnectionError("N/A", "connection refused", OSError("refused"))]
    with pytest.raises(DependencyUnavailableError):
        index.search(scope(), "backoff", None, 5)
    fake.msearch_responses = [os_errors.TransportError(503, "unavailable", {})]
    with pytest.raises(DependencyUnavailableError):
        index.search(scope(), "backoff", None, 5)


def test_delete_document_deletes_by_tenant_and_document(fake: FakeOpenSearch) -> None:
    OpenSearchIndex(fake, ALIAS, 2).delete_document("org-a", "doc-1")
    assert fake.named("delete_by_query") == [
        {
            "index": ALIAS,
            "body": {
                "query": {
                    "bool": {
                        "filter": [{"term": {"organization_id": "org-a"}}, {"term": {"document_id": "doc-1"}}]
                    }
                }
            },
            "conflicts": "proceed",
            "refresh": True,
        }
    ]


# --------------------------------------------------------------------------- search


def hit(doc_id: str, index: int, score: float, org: str = "org-a") -> dict[str, Any]:
    chunk_id = chunk_id_for(doc_id, index)
    return {
        "_index": "memlane-chunks-v1",
        "_id": chunk_id,
        "_score": score,
        "_source": {
            "chunk_id": chunk_id,
            "document_id": doc_id,
            "organization_id": org,
            "chunk_index": index,
            "created_at": "2025-03-01T12:00:00.000000+00:00",
        },
    }


def leg(*hits: dict[str, Any]) -> dict[str, Any]:
    return {"status": 200, "hits": {"hits": list(hits)}}


def test_search_sends_one_msearch_with_both_legs_and_the_same_filter(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [
        {"responses": [leg(hit("doc-1", 0, 7.5), hit("doc-2", 3, 2.5)), leg(hit("doc-1", 0, 1.8))]}
    ]
    the_scope = scope(
        content_types=(ContentType.CODE, ContentType.MARKDOWN),
        created_after=T0 - timedelta(days=7),
        tags=("aws", "s3"),
        kinds=("fact",),
    )

    results = index.search(the_scope, "exponential backoff", [0.0, 5.0], 10)

    # (the second _msearch asks for doc-2's vector, which the k-NN leg did not return: the fill tests)
    call, fill = fake.named("msearch")
    assert [q["query"]["bool"]["filter"][-1] for q in fill["body"][1::2]] == [
        {"terms": {"chunk_id": [chunk_id_for("doc-2", 3)]}}]
    header_text, text_query, header_knn, knn_query = call["body"]
    assert call["index"] == ALIAS and header_text == header_knn == {"index": ALIAS}
    expected_filter = [
        {"term": {"organization_id": "org-a"}},
        {"terms": {"project_id": ["proj-a", "proj-b"]}},
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "forget_after"}}]}},
                    {"range": {"forget_after": {"gt": "2025-03-03T12:00:00.000000+00:00"}}},
                ],
                "minimum_should_match": 1,
            }
        },
        {"bool": {"must_not": [{"term": {"superseded": True}}]}},  # older versions hidden
        {"terms": {"content_type": ["code", "markdown"]}},
        {  # facts, and chunks indexed before the index held a kind (recall checks their documents)
            "bool": {
                "should": [
                    {"terms": {"kind": ["fact"]}},
                    {"bool": {"must_not": [{"exists": {"field": "kind"}}]}},
                ],
                "minimum_should_match": 1,
            }
        },
        {"range": {"created_at": {"gt": "2025-02-22T12:00:00.000000+00:00"}}},
        {"terms": {"tags": ["aws", "s3"]}},
    ]
    # BM25 leg: multi_match over the three text fields and the context at half weight, the scope
    # as a bool filter
    assert text_query["size"] == 10
    assert text_query["query"]["bool"]["must"] == [
        {
            "multi_match": {
                "query": "exponential backoff",
                "fields": ["text^1", "title^2", "heading_path^1.5", "context^0.5"],
                "type": "most_fields",
            }
        }
    ]
    assert text_query["query"]["bool"]["filter"] == expected_filter
    # k-NN leg: the same filter INSIDE the knn clause (efficient filtering), normalised vector
    knn = knn_query["query"]["knn"]["vector"]
    assert knn_query["size"] == 10 and knn["k"] == 10
    assert knn["vector"] == pytest.approx([0.0, 1.0])
    assert knn["filter"] == {"bool": {"filter": expected_filter}}
    assert set(knn_query["query"]) == {"knn"}  # no post-filter outside the clause

    # Raw scores: BM25 as is, the vector leg converted back to cosine (1.8 → 0.8)
    assert [(c.document_id, c.chunk_index, c.score) for c in results.text] == [
        ("doc-1", 0, 7.5),
        ("doc-2", 3, 2.5),
    ]
    assert [(c.chunk_id, c.score) for c in results.vector] == [(chunk_id_for("doc-1", 0), pytest.approx(0.8))]
    assert results.vector[0].created_at == T0


def test_tenant_filter_is_in_both_legs_whatever_the_scope(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    for the_scope in (scope(), scope(tags=("x",)), scope(content_types=(ContentType.PDF,), created_after=T0)):
        fake.calls.clear()
        index.search(the_scope, "anything", [1.0, 0.0], 100)
        _, text_query, _, knn_query = fake.named("msearch")[0]["body"]
        tenant = {"term": {"organization_id": "org-a"}}
        assert text_query["query"]["bool"]["filter"][0] == tenant
        assert knn_query["query"]["knn"]["vector"]["filter"]["bool"]["filter"][0] == tenant


def test_hits_of_another_tenant_are_dropped(fake: FakeOpenSearch) -> None:
    # Defence in depth: even if the engine returned them, they never leave the adapter
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [{"responses": [leg(hit("doc-b", 0, 9.0, org="org-b"), hit("doc-a", 0, 1.0))]}]
    results = index.search(scope(), "shared words", None, 100)
    assert [c.document_id for c in results.text] == ["doc-a"]


def test_legs_are_skipped_when_they_have_nothing_to_search(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [
        {"responses": [leg(hit("doc-1", 0, 1.5))]},
        {"responses": [leg(hit("doc-1", 0, 3.0))]},
    ]

    vector_only = index.search(scope(), "   ", [1.0, 0.0], 5)
    text_only = index.search(scope(), "backoff", None, 5)
    nothing = index.search(scope(), "", None, 5)

    first, second = fake.named("msearch")
    assert len(first["body"]) == 2 and "knn" in first["body"][1]["query"]
    assert len(second["body"]) == 2 and "bool" in second["body"][1]["query"]
    assert vector_only.text == [] and [c.score for c in vector_only.vector] == [pytest.approx(0.5)]
    assert text_only.vector == [] and [c.score for c in text_only.text] == [3.0]
    assert nothing.text == nothing.vector == []
    assert len(fake.named("msearch")) == 2


def test_missing_index_reads_as_empty_and_other_leg_errors_raise(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    missing = {"status": 404, "error": {"type": "index_not_found_exception", "reason": "no such index"}}
    broken = {"status": 500, "error": {"type": "search_phase_execution_exception"}}
    fake.msearch_responses = [{"responses": [missing, missing]}, {"responses": [leg(), broken]}]
    assert index.search(scope(), "q", [1.0, 0.0], 5) == LegResults(vector=[], text=[])
    with pytest.raises(DependencyUnavailableError):
        index.search(scope(), "q", [1.0, 0.0], 5)


def test_k_is_clamped_to_opensearch_limits(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    index.search(scope(), "q", [1.0, 0.0], 10**6)
    _, text_query, _, knn_query = fake.named("msearch")[0]["body"]
    assert text_query["size"] == knn_query["size"] == knn_query["query"]["knn"]["vector"]["k"] == 10_000


@pytest.mark.parametrize("cosine", [-1.0, -0.75, -0.2, 0.0, 0.2, 0.5, 0.99, 1.0])
def test_knn_score_conversion_round_trips(cosine: float) -> None:
    score = knn_score_from_cosine(cosine)
    assert score > 0
    assert cosine_from_knn_score(score) == pytest.approx(cosine)


def test_knn_score_conversion_matches_opensearch_formula() -> None:
    # OpenSearch (faiss innerproduct): raw = -ip; score = 1/(1+raw) if raw >= 0 else 1 - raw
    for ip in (-0.6, -0.1, 0.3, 0.9):
        raw = -ip
        score = 1 / (1 + raw) if raw >= 0 else 1 - raw
        assert cosine_from_knn_score(score) == pytest.approx(ip)


# --------------------------------------------------------------------------- doctor and serverless


def test_document_ids_pages_through_the_composite_aggregation(fake: FakeOpenSearch) -> None:
    fake.search_responses = [
        {
            "aggregations": {
                "documents": {
                    "after_key": {"document_id": "doc-2"},
                    "buckets": [{"key": {"document_id": "doc-1"}}, {"key": {"document_id": "doc-2"}}],
                }
            }
        },
        {"aggregations": {"documents": {"buckets": [{"key": {"document_id": "doc-3"}}]}}},
    ]
    assert OpenSearchIndex(fake, ALIAS, 2).document_ids("org-a") == {"doc-1", "doc-2", "doc-3"}
    first, second = fake.named("search")
    assert first["body"]["query"] == {"bool": {"filter": [{"term": {"organization_id": "org-a"}}]}}
    assert first["body"]["size"] == 0
    assert first["body"]["aggs"]["documents"]["composite"]["sources"] == [
        {"document_id": {"terms": {"field": "document_id"}}}
    ]
    assert "after" not in first["body"]["aggs"]["documents"]["composite"]
    assert second["body"]["aggs"]["documents"]["composite"]["after"] == {"document_id": "doc-2"}


def test_document_ids_of_a_missing_index_is_empty(fake: FakeOpenSearch) -> None:
    fake.search_responses = [not_found()]
    assert OpenSearchIndex(fake, ALIAS, 2).document_ids() == set()
    assert fake.named("search")[0]["body"]["query"] == {"match_all": {}}


def test_serverless_upsert_replaces_copies_without_custom_ids(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2, serverless=True)
    old_copy = {"_id": "server-generated-1", "sort": ["x"]}
    fake.search_responses = [{"hits": {"hits": [old_copy]}}]
    chunk = make_chunk("doc-1", 0)

    index.upsert(EMBEDDER, [IndexedChunk(chunk, [1.0, 0.0])])

    (search,) = fake.named("search")
    # the organization's own copies only: another organization's chunk of that id is never touched
    assert search["body"]["query"] == {"bool": {"should": [{"bool": {"filter": [
        {"term": {"organization_id": "org-a"}}, {"terms": {"chunk_id": [chunk.id]}}]}}], "minimum_should_match": 1}}
    delete_bulk, index_bulk = fake.named("bulk")
    assert delete_bulk["body"] == [{"delete": {"_index": ALIAS, "_id": "server-generated-1"}}]
    assert index_bulk["body"][0] == {"index": {"_index": ALIAS}}  # no _id on Serverless
    assert index_bulk["body"][1]["chunk_id"] == chunk.id
    assert fake.named("delete_by_query") == []


def test_serverless_delete_document_uses_search_and_bulk_delete(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2, serverless=True)
    fake.search_responses = [{"hits": {"hits": [{"_id": "a", "sort": ["1"]}, {"_id": "b", "sort": ["2"]}]}}]
    index.delete_document("org-a", "doc-1")
    assert fake.named("search")[0]["body"]["query"] == {
        "bool": {"filter": [{"term": {"organization_id": "org-a"}}, {"term": {"document_id": "doc-1"}}]}
    }
    assert fake.named("bulk")[0]["body"] == [
        {"delete": {"_index": ALIAS, "_id": "a"}},
        {"delete": {"_index": ALIAS, "_id": "b"}},
    ]
    assert fake.named("delete_by_query") == []


# --------------------------------------------------------------------------- signing


class _RecordingHandler(http.server.BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        type(self).seen.append(dict(self.headers.items()))
        body = b'{"cluster_name": "test", "version": {"number": "2.19.0"}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        return


@pytest.fixture
def loopback_server() -> Iterator[str]:
    _RecordingHandler.seen = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _RecordingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("kind", "service"), [("managed", "es"), ("serverless", "aoss")])
def test_requests_are_signed_for_the_right_service(loopback_server: str, kind: str, service: str) -> None:
    credentials = Credentials("AKIDEXAMPLE", "secret", "session-token")
    client = make_opensearch_client(loopback_server, "eu-west-1", kind=kind, credentials=credentials)
    assert client.transport.connection_class is RequestsHttpConnection
    assert client.info()["cluster_name"] == "test"
    (headers,) = _RecordingHandler.seen
    authorization = headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert f"/eu-west-1/{service}/aws4_request" in authorization
    assert headers["X-Amz-Security-Token"] == "session-token"
    assert "x-amz-content-sha256" in authorization.lower()


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        make_opensearch_client(
            "search.example.com", "us-east-1", kind="elastic", credentials=Credentials("a", "b")
        )


def test_a_code_chunks_identifier_words_are_indexed_in_its_body(fake: FakeOpenSearch) -> None:
    # memlane.ingest.identifiers gives a code chunk the words of its identifiers, for the text leg only
    index = OpenSearchIndex(fake, ALIAS, 2)
    code = make_chunk("doc-1", 0, content="def read_user_name(acct): return acct.getDisplayName()",
                      content_type=ContentType.CODE)
    index.upsert(EMBEDDER, [IndexedChunk(code, [1.0, 0.0], identifiers="read user name get display name")])
    source = fake.named("bulk")[0]["body"][1]
    # in the body field (`text`, searched at body weight), after the chunk's own text
    assert source["text"] == (  # then the chunk's tags (make_chunk's "aws")
        "def read_user_name(acct): return acct.getDisplayName()\nread user name get display name\naws"
    )
    assert "identifiers" not in source and "context" not in source
    # a chunk without identifier words is indexed as written, then its tags
    index.upsert(EMBEDDER, [IndexedChunk(make_chunk("doc-2", 0), [1.0, 0.0])])
    assert fake.named("bulk")[1]["body"][1]["text"] == "Retries use exponential backoff (0).\naws"
    # and one without tags (its keyphrases are filter labels only: they are the content's own words)
    index.upsert(EMBEDDER, [IndexedChunk(make_chunk("doc-3", 0, tags=["keyphrase:backoff"]), [1.0, 0.0])])
    assert fake.named("bulk")[2]["body"][1]["text"] == "Retries use exponential backoff (0)."


def test_as_of_bounds_created_at_inside_both_legs(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [{"responses": [leg(), leg()]}]
    as_of = SearchScope(organization_id="org-a", project_ids=("proj-a",), now=NOW, created_until=T0,
                        filters=RecallFilters(include_superseded=True))
    index.search(as_of, "where does Alice live", [1.0, 0.0], 5)
    (call,) = fake.named("msearch")
    _, text_query, _, knn_query = call["body"]
    bound = {"range": {"created_at": {"lte": "2025-03-01T12:00:00.000000+00:00"}}}  # inclusive
    assert bound in text_query["query"]["bool"]["filter"]
    assert bound in knn_query["query"]["knn"]["vector"]["filter"]["bool"]["filter"]
    # every version: the one current at as_of may have been superseded since
    assert not any("superseded" in json.dumps(c) for c in text_query["query"]["bool"]["filter"])


# --------------------------------------------------------------------------- each leg completed (fill)
# SearchIndex.search's contract: a chunk one leg returned and the other did not gets the other leg's
# score too, from one more _msearch (the BM25 with an ids filter; the stored vector, dotted in Python).
# The same path against osmem-server's own BM25 and _source: test_aws_opensearch_fill_osmem.py.


def vector_hit(doc_id: str, index: int, vector: list[float], org: str = "org-a") -> dict[str, Any]:
    found = hit(doc_id, index, 0.0, org=org)
    found["_source"]["vector"] = vector
    return found


def test_each_leg_scores_the_other_legs_candidates_in_one_more_msearch(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    a, b, c = (chunk_id_for(d, 0) for d in ("doc-a", "doc-b", "doc-c"))
    fake.msearch_responses = [
        # text leg (k=2, full: more may hold the words): a, b; k-NN leg: c (cosine 0.9), a (0.5)
        {"responses": [leg(hit("doc-a", 0, 5.0), hit("doc-b", 0, 3.0)),
                       leg(hit("doc-c", 0, knn_score_from_cosine(0.9)), hit("doc-a", 0, knn_score_from_cosine(0.5)))]},
        # the fill: c's BM25; b's stored vector (unit length, as upsert writes it)
        {"responses": [leg(hit("doc-c", 0, 4.0)), leg(vector_hit("doc-b", 0, [0.6, 0.8]))]},
    ]
    the_scope = scope(content_types=(ContentType.MARKDOWN,))

    results = index.search(the_scope, "exponential backoff", [0.0, 5.0], 2)

    first, fill = fake.named("msearch")
    header_1, bm25, header_2, vectors = fill["body"]
    assert fill["index"] == ALIAS and header_1 == header_2 == {"index": ALIAS}
    text_leg = first["body"][1]
    # (1) the text leg's own query, narrowed to the missing chunk: same fields, same scope filter
    assert bm25["query"]["bool"]["must"] == text_leg["query"]["bool"]["must"]
    assert bm25["query"]["bool"]["filter"] == [*text_leg["query"]["bool"]["filter"], {"terms": {"chunk_id": [c]}}]
    assert bm25["size"] == 1 and "vector" not in bm25["_source"]
    # (2) the stored vector of b, under the same scope filter, without scoring anything
    assert vectors["query"] == {"bool": {"filter": [*text_leg["query"]["bool"]["filter"], {"terms": {"chunk_id": [b]}}]}}
    assert vectors["size"] == 1 and "vector" in vectors["_source"]
    # Each list holds both legs' candidates, best first: b's cosine is 0.8 (query normalised to [0, 1])
    assert [(x.chunk_id, x.score) for x in results.text] == [(a, 5.0), (c, 4.0), (b, 3.0)]
    assert [(x.chunk_id, x.score) for x in results.vector] == [
        (c, pytest.approx(0.9)), (b, pytest.approx(0.8)), (a, pytest.approx(0.5))]
    assert {x.chunk_id: x.document_id for x in results.vector}[b] == "doc-b"


def test_no_second_round_trip_when_nothing_is_missing(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [
        # both legs return the same chunks
        {"responses": [leg(hit("doc-a", 0, 5.0), hit("doc-b", 0, 3.0)),
                       leg(hit("doc-b", 0, 1.9), hit("doc-a", 0, 1.5))]},
        # the text leg returned fewer hits than k: every chunk holding a word is in it already
        {"responses": [leg(hit("doc-a", 0, 5.0)), leg(hit("doc-a", 0, 1.5), hit("doc-z", 0, 1.2))]},
        # one leg only
        {"responses": [leg(hit("doc-a", 0, 5.0), hit("doc-b", 0, 3.0))]},
        {"responses": [leg(hit("doc-a", 0, 1.5), hit("doc-b", 0, 1.2))]},
    ]
    both = index.search(scope(), "backoff", [1.0, 0.0], 2)
    text_complete = index.search(scope(), "backoff", [1.0, 0.0], 5)
    text_only = index.search(scope(), "backoff", None, 2)
    vector_only = index.search(scope(), "", [1.0, 0.0], 2)
    assert len(fake.named("msearch")) == 4  # one each
    assert [x.document_id for x in both.text] == ["doc-a", "doc-b"]
    assert [x.document_id for x in both.vector] == ["doc-b", "doc-a"]
    assert [x.document_id for x in text_complete.text] == ["doc-a"]  # doc-z holds no query word
    assert [x.document_id for x in text_complete.vector] == ["doc-a", "doc-z"]
    assert text_only.vector == [] and vector_only.text == []


def test_a_fill_keeps_only_asked_in_tenant_chunks_with_a_score(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    fake.msearch_responses = [
        {"responses": [leg(hit("doc-a", 0, 5.0), hit("doc-t", 0, 3.0)),
                       leg(hit("doc-v", 0, 1.9), hit("doc-w", 0, 1.8))]},
        {"responses": [
            leg(hit("doc-v", 0, 0.0),  # BM25 0: holds no query word, stays out of `text`
                hit("doc-w", 0, 2.0, org="org-b"),  # another tenant's (defence in depth)
                hit("doc-x", 0, 9.0)),  # not asked for
            leg(vector_hit("doc-a", 0, [1.0, 0.0], org="org-b"),
                {**hit("doc-t", 0, 0.0)}),  # no stored vector: not scored
        ]},
    ]
    results = index.search(scope(), "backoff", [1.0, 0.0], 2)
    assert [x.document_id for x in results.text] == ["doc-a", "doc-t"]
    assert [x.document_id for x in results.vector] == ["doc-v", "doc-w"]


def test_fill_errors_are_handled_as_the_legs_are(fake: FakeOpenSearch) -> None:
    index = OpenSearchIndex(fake, ALIAS, 2)
    legs = {"responses": [leg(hit("doc-a", 0, 5.0), hit("doc-b", 0, 3.0)), leg(hit("doc-c", 0, 1.5))]}
    missing = {"status": 404, "error": {"type": "index_not_found_exception"}}
    broken = {"status": 500, "error": {"type": "search_phase_execution_exception"}}
    fake.msearch_responses = [
        legs, {"responses": [missing, missing]},  # the index went away in between: nothing filled
        legs, {"responses": [leg(), broken]},
        legs, os_errors.TransportError(503, "unavailable", {}),
    ]
    gone = index.search(scope(), "backoff", [1.0, 0.0], 2)
    assert [x.document_id for x in gone.text] == ["doc-a", "doc-b"] and [x.document_id for x in gone.vector] == ["doc-c"]
    for _ in range(2):
        with pytest.raises(DependencyUnavailableError):
            index.search(scope(), "backoff", [1.0, 0.0], 2)


def test_relevance_reads_the_same_background_on_opensearch_as_locally(fake: FakeOpenSearch) -> None:
    # issue 35: relevance's elevation part reads the median of the vector leg's cosines; OpenSearch's k-NN
    # scores are turned back into cosines, so the background and every relevance equal the local ones
    from memlane.recall import relevance as rel

    index = OpenSearchIndex(fake, ALIAS, 2)
    cosines = [0.5, 0.16, 0.15, 0.14, 0.13, 0.12, 0.12, 0.11, 0.1, 0.08]
    fake.msearch_responses = [
        {"responses": [leg(*(hit(f"doc-{i}", 0, knn_score_from_cosine(c)) for i, c in enumerate(cosines)))]},
    ]
    results = index.search(scope(), "", [1.0, 0.0], 10)
    background = rel.Background.of([(c.document_id, c.score) for c in results.vector], 10)
    local = rel.Background.of([(f"doc-{i}", c) for i, c in enumerate(cosines)], 10)
    assert background.median == pytest.approx(local.median, abs=1e-9) and local.median == pytest.approx(0.125)
    got = [rel.relevance(c.score, 0.0, 3, False, rel.MINILM, background=background, document_id=c.document_id)
           for c in results.vector]
    want = [rel.relevance(c, 0.0, 3, False, rel.MINILM, background=local, document_id=f"doc-{i}")
            for i, c in enumerate(cosines)]
    assert got == pytest.approx(want, abs=1e-9)
    assert got[0] >= rel.MINILM.strong > max(got[1:])  # the clear winner, strong at a cosine of 0.5
