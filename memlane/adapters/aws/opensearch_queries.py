"""The bodies memlane sends to OpenSearch for a recall: the filter both legs apply (tenant,
projects, expiry, versions, the recall filters), the BM25 leg (`most_fields` over the chunk's text
fields) and the k-NN leg (faiss efficient filtering), and how their hits are read back. Pure
functions over dicts; memlane.adapters.aws.opensearch_index sends them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memlane.adapters.aws.opensearch_mapping import (
    CONTEXT_FIELD,
    TEXT_FIELDS,
    VECTOR_FIELD,
    iso,
    normalize,
    tags_of,
)
from memlane.domain.errors import EmbedderMismatchError
from memlane.ports import SearchScope

MAX_K = 10_000  # OpenSearch's k-NN and result window limit
SOURCE_FIELDS = ["chunk_id", "document_id", "organization_id", "chunk_index", "created_at"]
REINDEX_HINT = (
    "run `memlane reindex` to re-embed every document into a new index with the configured embedder"
)


def text_fields(context_boost: float) -> list[str]:
    """What the text leg matches: `most_fields` sums the fields' scores, so a context match
    adds `context_boost` × its score to the memory's own (0: context is not searched)."""
    fields = list(TEXT_FIELDS)
    if context_boost > 0:
        fields.append(f"{CONTEXT_FIELD}^{context_boost:g}")
    return fields


def scope_filter(scope: SearchScope) -> list[dict[str, Any]]:
    """The filter both legs apply. The tenant comes from the scope (the authenticated key),
    never from the query."""
    now = scope.now or datetime.now(UTC)
    clauses: list[dict[str, Any]] = [
        {"term": {"organization_id": scope.organization_id}},
        # An empty project list matches nothing: the safe reading of a malformed scope.
        {"terms": {"project_id": list(scope.project_ids)}},
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "forget_after"}}]}},
                    {"range": {"forget_after": {"gt": iso(now)}}},
                ],
                "minimum_should_match": 1,
            }
        },
    ]
    if scope.created_until is not None:
        clauses.append({"range": {"created_at": {"lte": iso(scope.created_until)}}})
    filters = scope.filters
    if not filters.include_superseded:
        # a term on a field an older index never mapped matches nothing, so this holds there too
        clauses.append({"bool": {"must_not": [{"term": {"superseded": True}}]}})
    if filters.content_types:
        clauses.append({"terms": {"content_type": [ct.value for ct in filters.content_types]}})
    if filters.kinds:
        # a chunk indexed before kinds were has no `kind` (ports.UNKNOWN_KIND): it passes, and recall
        # checks its document's kind; on an index that never mapped the field, every chunk passes
        clauses.append({"bool": {"should": [
            {"terms": {"kind": list(filters.kinds)}},
            {"bool": {"must_not": [{"exists": {"field": "kind"}}]}},
        ], "minimum_should_match": 1}})
    if filters.created_after is not None:
        clauses.append({"range": {"created_at": {"gt": iso(filters.created_after)}}})
    if filters.labels():
        clauses.append({"terms": {"tags": tags_of(filters.labels())}})
    return clauses


def search_bodies(
    alias: str, fields: list[str], dimension: int, scope: SearchScope, query_text: str,
    query_vector: Sequence[float] | None, k: int,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The legs to run and the _msearch body (header, query pairs) against `alias`: the text leg
    matches `fields` (most_fields), the vector leg must have `dimension` dimensions."""
    size = max(1, min(MAX_K, k))
    flt = scope_filter(scope)
    legs: list[str] = []
    body: list[dict[str, Any]] = []
    if query_text.strip():
        legs.append("text")
        body.append({"index": alias})
        body.append(
            {"size": size, "_source": SOURCE_FIELDS, "track_total_hits": False,
             "query": text_query(fields, query_text, flt)}
        )
    if query_vector is not None:
        if len(query_vector) != dimension:
            raise EmbedderMismatchError(
                f"query vector has {len(query_vector)} dimensions; the search index '{alias}' "
                f"holds {dimension}; {REINDEX_HINT}"
            )
        legs.append("vector")
        body.append({"index": alias})
        body.append(
            {
                "size": size,
                "_source": SOURCE_FIELDS,
                "track_total_hits": False,
                "query": {
                    "knn": {
                        VECTOR_FIELD: {
                            "vector": normalize(query_vector),
                            "k": size,
                            "filter": {"bool": {"filter": flt}},
                        }
                    }
                },
            }
        )
    return legs, body


def text_query(fields: list[str], query_text: str, flt: list[dict[str, Any]]) -> dict[str, Any]:
    """The text leg's query: BM25 over `fields` (most_fields), scored; `flt` only filters (a filter
    clause never changes a hit's score, so a narrower filter leaves each chunk's BM25 as it was)."""
    return {
        "bool": {
            "must": [{"multi_match": {"query": query_text, "fields": fields, "type": "most_fields"}}],
            "filter": flt,
        }
    }


def fill_bodies(
    alias: str, fields: list[str], scope: SearchScope, query_text: str, query_vector: Sequence[float] | None,
    bm25_of: Sequence[str], vectors_of: Sequence[str],
) -> tuple[list[str], list[dict[str, Any]]]:
    """The second _msearch of a recall (SearchIndex.search's contract: each leg also scores the other
    leg's candidates), with up to two bodies; legs are named for the list each one fills:

    * "text": the BM25 of the chunks `bm25_of` (vector candidates the text leg did not return), the
      text leg's own query (same fields, analyzer, scope filter) narrowed to those chunk ids, so each
      hit's `_score` is the one the leg would have given it with a larger k;
    * "vector": the stored vectors of the chunks `vectors_of` (text candidates the vector leg did not
      return), the scope filter narrowed to those chunk ids, for their cosine computed by the caller.
      Not a `script_score` query with the k-NN plugin's `knn_score` script, which would return the
      cosine itself: osmem-server (the OpenSearch stand-in the tests run) has no k-NN plugin, and a
      plain filtered search with `_source` is a path both hosts run.

    Both restrict by the `chunk_id` keyword, not `_id`: Serverless indexes chunks without custom ids."""
    flt = scope_filter(scope)
    legs: list[str] = []
    body: list[dict[str, Any]] = []
    bm25_ids = list(dict.fromkeys(bm25_of))[:MAX_K]
    vector_ids = list(dict.fromkeys(vectors_of))[:MAX_K]
    if bm25_ids and query_text.strip():
        legs.append("text")
        body.append({"index": alias})
        body.append(
            {"size": len(bm25_ids), "_source": SOURCE_FIELDS, "track_total_hits": False,
             "query": text_query(fields, query_text, [*flt, {"terms": {"chunk_id": bm25_ids}}])}
        )
    if vector_ids and query_vector is not None:
        legs.append("vector")
        body.append({"index": alias})
        body.append(
            {"size": len(vector_ids), "_source": [*SOURCE_FIELDS, VECTOR_FIELD], "track_total_hits": False,
             "query": {"bool": {"filter": [*flt, {"terms": {"chunk_id": vector_ids}}]}}}
        )
    return legs, body


def parse_time(value: Any) -> datetime:
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
