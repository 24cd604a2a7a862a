"""Each leg completed with the other leg's candidates (SearchIndex.search's contract), on osmem-server:
its BM25 scores the filled text candidates, its `_source` holds the vectors the filled cosines are
computed from. osmem-server has no k-NN plugin, so the k-NN leg itself is answered by `KnnShim`, a
test double written from the k-NN plugin's documentation: an exact search over the same filter, each
hit's `_score` the faiss inner-product translation (1 + ip for ip >= 0). Everything else (the text leg,
both fill bodies, the scope filters) runs on osmem-server."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import OpenSearch

from memlane.adapters.aws.opensearch_index import OpenSearchIndex, knn_score_from_cosine, normalize
from memlane.adapters.aws.opensearch_mapping import chunk_doc_id
from memlane.adapters.aws.opensearch_queries import SOURCE_FIELDS
from memlane.domain.models import Chunk, ContentType, chunk_id_for
from memlane.ports import Candidate, IndexedChunk, LegResults, RecallFilters, SearchScope

pytestmark = pytest.mark.integration

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=2)
ALIAS = "memlane-chunks"
EMBEDDER = "test/fill/4"
Q = [1.0, 0.0, 0.0, 0.0]
FILLER = " ".join(f"word{i}" for i in range(40))


class KnnShim:
    """The opensearch-py client, with each `knn` body of an _msearch answered exactly in Python (over
    the hits of the knn clause's own filter) and every other body sent to osmem-server in one _msearch."""

    def __init__(self, client: OpenSearch) -> None:
        self.client = client
        self.msearches: list[list[dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def msearch(self, body: list[dict[str, Any]], index: str) -> dict[str, Any]:
        self.msearches.append(copy.deepcopy(body))
        pairs = list(zip(body[::2], body[1::2], strict=True))
        plain = [i for i, (_, query) in enumerate(pairs) if "knn" not in query["query"]]
        answers: dict[int, Any] = {}
        if plain:
            sent = [part for i in plain for part in pairs[i]]
            for i, answer in zip(plain, self.client.msearch(body=sent, index=index)["responses"], strict=True):
                answers[i] = answer
        for i, (_, query) in enumerate(pairs):
            if i not in answers:
                answers[i] = self._knn(index, query)
        return {"responses": [answers[i] for i in range(len(pairs))]}

    def _knn(self, index: str, query: dict[str, Any]) -> dict[str, Any]:
        clause = query["query"]["knn"]["vector"]
        every = self.client.search(index=index, body={
            "size": 10_000, "_source": [*SOURCE_FIELDS, "vector"], "query": clause["filter"]})["hits"]["hits"]
        scored = []
        for hit in every:
            stored = hit["_source"].pop("vector")
            ip = sum(a * b for a, b in zip(stored, clause["vector"], strict=True))
            scored.append({**hit, "_score": knn_score_from_cosine(ip)})
        scored.sort(key=lambda h: -h["_score"])
        return {"status": 200, "hits": {"hits": scored[: clause["k"]]}}


@pytest.fixture
def client(osmem: Any) -> Iterator[KnnShim]:
    with osmem.clone() as clone:
        yield KnnShim(OpenSearch(hosts=[clone.url], timeout=10))


def item(name: str, content: str, vector: list[float], org: str = "org-a", **overrides: Any) -> IndexedChunk:
    fields: dict[str, Any] = {
        "id": chunk_id_for(name, 0), "document_id": name, "organization_id": org, "project_id": "proj-a",
        "content": content, "chunk_index": 0, "chunk_count": 1, "start_offset": 0, "end_offset": len(content),
        "title": "Notes", "content_type": ContentType.MARKDOWN, "created_at": T0,
    }
    fields.update(overrides)
    return IndexedChunk(Chunk(**fields), vector)


# Which chunk each leg returns first, by design: t* hold "kestrel" often and point away from Q (the
# text leg's top 3), v* point near Q (the k-NN leg's top 3): v-term holds the word once in a long text
# (below the text leg's top 3), v-none not at all. Out of every scope or filter, though nearest and
# wordiest: org-b's chunk, a chunk of another project, a code chunk (outside a markdown filter).
CHUNKS = [
    item("t1", "kestrel kestrel kestrel kestrel", [0.0, 1.0, 0.0, 0.0]),
    item("t2", "kestrel kestrel kestrel hovering", [-0.1, 0.8, 0.6, 0.0]),
    item("t3", "kestrel kestrel over the meadow", [0.1, 0.0, 1.0, 0.0]),
    item("filler", f"a kestrel once {FILLER}", [0.0, 0.0, 0.0, 1.0]),
    item("v-term", f"one kestrel among many words {FILLER}", [0.9, 0.3, 0.1, 0.0]),
    item("v-none", "the harbour lanterns at dusk", [0.95, 0.1, 0.0, 0.2]),
    item("v-third", "a quiet afternoon in the garden", [0.8, 0.0, 0.5, 0.3]),
    item("org-b", "kestrel kestrel kestrel kestrel kestrel", Q, org="org-b"),
    item("other-project", "kestrel kestrel kestrel kestrel kestrel", Q, project_id="proj-z"),
    item("code", "kestrel kestrel kestrel kestrel kestrel", Q, content_type=ContentType.CODE),
]


@pytest.fixture
def index(client: KnnShim) -> OpenSearchIndex:
    search_index = OpenSearchIndex(client, ALIAS, 4, embedder_id=EMBEDDER)
    search_index.ensure_index()
    search_index.upsert(EMBEDDER, CHUNKS)
    client.indices.refresh(index=ALIAS)
    return search_index


def scope(**filters: Any) -> SearchScope:
    return SearchScope("org-a", ("proj-a",), RecallFilters(**filters), now=NOW)


def stored_cosine(client: KnnShim, chunk_id: str) -> float:
    stored = client.get(index=ALIAS, id=chunk_doc_id("org-a", chunk_id))["_source"]["vector"]
    return math.fsum(a * b for a, b in zip(stored, normalize(Q), strict=True))


def by_cosine(legs: LegResults) -> list[float]:
    return [c.score for c in legs.vector]


def scores(candidates: list[Candidate]) -> dict[str, float]:
    return {c.document_id: c.score for c in candidates}


def test_each_leg_holds_the_other_legs_candidates_with_the_score_a_larger_k_gives(
    client: KnnShim, index: OpenSearchIndex
) -> None:
    markdown = scope(content_types=(ContentType.MARKDOWN,))
    # What each leg alone gives every in-scope chunk, k large enough for all
    bm25 = scores(index.search(markdown, "kestrel", None, 50).text)
    cosine = scores(index.search(markdown, "", Q, 50).vector)
    assert set(bm25) == {"t1", "t2", "t3", "filler", "v-term"}
    assert sorted(bm25, key=lambda d: -bm25[d])[:3] == ["t1", "t2", "t3"]
    assert sorted(cosine, key=lambda d: -cosine[d])[:3] == ["v-none", "v-term", "v-third"]
    client.msearches.clear()

    legs = index.search(markdown, "kestrel", Q, 3)

    # Both legs, then one fill: v-term's and v-none's BM25... v-term holds the word, v-none does not
    assert len(client.msearches) == 2
    assert [c.document_id for c in legs.text] == ["t1", "t2", "t3", "v-term"]
    assert scores(legs.text) == {d: bm25[d] for d in ("t1", "t2", "t3", "v-term")}
    assert all(c.score > 0 for c in legs.text)
    # ... and the text leg's top three get their cosine, from the stored vector
    assert set(scores(legs.vector)) == {"v-none", "v-term", "v-third", "t1", "t2", "t3"}
    for document, value in scores(legs.vector).items():
        assert value == pytest.approx(cosine[document], abs=1e-6)
        assert value == pytest.approx(stored_cosine(client, chunk_id_for(document, 0)), abs=1e-6)
    assert [c.score for c in legs.vector] == sorted((c.score for c in legs.vector), reverse=True)
    assert [c.document_id for c in legs.vector][-2:] == ["t1", "t2"]  # orthogonal to Q, then away from it
    assert by_cosine(legs)[-2:] == [0.0, pytest.approx(-0.1 / math.sqrt(1.01), abs=1e-6)]
    by_id = {c.document_id: c for c in legs.vector}
    assert (by_id["t3"].chunk_id, by_id["t3"].chunk_index, by_id["t3"].created_at) == (chunk_id_for("t3", 0), 0, T0)


def test_out_of_scope_chunks_are_never_filled_in(client: KnnShim, index: OpenSearchIndex) -> None:
    # Given candidate lists that (as a faulty leg might) hold another organization's chunk, another
    # project's and a code chunk outside the markdown filter, each holding the word and nearest to Q
    def candidate(document: str, score: float) -> Candidate:
        return Candidate(chunk_id_for(document, 0), document, 0, score, T0)

    outside = ["org-b", "other-project", "code"]
    given = LegResults(
        vector=[candidate(d, 0.99) for d in ("v-term", "v-none", *outside)],
        text=[candidate(d, 9.0) for d in ("t1", *outside)],
    )
    filled = index.fill(scope(content_types=(ContentType.MARKDOWN,)), "kestrel", Q, given)
    # Then only the in-scope chunks are scored on the other leg
    assert sorted(scores(filled.text)) == sorted(["t1", "v-term", *outside])
    assert sorted(scores(filled.vector)) == sorted(["v-term", "v-none", "t1", *outside])
    # and without the content filter, the code chunk is in scope and is filled in, with its real scores
    unfiltered = index.fill(scope(), "kestrel", Q, LegResults(vector=[candidate("code", 0.99)],
                                                               text=[candidate("t1", 9.0)]))
    assert scores(unfiltered.text)["code"] == scores(index.search(scope(), "kestrel", None, 50).text)["code"]
    assert scores(unfiltered.vector)["t1"] == pytest.approx(0.0, abs=1e-9)
    # and in a search, the nearest and wordiest chunks of other scopes never appear in either list
    for legs in (index.search(scope(content_types=(ContentType.MARKDOWN,)), "kestrel", Q, k) for k in (1, 3, 50)):
        assert not {*outside} & {c.document_id for c in [*legs.text, *legs.vector]}


def test_no_fill_request_when_the_legs_hold_the_same_chunks(client: KnnShim, index: OpenSearchIndex) -> None:
    index.upsert(EMBEDDER, [item("c1", "osprey osprey nest", [0.0, 1.0, 0.0, 0.0], org="org-c"),
                            item("c2", "osprey dive", [1.0, 0.0, 0.0, 0.0], org="org-c")])
    client.indices.refresh(index=ALIAS)
    org_c = SearchScope("org-c", ("proj-a",), now=NOW)
    client.msearches.clear()
    legs = index.search(org_c, "osprey", Q, 5)
    assert len(client.msearches) == 1
    assert {c.document_id for c in legs.text} == {c.document_id for c in legs.vector} == {"c1", "c2"}
    # with k=1 each leg returns another chunk (text: c1, k-NN: c2): one fill
    client.msearches.clear()
    legs = index.search(org_c, "osprey", Q, 1)
    assert len(client.msearches) == 2
    assert [c.document_id for c in legs.vector] == ["c2", "c1"]
    assert [c.document_id for c in legs.text] == ["c1", "c2"]
