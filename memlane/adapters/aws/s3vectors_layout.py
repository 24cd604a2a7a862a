"""The shape of memlane's chunks in Amazon S3 Vectors: which index an organization's chunks live in,
a chunk's key and metadata, the filter both legs apply, the text leg's query texts, and how a result
becomes a candidate. Pure functions over dicts: no client here (memlane.adapters.aws.s3vectors_index
sends them).

**One vector index per organization** (`index_name`): another organization's chunks are not in the
index a search reads, so they can never be a candidate, whatever a filter says; BM25's statistics are
the organization's own (N, df and avgdl over its index), and no tenant's saves move another's scores
(on one shared OpenSearch index they do: docs/deploy.md). The embedded default counts the searched
projects' statistics, for the ranking and for relevance alike (memlane.adapters.local.search_legs), so
there a project's relevance does not move when another project of the organization saves; here it does
(a project's BM25 alone would need an index per project, and a recall across projects one query per
index with scores that do not compare: docs/deploy.md). The service allows 10,000 indexes per vector bucket and 10,000 buckets per
region, and AWS's own advice for a multi-tenant workload that queries one tenant at a time is an index
per tenant (S3 Vectors best practices, "Scaling across vector indexes"). A shared index would also
need the organization in every filter and its BM25 would count every organization's words.

An index is named `<alias>-<organization hash>-<embedder hash>`: vectors of another model (another
dimension, another space) go to other indexes, filled by `memlane reindex --aws` as OpenSearch's
`-v{n}` indexes are, and an organization's indexes of every embedder share a prefix (a delete lists
them with one ListIndexes and reaches each). Ids are hashed: index names allow [a-z0-9.-], 63 long.

**Metadata** (limits from the S3 Vectors user guide, "Limitations and restrictions"): at most 2 KB of
filterable metadata and 40 KB in all per vector, at most 50 keys, at most 10 non-filterable keys per
index. Filterable: what the scope filter reads (organization, project, kind, content type, tags,
creation and expiry times, superseded) and what a candidate needs (document id, chunk id, chunk
index). Non-filterable and full-text searchable: the chunk's text (content then its identifiers'
words), its title, its heading path and its context (the memories saved around it), as four keys so
that memlane weighs each as OpenSearch's `most_fields` does. Tags are kept as 64-bit hashes of their
lower-cased text: a document may carry 100 tags of 100 characters (memlane.domain.requests), which
would not fit in 2 KB; 100 hashes do (`filterable_size` is checked on every write). Times are numbers
(microseconds since the epoch): the service compares only numbers with $gt/$lte.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memlane.adapters.aws.unit_vectors import normalize as normalize  # the adapter reads it as lay.normalize
from memlane.domain.errors import MemlaneError
from memlane.ports import Candidate, IndexedChunk, SearchScope

# The service's limits (S3 Vectors user guide, "Limitations and restrictions", read 2026-11).
MAX_TOP_K = 100  # results per QueryVectors request
MAX_PUT = 500  # vectors per PutVectors
MAX_DELETE = 500  # keys per DeleteVectors
MAX_GET = 100  # keys per GetVectors
MAX_LIST = 1000  # vectors per ListVectors page
MAX_FILTERABLE_BYTES = 2048
MAX_METADATA_BYTES = 40 * 1024
MAX_QUERY_TEXT = 1024  # characters of one queryTexts entry (botocore's service model)

DISTANCE_METRIC = "cosine"
DATA_TYPE = "float32"
TEXT_LANGUAGE = "en"  # the English analyzer, as OpenSearch's `english` on the managed backend

# Metadata keys. Filterable:
ORGANIZATION, PROJECT, DOCUMENT, CHUNK, CHUNK_INDEX = "organization_id", "project_id", "document_id", "chunk_id", "chunk_index"
CONTENT_TYPE, KIND, TAGS, CREATED, FORGET, SUPERSEDED = (
    "content_type", "kind", "tags", "created_us", "forget_us", "superseded")
# Non-filterable, full-text searchable, and the weight of each in the text leg's score (the
# OpenSearch adapter's `text^1 title^2 heading_path^1.5`, and the context at `context_boost`):
TEXT, TITLE, HEADINGS, CONTEXT = "text", "title", "headings", "context"
TEXT_KEYS = (TEXT, TITLE, HEADINGS, CONTEXT)
KEY_WEIGHTS = {TEXT: 1.0, TITLE: 2.0, HEADINGS: 1.5}
CONTEXT_BOOST = 0.5

INDEX_NAME_HASH = 24  # hex characters of the organization's hash in an index name (96 bits)
EMBEDDER_HASH = 8
TAG_HASH_BYTES = 8


def metadata_configuration() -> dict[str, Any]:
    """CreateIndex's `metadataConfiguration`: the four text keys non-filterable and searchable."""
    return {
        "nonFilterableMetadataKeys": list(TEXT_KEYS),
        "textSearchConfigurations": [{"metadataKey": key, "language": TEXT_LANGUAGE} for key in TEXT_KEYS],
    }


def _hex(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def org_index_prefix(alias: str, org_id: str) -> str:
    """The names of the organization's indexes (one per embedder that wrote to it) start with this."""
    return f"{alias}-{_hex(org_id, INDEX_NAME_HASH)}-"


def index_name(alias: str, embedder_id: str, org_id: str) -> str:
    """The organization's index for vectors of `embedder_id` (≤ 63 characters for an alias of ≤ 29)."""
    return f"{org_index_prefix(alias, org_id)}{_hex(embedder_id, EMBEDDER_HASH)}"


def tag_hash(tag: str) -> str:
    """A tag as the index holds it: 64 bits of SHA-256 of its lower-cased text, URL-safe base64."""
    digest = hashlib.sha256(tag.lower().encode()).digest()[:TAG_HASH_BYTES]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def micros(value: datetime) -> int:
    """A time as the index holds it: microseconds since the epoch (exact in a float64 until 2255)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(value: Any) -> datetime:
    whole = int(value)
    return datetime.fromtimestamp(whole // 1_000_000, tz=UTC).replace(microsecond=whole % 1_000_000)


def _size(metadata: Mapping[str, Any]) -> int:
    return len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode())


def filterable_size(metadata: Mapping[str, Any]) -> int:
    """Bytes of the filterable part of a vector's metadata, as JSON (how memlane counts the 2 KB)."""
    return _size({k: v for k, v in metadata.items() if k not in TEXT_KEYS})


def _clip_bytes(text: str, budget: int) -> str:
    """The longest prefix of `text` whose JSON-escaped UTF-8 form fits in `budget` bytes."""
    if budget <= 2:
        return ""
    if _size({"": text}) - 5 <= budget:  # {"":…} adds 5 bytes around the string
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if len(json.dumps(text[:mid], ensure_ascii=False).encode()) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def chunk_metadata(item: IndexedChunk) -> dict[str, Any]:
    """A chunk's metadata: the filterable fields, then its searchable texts, each clipped so the whole
    fits in 40 KB (the body keeps what fits after the title, headings and context, which are short)."""
    chunk = item.chunk
    metadata: dict[str, Any] = {
        ORGANIZATION: chunk.organization_id,
        PROJECT: chunk.project_id,
        DOCUMENT: chunk.document_id,
        CHUNK: chunk.id,
        CHUNK_INDEX: chunk.chunk_index,
        CONTENT_TYPE: chunk.content_type.value,
        KIND: item.kind,
        CREATED: micros(chunk.created_at),
        SUPERSEDED: bool(chunk.superseded),
    }
    tags = sorted({tag_hash(t) for t in chunk.tags})
    if tags:
        metadata[TAGS] = tags
    if chunk.forget_after is not None:
        metadata[FORGET] = micros(chunk.forget_after)
    size = filterable_size(metadata)
    if size > MAX_FILTERABLE_BYTES:  # memlane's own limits keep it far below; a changed limit would land here
        raise MemlaneError(f"chunk {chunk.id}: {size} bytes of filterable metadata, over S3 Vectors' "
                           f"{MAX_FILTERABLE_BYTES}")
    texts = {TITLE: chunk.title, HEADINGS: " › ".join(chunk.heading_path), CONTEXT: item.context, TEXT: item.body()}
    budget = MAX_METADATA_BYTES - size - 64  # the keys and separators of the texts
    for key in (TITLE, HEADINGS, CONTEXT, TEXT):
        value = _clip_bytes(texts[key], budget // (2 if key != TEXT else 1))
        if value:
            metadata[key] = value
            budget -= _size({key: value})
    return metadata


def put_vector(item: IndexedChunk, vector: Sequence[float]) -> dict[str, Any]:
    """One PutVectors entry: the chunk id as key, its unit vector, its metadata."""
    return {"key": item.chunk.id, "data": {"float32": [float(v) for v in vector]}, "metadata": chunk_metadata(item)}


# ----------------------------------------------------------------------------- the scope


def scope_filter(scope: SearchScope) -> dict[str, Any]:
    """The filter both legs apply (S3 Vectors' metadata filter language). The organization is in it
    although its index holds nothing else: a second lock on the same door. An empty project list
    matches nothing."""
    now = scope.now or datetime.now(UTC)
    clauses: list[dict[str, Any]] = [
        {ORGANIZATION: {"$eq": scope.organization_id}},
        {PROJECT: {"$in": list(scope.project_ids) or [""]}},
        {"$or": [{FORGET: {"$exists": False}}, {FORGET: {"$gt": micros(now)}}]},
    ]
    filters = scope.filters
    if scope.created_until is not None:
        clauses.append({CREATED: {"$lte": micros(scope.created_until)}})
    if filters.created_after is not None:
        clauses.append({CREATED: {"$gt": micros(filters.created_after)}})
    if not filters.include_superseded:
        clauses.append({SUPERSEDED: {"$eq": False}})
    if filters.content_types:
        clauses.append({CONTENT_TYPE: {"$in": [ct.value for ct in filters.content_types]}})
    if filters.kinds:
        # a chunk written without a kind (ports.UNKNOWN_KIND) passes: recall checks its document's kind
        clauses.append({KIND: {"$in": [*dict.fromkeys(filters.kinds), ""]}})
    if filters.tags:
        # $eq against a list matches when any element is equal (the user guide's "Metadata filtering")
        hashes = list(dict.fromkeys(tag_hash(t) for t in filters.tags))
        clauses.append({"$or": [{TAGS: {"$eq": h}} for h in hashes]} if len(hashes) > 1 else {TAGS: {"$eq": hashes[0]}})
    return {"$and": clauses}


def narrowed(flt: Mapping[str, Any], chunk_ids: Sequence[str]) -> dict[str, Any]:
    """The scope filter restricted to these chunks (a fill: the other leg's candidates)."""
    return {"$and": [*flt["$and"], {CHUNK: {"$in": list(chunk_ids)}}]}


def query_texts(query_text: str, context_boost: float) -> list[dict[str, str]]:
    """The text leg's `queryTexts`: the query against each searchable key (the context only when it
    weighs something). A query longer than the service takes (1,024 characters) is cut at a word."""
    text = query_text.strip()
    if len(text) > MAX_QUERY_TEXT:
        text = text[:MAX_QUERY_TEXT].rsplit(" ", 1)[0] or text[:MAX_QUERY_TEXT]
    keys = [k for k in TEXT_KEYS if k != CONTEXT or context_boost > 0]
    return [{"text": text, "metadataKey": key} for key in keys] if text else []


def text_score(result: Mapping[str, Any], context_boost: float) -> float:
    """memlane's BM25 of a result: the service's BM25 of each key it matched, weighted and summed
    (OpenSearch's `most_fields` with boosts)."""
    weights = {**KEY_WEIGHTS, CONTEXT: context_boost}
    scores = result.get("scores", {}).get("bm25Scores", [])
    return math.fsum(weights.get(s["metadataKey"], 0.0) * float(s["score"]) for s in scores)


def cosine(result: Mapping[str, Any]) -> float | None:
    """The cosine of a result: 1 − its cosine distance (None when the service gave no distance)."""
    distance = result.get("distance", result.get("scores", {}).get("vectorDistance"))
    return None if distance is None else 1.0 - float(distance)


def candidate(result: Mapping[str, Any], score: float) -> Candidate:
    """A result (with its metadata) as a candidate."""
    metadata = result["metadata"]
    return Candidate(
        chunk_id=str(metadata.get(CHUNK) or result["key"]),
        document_id=str(metadata[DOCUMENT]),
        chunk_index=int(metadata.get(CHUNK_INDEX, 0)),
        score=score,
        created_at=from_micros(metadata[CREATED]),
        content_type=str(metadata[CONTENT_TYPE]) if metadata.get(CONTENT_TYPE) else None,
    )
