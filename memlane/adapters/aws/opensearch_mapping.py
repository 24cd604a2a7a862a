"""The shape of memlane's OpenSearch chunk index: its settings and mapping, how a chunk becomes an
indexed document, and the vector space it is scored in (why inner product on unit vectors:
memlane.adapters.aws.opensearch_index). Pure functions over dicts: no client here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memlane.adapters.aws.unit_vectors import normalize as normalize  # imported from here by the adapter
from memlane.ports import IndexedChunk

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
SPACE_TYPE = "innerproduct"
# Replicas follow the domain: none on one data node, one from two up (index.auto_expand_replicas).
AUTO_EXPAND_REPLICAS = "0-1"
TEXT_ANALYZER = "english"
VECTOR_FIELD = "vector"  # the chunk's unit vector (knn_vector), kept in _source
TEXT_FIELDS = ("text^1", "title^2", "heading_path^1.5")
# The text of the memories saved around a short memory (memlane.documents.contextual), below its own words.
CONTEXT_FIELD = "context"
CONTEXT_BOOST = 0.5
KEYWORD_FIELDS = (
    "organization_id",
    "project_id",
    "document_id",
    "content_type",
    "tags",
    "source_url",
    "chunk_id",
    "kind",  # memlane.ports.IndexedChunk.kind; absent on chunks indexed before (see scope_filter)
)


# How a chunk's document is named in the index (`_meta.chunk_ids`): by organization and chunk id, so
# one organization's write can never land on another's chunk. Indices created before say nothing:
# their documents are named by the chunk id alone, and each write first checks that no other
# organization holds those ids; a new index behind the alias is named the new way.
CHUNK_IDS = "chunk_ids"
PER_ORGANIZATION = "per-organization"


def chunk_doc_id(org_id: str, chunk_id: str) -> str:
    """A chunk's `_id` in an index whose chunk ids are per organization."""
    return f"{org_id}:{chunk_id}"


def index_body(dimension: int, embedder_id: str | None = None, *, serverless: bool = False) -> dict[str, Any]:
    """Settings and mappings of a memlane chunk index."""
    meta: dict[str, Any] = {"memlane_schema": 1, "dimension": dimension, CHUNK_IDS: PER_ORGANIZATION}
    if embedder_id:
        meta["embedder"] = embedder_id
    properties: dict[str, Any] = {
        VECTOR_FIELD: {
            "type": "knn_vector",
            "dimension": dimension,
            "method": {
                "name": "hnsw",
                "engine": "faiss",
                "space_type": SPACE_TYPE,
                "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
            },
        },
        "text": {"type": "text", "analyzer": TEXT_ANALYZER},
        "title": {"type": "text", "analyzer": TEXT_ANALYZER},
        "heading_path": {"type": "text", "analyzer": TEXT_ANALYZER},
        CONTEXT_FIELD: {"type": "text", "analyzer": TEXT_ANALYZER},
        "created_at": {"type": "date"},
        "forget_after": {"type": "date"},
        "chunk_index": {"type": "integer"},
        "superseded": {"type": "boolean"},  # absent (false) on the latest version of a document
    }
    properties.update({name: {"type": "keyword"} for name in KEYWORD_FIELDS})
    settings: dict[str, Any] = {"index": {"knn": True}}
    if not serverless:
        # A memlane index is small (chunks of one deployment): one shard avoids scoring skew
        # between shards and per-shard HNSW graphs. Serverless manages shards itself.
        settings["index"]["number_of_shards"] = 1
        # A replica on another node when there is one: none on the default single-node domain (one
        # replica there could never be assigned, and the domain would stay yellow), one from two
        # data nodes up. Serverless manages replicas itself.
        settings["index"]["auto_expand_replicas"] = AUTO_EXPAND_REPLICAS
    return {
        "settings": settings,
        "mappings": {"dynamic": "strict", "_meta": meta, "properties": properties},
    }


def cosine_from_knn_score(score: float) -> float:
    """Inverts OpenSearch's score translation for the faiss inner-product space."""
    if score >= 1.0:
        return score - 1.0
    if score <= 0.0:
        return -1.0
    return 1.0 - 1.0 / score


def knn_score_from_cosine(cosine: float) -> float:
    """OpenSearch's translation (for tests and documentation): the inverse of the above."""
    return 1.0 + cosine if cosine >= 0 else 1.0 / (1.0 - cosine)


def iso(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def tags_of(tags: Sequence[str]) -> list[str]:
    """Tags are indexed and matched lower-cased: the tag filter ignores case, as the local one does."""
    return list(dict.fromkeys(t.lower() for t in tags))


def chunk_source(item: IndexedChunk) -> dict[str, Any]:
    """The indexed document of one chunk: its text fields, filters and unit vector."""
    chunk = item.chunk
    source: dict[str, Any] = {
        "chunk_id": chunk.id,
        "document_id": chunk.document_id,
        "organization_id": chunk.organization_id,
        "project_id": chunk.project_id,
        "chunk_index": chunk.chunk_index,
        "text": item.body(),  # the content, then its identifiers' words (IndexedChunk.identifiers)
        "title": chunk.title,
        "heading_path": list(chunk.heading_path),
        "content_type": chunk.content_type.value,
        "kind": item.kind,
        "tags": tags_of(chunk.tags),
        "created_at": iso(chunk.created_at),
        VECTOR_FIELD: normalize(item.vector),
    }
    if chunk.source_url:
        source["source_url"] = chunk.source_url
    if chunk.forget_after is not None:
        source["forget_after"] = iso(chunk.forget_after)
    if chunk.superseded:
        source["superseded"] = True
    if item.context:
        source[CONTEXT_FIELD] = item.context
    return source
