"""Amazon S3 Vectors for the tests: moto for what moto implements (vector buckets, indexes,
Put/Get/Delete/ListVectors), and what it does not written here from the API reference (service model
2025-07-15 and the S3 user guide's S3 Vectors pages, read 2026-11): QueryVectors (vector-only,
full-text-only and hybrid), the index's metadata configuration and mode (CreateIndex's
`metadataConfiguration`, GetIndex's `indexMode`, UpdateIndexMode, UpdateMetadataConfiguration,
PutVectorBucketDefaultIndexMode), ListIndexes' `prefix`, and the per-vector metadata limits.

`FakeS3Vectors(client)` wraps a boto3 `s3vectors` client created under moto. **Every request** is
validated against botocore's service model before anything else (botocore's ParamValidator, the
check a real client makes before sending: a request the real service would refuse for its shape fails
here too), and recorded in `calls` (operation, parameters) for tests that look at what an adapter
sent. QueryVectors' answer is validated against the operation's output shape as well.

What is documented and modelled as such:

* QueryVectors picks its mode from its inputs: `queryVector` alone ranks by distance, `queryTexts`
  alone by BM25, both by reciprocal rank fusion (RRF) of the vector ranking and one BM25 ranking per
  text key; full-text and hybrid requests need an ENHANCED index, and each `metadataKey` must be a
  configured text key (once per request). `topK` ≤ 100. A filter on a non-filterable key is a 400.
  `returnScores` adds `bm25Scores` (the keys a result matched) to full-text and hybrid results, `fused`
  to hybrid ones, `vectorDistance` to hybrid results that the vector search returned; it adds nothing
  to a vector-only request. Cosine distance is 1 − cosine similarity.
* Filters: $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or; $eq against a list matches any element;
  $gt/$gte/$lt/$lte compare numbers only (evaluated before the search: ENHANCED's pre-filtering).
* Limits checked on PutVectors: 2 KB filterable metadata, 40 KB in all, 50 keys (JSON bytes: how the
  service counts is not documented; memlane counts the same way with a margin).

What is a guess, and how it is modelled (docs/deploy.md repeats these):

* The analyzer of a key with `language: en`: Unicode words, lower-cased, Lucene's English stop words
  dropped, Porter stems (memlane's own FTS5 tokenizer, `porter unicode61`; AWS names a "language
  analyzer", not its rules). BM25 is Lucene's: k1 1.2, b 0.75, idf ln(1 + (N − n + 0.5) / (n + 0.5)), N, n and
  avgdl over the vectors holding the key. Whose vectors count is `statistics`: "index" (every vector of
  the index, the default: what a per-index inverted index does), "scope" (the vectors the request's
  filter admits, the filter's clauses on `statistics_ignore` keys left out: a service counting per
  pre-filtered set) or "bucket" (every index of the bucket: a shared index).
* A multi-key full-text request ranks by RRF of the keys' BM25 rankings (as the hybrid one does; AWS
  documents RRF for hybrid requests only); RRF's constant is 60; each key's and the vector's ranking
  feeding RRF holds topK results; ties go by key.
* Results come in pages of `page_size` (100: at most one page at topK ≤ 100; a test sets fewer to
  exercise `nextToken`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from botocore.exceptions import ClientError
from botocore.validate import validate_parameters

from memlane.adapters.local.bm25 import Fts5Tokenizer

MAX_TOP_K = 100
MAX_FILTERABLE_BYTES = 2048
MAX_METADATA_BYTES = 40 * 1024
MAX_METADATA_KEYS = 50
RRF_K = 60
K1, B = 1.2, 0.75
# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
STOP_WORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"])
STATISTICS = ("index", "scope", "bucket")


def client_error(operation: str, code: str, message: str, status: int = 400) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, operation)


# ----------------------------------------------------------------------------- the analyzer


class EnglishAnalyzer:
    """Unicode words, lower-cased, stop words dropped, Porter stems: memlane's FTS5 tokenizer
    (memlane.adapters.local.bm25.Fts5Tokenizer; a term is its stem's 64-bit key)."""

    def __init__(self) -> None:
        self._tokenizer = Fts5Tokenizer()
        self._cache: dict[str, list[int]] = {}

    def terms(self, text: str) -> list[int]:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        words = [w for w in _words(text) if w not in STOP_WORDS]
        terms = [t for found in self._tokenizer.word_terms(words) for t in found]
        if len(self._cache) > 100_000:
            self._cache.clear()
        self._cache[text] = terms
        return terms


def _words(text: str) -> list[str]:
    out, word = [], []
    for ch in text.lower():
        if ch.isalnum():
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return out


ANALYZER = EnglishAnalyzer()


# ----------------------------------------------------------------------------- filters


def _validate_filter(operation: str, flt: Any, non_filterable: set[str]) -> None:
    if not isinstance(flt, dict) or not flt:
        raise client_error(operation, "ValidationException", "Invalid filter: expected a non-empty object")
    for key, value in flt.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list) or not value:
                raise client_error(operation, "ValidationException", f"Invalid filter: {key} needs a non-empty array")
            for part in value:
                _validate_filter(operation, part, non_filterable)
            continue
        if key.startswith("$"):
            raise client_error(operation, "ValidationException", f"Invalid filter: unknown operator {key}")
        if key in non_filterable:
            raise client_error(operation, "ValidationException", f"Invalid filter: metadata key '{key}' is non-filterable")
        if isinstance(value, dict):
            for op, operand in value.items():
                _validate_operator(operation, op, operand)


def _validate_operator(operation: str, op: str, operand: Any) -> None:
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if isinstance(operand, bool) or not isinstance(operand, int | float):
            raise client_error(operation, "ValidationException", f"Invalid filter: {op} takes a number")
    elif op in ("$in", "$nin"):
        if not isinstance(operand, list) or not operand:
            raise client_error(operation, "ValidationException", f"Invalid filter: {op} takes a non-empty array")
    elif op == "$exists":
        if not isinstance(operand, bool):
            raise client_error(operation, "ValidationException", "Invalid filter: $exists takes a boolean")
    elif op not in ("$eq", "$ne"):
        raise client_error(operation, "ValidationException", f"Invalid filter: unknown operator {op}")


def matches(flt: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> bool:
    if not flt:
        return True
    for key, value in flt.items():
        if key == "$and":
            if not all(matches(part, metadata) for part in value):
                return False
        elif key == "$or":
            if not any(matches(part, metadata) for part in value):
                return False
        elif not _field_matches(metadata, key, value if isinstance(value, dict) else {"$eq": value}):
            return False
    return True


def _field_matches(metadata: Mapping[str, Any], key: str, ops: Mapping[str, Any]) -> bool:
    present = key in metadata
    value = metadata.get(key)
    values = value if isinstance(value, list) else [value]
    for op, operand in ops.items():
        if op == "$exists":
            ok = present == operand
        elif not present:
            ok = op in ("$ne", "$nin")
        elif op == "$eq":
            ok = operand in values
        elif op == "$ne":
            ok = operand not in values
        elif op == "$in":
            ok = any(v in operand for v in values)
        elif op == "$nin":
            ok = not any(v in operand for v in values)
        else:
            ok = any(_compare(op, v, operand) for v in values)
        if not ok:
            return False
    return True


def _compare(op: str, value: Any, operand: float) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return {"$gt": value > operand, "$gte": value >= operand, "$lt": value < operand, "$lte": value <= operand}[op]


def without_keys(flt: Mapping[str, Any] | None, keys: set[str]) -> dict[str, Any] | None:
    """The filter with its clauses on `keys` left out (the statistics of `statistics="scope"`)."""
    if not flt:
        return None
    out: dict[str, Any] = {}
    for key, value in flt.items():
        if key in ("$and", "$or"):
            parts = [p for p in (without_keys(part, keys) for part in value) if p]
            if parts:
                out[key] = parts
        elif key not in keys:
            out[key] = value
    return out or None


# ----------------------------------------------------------------------------- an index's contents


@dataclass
class IndexConfig:
    dimension: int
    non_filterable: set[str] = field(default_factory=set)
    text_keys: dict[str, str | None] = field(default_factory=dict)  # key -> language
    mode: str = "ENHANCED"


@dataclass
class Snapshot:
    """An index's vectors as arrays, rebuilt when a write changed the index."""

    keys: list[str]
    metadata: list[dict[str, Any]]
    unit: np.ndarray  # rows normalised (cosine)
    terms: dict[str, list[Counter[int]]]  # text key -> per row term counts
    lengths: dict[str, np.ndarray]  # text key -> per row token count (0: no such key)


def _snapshot(vectors: list[dict[str, Any]], text_keys: Iterable[str], dimension: int) -> Snapshot:
    keys = [v["key"] for v in vectors]
    metadata = [dict(v.get("metadata") or {}) for v in vectors]
    data = np.array([v["data"]["float32"] for v in vectors], dtype=np.float32).reshape(len(vectors), dimension)
    norms = np.linalg.norm(data, axis=1, keepdims=True)
    unit = np.divide(data, norms, out=np.zeros_like(data), where=norms > 0)
    terms: dict[str, list[Counter[int]]] = {}
    lengths: dict[str, np.ndarray] = {}
    for key in text_keys:
        analyzed = [ANALYZER.terms(str(m.get(key, ""))) if m.get(key) else [] for m in metadata]
        terms[key] = [Counter(t) for t in analyzed]
        lengths[key] = np.array([len(t) for t in analyzed], dtype=np.float64)
    return Snapshot(keys, metadata, unit, terms, lengths)


# ----------------------------------------------------------------------------- the fake


class FakeS3Vectors:
    """A boto3 `s3vectors` client: moto's, with what moto lacks added (module docstring)."""

    def __init__(self, client: Any, *, statistics: str = "index", statistics_ignore: Iterable[str] = ("chunk_id",),
                 page_size: int = MAX_TOP_K, default_mode: str = "ENHANCED") -> None:
        if statistics not in STATISTICS:
            raise ValueError(f"statistics must be one of {STATISTICS}")
        self._client = client
        self.meta = client.meta
        self._model = client.meta.service_model
        self.statistics = statistics
        self.statistics_ignore = set(statistics_ignore)
        self.page_size = page_size
        self.default_mode = default_mode
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._configs: dict[tuple[str, str], IndexConfig] = {}
        self._bucket_modes: dict[str, str] = {}
        self._generation: dict[tuple[str, str], int] = {}
        self._snapshots: dict[tuple[str, str], tuple[int, Snapshot]] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------- plumbing

    def _validated(self, method: str, params: dict[str, Any]) -> str:
        operation = self._client.meta.method_to_api_mapping[method]
        validate_parameters(params, self._model.operation_model(operation).input_shape)
        self.calls.append((operation, params))
        return operation

    def __getattr__(self, method: str) -> Callable[..., Any]:
        target = getattr(self._client, method)
        if method not in self._client.meta.method_to_api_mapping:
            return target

        def call(**params: Any) -> Any:
            self._validated(method, params)
            return target(**params)

        return call

    def _where(self, operation: str, params: Mapping[str, Any]) -> tuple[str, str]:
        bucket, name = params.get("vectorBucketName"), params.get("indexName")
        if params.get("indexArn"):
            bucket, name = str(params["indexArn"]).split(":bucket/", 1)[1].split("/index/", 1)
        if not bucket or not name:
            raise client_error(operation, "ValidationException", "Specify indexArn or vectorBucketName and indexName")
        return str(bucket), str(name)

    def _config(self, operation: str, where: tuple[str, str]) -> IndexConfig:
        index = self._client.get_index(vectorBucketName=where[0], indexName=where[1])["index"]  # NotFound from moto
        config = self._configs.get(where)
        if config is None:
            config = self._configs[where] = IndexConfig(dimension=int(index["dimension"]),
                                                        mode=self._bucket_modes.get(where[0], self.default_mode))
        return config

    def _bump(self, where: tuple[str, str]) -> None:
        with self._lock:
            self._generation[where] = self._generation.get(where, 0) + 1

    def _vectors(self, where: tuple[str, str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        token = None
        while True:
            page = self._client.list_vectors(vectorBucketName=where[0], indexName=where[1], returnData=True,
                                             returnMetadata=True, **({"nextToken": token} if token else {}))
            out += page["vectors"]
            token = page.get("nextToken")
            if not token:
                return out

    def snapshot(self, where: tuple[str, str], config: IndexConfig) -> Snapshot:
        with self._lock:
            generation = self._generation.get(where, 0)
            cached = self._snapshots.get(where)
            if cached is not None and cached[0] == generation:
                return cached[1]
        snap = _snapshot(self._vectors(where), config.text_keys, config.dimension)
        with self._lock:
            self._snapshots[where] = (generation, snap)
        return snap

    # ------------------------------------------------------------------- buckets and indexes

    def put_vector_bucket_default_index_mode(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("put_vector_bucket_default_index_mode", params)
        bucket = params.get("vectorBucketName") or str(params.get("vectorBucketArn", "")).rsplit("/", 1)[-1]
        self._client.get_vector_bucket(vectorBucketName=bucket)  # NotFound from moto
        if params["defaultIndexMode"] == "CLASSIC" and self.default_mode != "CLASSIC":
            raise client_error(operation, "ValidationException",
                               "CLASSIC is available only for vector buckets created before September 30, 2026")
        self._bucket_modes[bucket] = params["defaultIndexMode"]
        return {}

    def create_index(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("create_index", params)
        where = (str(params.get("vectorBucketName")), str(params["indexName"]))
        existing = {i["indexName"] for i in self._client.list_indexes(vectorBucketName=where[0])["indexes"]}
        if where[1] in existing:  # moto would replace the index, and lose its vectors
            raise client_error(operation, "ConflictException", "An index with the specified name already exists", 409)
        configuration = params.get("metadataConfiguration") or {}
        text = configuration.get("textSearchConfigurations", [])
        if len({t["metadataKey"] for t in text}) != len(text):
            raise client_error(operation, "ValidationException", "Duplicate textSearchConfigurations metadataKey")
        out = self._client.create_index(**params)
        self._configs[where] = IndexConfig(
            dimension=int(params["dimension"]), non_filterable=set(configuration.get("nonFilterableMetadataKeys", [])),
            text_keys={t["metadataKey"]: t.get("language") for t in text},
            mode=self._bucket_modes.get(where[0], self.default_mode))
        self._bump(where)
        return dict(out)

    def delete_index(self, **params: Any) -> dict[str, Any]:
        self._validated("delete_index", params)
        where = self._where("DeleteIndex", params)
        out = self._client.delete_index(**params)
        self._configs.pop(where, None)
        self._bump(where)
        return dict(out)

    def get_index(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("get_index", params)
        where = self._where(operation, params)
        out = dict(self._client.get_index(**params))
        config = self._config(operation, where)
        out["index"] = {**out["index"], "indexMode": config.mode, "metadataConfiguration": {
            "nonFilterableMetadataKeys": sorted(config.non_filterable),
            "textSearchConfigurations": [{"metadataKey": k, **({"language": lang} if lang else {}), "status": "ACTIVE"}
                                         for k, lang in config.text_keys.items()]}}
        return out

    def update_index_mode(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("update_index_mode", params)
        config = self._config(operation, self._where(operation, params))
        if params["indexMode"] == "CLASSIC" and self.default_mode != "CLASSIC":
            raise client_error(operation, "ValidationException",
                               "CLASSIC is available only for indexes of vector buckets created before September 30, 2026")
        config.mode = params["indexMode"]
        return {}

    def update_metadata_configuration(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("update_metadata_configuration", params)
        where = self._where(operation, params)
        config = self._config(operation, where)
        if ("add" in params) == ("delete" in params):
            raise client_error(operation, "ValidationException", "Specify either add or delete, but not both")
        if config.mode != "ENHANCED":
            raise client_error(operation, "ValidationException", "The vector index must be in ENHANCED mode")
        for entry in params.get("add", {}).get("textSearchConfigurations", []):
            config.text_keys[entry["metadataKey"]] = entry.get("language")
        for entry in params.get("delete", {}).get("textSearchConfigurations", []):
            config.text_keys.pop(entry["metadataKey"], None)
        self._bump(where)
        index = self._client.get_index(vectorBucketName=where[0], indexName=where[1])["index"]
        return {"indexArn": index["indexArn"]}

    def list_indexes(self, **params: Any) -> dict[str, Any]:
        """moto lists every index; the service applies `prefix` and pages by `maxResults` (500)."""
        self._validated("list_indexes", params)
        bucket_params = {k: v for k, v in params.items() if k in ("vectorBucketName", "vectorBucketArn")}
        indexes = sorted(self._client.list_indexes(**bucket_params)["indexes"], key=lambda i: i["indexName"])
        indexes = [i for i in indexes if i["indexName"].startswith(params.get("prefix", ""))]
        start = int(params.get("nextToken", "0") or 0)
        size = int(params.get("maxResults", 500))
        page = indexes[start : start + size]
        out: dict[str, Any] = {"indexes": page}
        if start + size < len(indexes):
            out["nextToken"] = str(start + size)
        return out

    # ------------------------------------------------------------------- vectors

    def put_vectors(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("put_vectors", params)
        where = self._where(operation, params)
        config = self._config(operation, where)
        for vector in params["vectors"]:
            self._check_metadata(operation, vector, config)
        out = self._client.put_vectors(**params)
        self._bump(where)
        return dict(out)

    @staticmethod
    def _check_metadata(operation: str, vector: Mapping[str, Any], config: IndexConfig) -> None:
        metadata = vector.get("metadata") or {}
        if len(metadata) > MAX_METADATA_KEYS:
            raise client_error(operation, "ValidationException", f"Vector {vector['key']}: more than 50 metadata keys")
        total = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode())
        filterable = len(json.dumps({k: v for k, v in metadata.items() if k not in config.non_filterable},
                                    ensure_ascii=False, separators=(",", ":")).encode())
        if filterable > MAX_FILTERABLE_BYTES or total > MAX_METADATA_BYTES:
            raise client_error(operation, "ValidationException",
                               f"Vector {vector['key']}: metadata over the limits ({filterable} filterable, {total} in all)")

    def delete_vectors(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("delete_vectors", params)
        where = self._where(operation, params)
        out = self._client.delete_vectors(**params)
        self._bump(where)
        return dict(out)

    # ------------------------------------------------------------------- QueryVectors

    def query_vectors(self, **params: Any) -> dict[str, Any]:
        operation = self._validated("query_vectors", params)
        where = self._where(operation, params)
        config = self._config(operation, where)
        self._check_query(operation, params, config)
        snap = self.snapshot(where, config)
        allowed = [i for i, m in enumerate(snap.metadata) if matches(params.get("filter"), m)]
        top = int(params["topK"])
        vector_rank, distances = self._vector_ranking(params, snap, allowed, top)
        text_ranks, bm25 = self._text_rankings(where, params, config, snap, allowed, top)
        hybrid = vector_rank is not None and bool(text_ranks)
        ranked, fused = self._rank(vector_rank, text_ranks, snap)
        if hybrid:  # a hybrid result has a distance when the vector search returned it
            distances = {r: distances[r] for r in vector_rank or []}
        results = [self._result(params, snap, i, distances, bm25, fused, hybrid=hybrid) for i in ranked[:top]]
        out: dict[str, Any] = {"distanceMetric": "cosine", "vectors": results}
        out = self._page(params, out)
        validate_parameters(out, self._model.operation_model(operation).output_shape)
        return out

    def _check_query(self, operation: str, params: Mapping[str, Any], config: IndexConfig) -> None:
        if int(params["topK"]) > MAX_TOP_K:
            raise client_error(operation, "ValidationException", f"topK must be at most {MAX_TOP_K}")
        texts = params.get("queryTexts") or []
        if not texts and "queryVector" not in params:
            raise client_error(operation, "ValidationException", "Specify queryVector, queryTexts or both")
        if "queryVector" in params and len(params["queryVector"]["float32"]) != config.dimension:
            raise client_error(operation, "ValidationException",
                               f"queryVector has {len(params['queryVector']['float32'])} dimensions; the index has {config.dimension}")
        if params.get("queryMode") == "CLASSIC" and config.mode == "ENHANCED":
            raise client_error(operation, "ValidationException", "CLASSIC cannot be used with an ENHANCED index")
        if texts:
            if config.mode != "ENHANCED":
                raise client_error(operation, "ValidationException", "Full-text and hybrid search need an ENHANCED index")
            keys = [t["metadataKey"] for t in texts]
            if len(set(keys)) != len(keys):
                raise client_error(operation, "ValidationException", "Each queryTexts entry must target a distinct key")
            unknown = [k for k in keys if k not in config.text_keys]
            if unknown:
                raise client_error(operation, "ValidationException", f"Metadata key '{unknown[0]}' is not full-text searchable")
        if "filter" in params:
            _validate_filter(operation, params["filter"], config.non_filterable)

    @staticmethod
    def _vector_ranking(params: Mapping[str, Any], snap: Snapshot, allowed: list[int],
                        top: int) -> tuple[list[int] | None, dict[int, float]]:
        if "queryVector" not in params:
            return None, {}
        query = np.asarray(params["queryVector"]["float32"], dtype=np.float32)
        norm = float(np.linalg.norm(query))
        query = query / norm if norm else query
        rows = np.asarray(allowed, dtype=np.int64)
        cos = snap.unit[rows] @ query if len(rows) else np.empty(0, dtype=np.float32)
        distance = {int(r): float(1.0 - c) for r, c in zip(rows, cos, strict=True)}
        ranked = sorted(distance, key=lambda r: (distance[r], snap.keys[r]))
        return ranked[:top], distance

    def _statistics_rows(self, where: tuple[str, str], params: Mapping[str, Any], snap: Snapshot,
                         allowed: list[int]) -> list[tuple[Snapshot, list[int]]]:
        if self.statistics == "index":
            return [(snap, list(range(len(snap.keys))))]
        if self.statistics == "scope":
            flt = without_keys(params.get("filter"), self.statistics_ignore)
            return [(snap, [i for i, m in enumerate(snap.metadata) if matches(flt, m)])]
        out = []
        for index in self._client.list_indexes(vectorBucketName=where[0])["indexes"]:
            other = (where[0], index["indexName"])
            config = self._configs.get(other)
            if config is not None:
                shot = snap if other == where else self.snapshot(other, config)
                out.append((shot, list(range(len(shot.keys)))))
        return out

    def _text_rankings(self, where: tuple[str, str], params: Mapping[str, Any], config: IndexConfig, snap: Snapshot,
                       allowed: list[int], top: int) -> tuple[list[list[int]], dict[int, dict[str, float]]]:
        texts = params.get("queryTexts") or []
        rankings: list[list[int]] = []
        bm25: dict[int, dict[str, float]] = {}
        population = self._statistics_rows(where, params, snap, allowed)
        for entry in texts:
            key = entry["metadataKey"]
            terms = list(dict.fromkeys(ANALYZER.terms(entry["text"])))
            scores = _bm25(terms, key, snap, allowed, population)
            ranked = sorted(scores, key=lambda r: (-scores[r], snap.keys[r]))[:top]
            rankings.append(ranked)
            for r in ranked:
                bm25.setdefault(r, {})[key] = scores[r]
        return rankings, bm25

    @staticmethod
    def _rank(vector_rank: list[int] | None, text_ranks: list[list[int]],
              snap: Snapshot) -> tuple[list[int], dict[int, float]]:
        rankings = ([vector_rank] if vector_rank is not None else []) + text_ranks
        if len(rankings) == 1:
            return rankings[0], {}
        fused: dict[int, float] = {}
        for ranking in rankings:
            for position, row in enumerate(ranking, start=1):
                fused[row] = fused.get(row, 0.0) + 1.0 / (RRF_K + position)
        return sorted(fused, key=lambda r: (-fused[r], snap.keys[r])), fused

    @staticmethod
    def _result(params: Mapping[str, Any], snap: Snapshot, row: int, distances: dict[int, float],
                bm25: dict[int, dict[str, float]], fused: dict[int, float], *, hybrid: bool) -> dict[str, Any]:
        result: dict[str, Any] = {"key": snap.keys[row]}
        text = bool(params.get("queryTexts"))
        if params.get("returnDistance") and not text:
            result["distance"] = distances[row]
        if params.get("returnMetadata"):
            result["metadata"] = snap.metadata[row]
        if params.get("returnScores") and text:
            scores: dict[str, Any] = {"bm25Scores": [{"metadataKey": k, "score": s} for k, s in bm25.get(row, {}).items()]}
            if hybrid:
                scores["fused"] = fused[row]
                if row in distances:
                    scores["vectorDistance"] = distances[row]
            result["scores"] = scores
        return result

    def _page(self, params: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        """Pages of `page_size`; the token names the request it continues (the same query, topK and
        filter must come with it) and where the next page starts."""
        request = {k: v for k, v in params.items() if k != "nextToken"}
        digest = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()[:16]
        start = 0
        if params.get("nextToken"):
            token = json.loads(base64.urlsafe_b64decode(params["nextToken"].encode()))
            if token["request"] != digest:
                raise client_error("QueryVectors", "ValidationException", "nextToken does not belong to this request")
            start = int(token["start"])
        vectors = out["vectors"]
        out["vectors"] = vectors[start : start + self.page_size]
        if start + self.page_size < len(vectors):
            out["nextToken"] = base64.urlsafe_b64encode(json.dumps(
                {"request": digest, "start": start + self.page_size}).encode()).decode()
        return out


def _statistics(terms: list[int], key: str,
                population: list[tuple[Snapshot, list[int]]]) -> tuple[int, float, Counter[int]]:
    """N (rows holding the key), avgdl and each term's n, over `population`."""
    docs, total, df = 0, 0.0, Counter[int]()
    for shot, rows in population:
        if key not in shot.terms:
            continue
        lengths, counts = shot.lengths[key], shot.terms[key]
        for r in rows:
            if lengths[r] > 0:
                docs += 1
                total += lengths[r]
                df.update(t for t in terms if t in counts[r])
    return docs, (total / docs if docs else 0.0), df


def _bm25(terms: list[int], key: str, snap: Snapshot, allowed: list[int],
          population: list[tuple[Snapshot, list[int]]]) -> dict[int, float]:
    """Lucene's BM25 of each allowed row that holds a query term in `key`, with N, n and avgdl over
    `population` (the rows holding the key)."""
    if not terms or key not in snap.terms:
        return {}
    docs, avgdl, df = _statistics(terms, key, population)
    if not docs:
        return {}
    idf = {t: math.log(1.0 + (docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    scores: dict[int, float] = {}
    for r in allowed:
        counts, norm = snap.terms[key][r], K1 * (1 - B + B * snap.lengths[key][r] / avgdl)
        score = math.fsum(idf[t] * tf * (K1 + 1) / (tf + norm) for t in terms if (tf := counts.get(t, 0)))
        if score > 0:
            scores[r] = score
    return scores
