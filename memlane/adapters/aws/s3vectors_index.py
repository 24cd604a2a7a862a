"""SearchIndex on Amazon S3 Vectors: k-NN and BM25 (full-text search in ENHANCED indexes) over chunks,
one vector index per organization in one vector bucket (why: memlane.adapters.aws.s3vectors_layout).

Decisions, each for a reason:

* **Each leg is its own QueryVectors**, not one hybrid request: a hybrid request returns the top K of
  the service's reciprocal rank fusion, which is neither leg's top k, and SearchIndex.search promises
  each leg's own top k (a vector-only request with `queryVector`, a full-text-only request with
  `queryTexts` for the four searchable keys). Where the service still fuses, it is only in choosing
  the text leg's candidates across keys (its ranking of a multi-key full-text request); every score
  memlane uses is read from `returnScores`/`returnDistance` and combined here: the cosine is
  1 − the cosine distance, the BM25 is Σ weight × the service's BM25 of each key (title 2, headings
  1.5, text 1, context 0.5, as OpenSearch's `most_fields`). So memlane's fusion, relevance and floor
  see the same kinds of numbers on every host; what differs is the service's BM25 itself (its
  statistics: the organization's index; its English analyzer: not Lucene's nor FTS5's).
* **Each leg scores the other leg's candidates** (the port's contract), as the OpenSearch adapter
  does: a vector candidate the text leg did not return gets its BM25 from the same full-text request
  narrowed by a `chunk_id` filter (skipped when the text leg returned fewer results than asked: it
  then returned every chunk holding a query word); a text candidate the vector leg did not return gets
  its cosine from GetVectors (its stored vector · the query vector).
* **The two legs are sent at once**, and so are the two fills (threads: each is a round trip to the
  service, as low as ~100 ms warm and under a second cold by AWS's account), so a recall waits for
  two round trips, not four.
* **topK is capped at 100** (the service's limit per request): each leg returns its best min(k, 100);
  a response split into pages (`nextToken`) is followed. Memory recall asks for max(50, limit × 5),
  so a limit above 20 gets 100 per leg; collections asking for 1,000 per leg get 100 (and the other
  leg's fill): docs/deploy.md says so.
* **Writes**: PutVectors in batches of at most 500 vectors and ~16 MiB (the service takes 20 MiB); the
  key is the chunk id, so a write replaces the chunk. memlane names every chunk
  `chunk_id_for(document, index)`, so a document's vectors are found by key (GetVectors of those keys,
  100 at a time) without a scan: deletes, `set_superseded` (a read and a rewrite of the vectors: the
  service has no partial update) and `holdings` read the index itself that way.
* **Index lifecycle**: an organization's index is created on its first write, with the four text keys
  searchable and non-filterable; the vector bucket's default mode (set to ENHANCED by the stack) makes
  it ENHANCED, and an index found otherwise by a write is switched (UpdateIndexMode). An index without
  the text keys (not memlane's: they cannot be made non-filterable later) is refused. Reads of an
  organization that never wrote find no index: no results.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import s3vectors_layout as lay
from memlane.adapters.aws._boto import error_code, is_transient, lazy_client
from memlane.domain.errors import DependencyUnavailableError, EmbedderMismatchError, MemlaneError
from memlane.domain.models import chunk_id_for
from memlane.ports import Candidate, IndexedChunk, IndexHoldings, LegResults, SearchScope

REINDEX_HINT = "run `memlane reindex --aws` to re-embed every document into indexes for the configured embedder"
DEFAULT_ALIAS = "memlane-chunks"
MAX_PUT_BYTES = 16 * 1024 * 1024  # per PutVectors request (the service's limit is 20 MiB)
_MISSING = frozenset({"NotFoundException", "NoSuchIndex", "ResourceNotFoundException"})


class IndexMissing(Exception):
    """The organization's index does not exist (nothing was ever written for it)."""


class S3VectorsIndex:
    """SearchIndex over a boto3 `s3vectors` client and one vector bucket."""

    backend = "s3vectors"

    def __init__(self, client: Any, bucket: str, dimension: int, *, alias: str = DEFAULT_ALIAS,
                 embedder_id: str | None = None, context_boost: float | None = None,
                 max_top_k: int = lay.MAX_TOP_K) -> None:
        # full-text search (`queryTexts`, `returnScores`) needs a recent botocore: the layer ships the
        # version the tests run (layers/deps/requirements.txt), not the Lambda runtime's
        self.client = lazy_client(client, "s3vectors")
        self.bucket = bucket
        self.dimension = dimension
        self.alias = alias
        self.embedder_id = embedder_id  # claimed by the first write when not configured
        self.context_boost = lay.CONTEXT_BOOST if context_boost is None else context_boost
        self.max_top_k = max(1, min(max_top_k, lay.MAX_TOP_K))
        self._ready: set[str] = set()  # indexes known to exist, ENHANCED, with the text keys
        self._pool: ThreadPoolExecutor | None = None  # the two legs' requests at once

    # ----------------------------------------------------------------- plumbing

    def _call(self, operation: str, **kwargs: Any) -> Any:
        """One request. Throttling and 5xx (after botocore's retries) become DependencyUnavailableError
        (the work is retried later); a missing index IndexMissing; anything else propagates."""
        try:
            return getattr(self.client, operation)(vectorBucketName=self.bucket, **kwargs)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                raise IndexMissing(kwargs.get("indexName", "")) from exc
            if is_transient(exc):
                raise DependencyUnavailableError(f"search index unavailable: {operation} {error_code(exc)}") from exc
            raise

    def index_for(self, org_id: str) -> str:
        return lay.index_name(self.alias, self._embedder(), org_id)

    def _embedder(self) -> str:
        if self.embedder_id is None:
            raise MemlaneError("no embedder has written to this search index yet")
        return self.embedder_id

    def _org_indexes(self, org_id: str | None) -> list[str]:
        """Every index of the organization (of any embedder: a document is deleted from each), or
        every memlane index in the bucket."""
        prefix = lay.org_index_prefix(self.alias, org_id) if org_id is not None else f"{self.alias}-"
        names: list[str] = []
        token: str | None = None
        while True:
            page = self._call("list_indexes", prefix=prefix, **({"nextToken": token} if token else {}))
            names += [i["indexName"] for i in page.get("indexes", []) if i["indexName"].startswith(prefix)]
            token = page.get("nextToken")
            if not token:
                return sorted(set(names))

    # ----------------------------------------------------------------- index lifecycle

    def ensure_index(self, org_id: str) -> str:
        """The organization's index for this embedder, created (ENHANCED, the text keys searchable)
        when missing. Returns its name."""
        name = self.index_for(org_id)
        if name in self._ready:
            return name
        try:
            self._call("create_index", indexName=name, dataType=lay.DATA_TYPE, dimension=self.dimension,
                       distanceMetric=lay.DISTANCE_METRIC, metadataConfiguration=lay.metadata_configuration())
        except ClientError as exc:
            if error_code(exc) != "ConflictException":  # another function created it first
                raise
        self._settle(name, fix=True)
        return name

    def _settle(self, name: str, *, fix: bool = False) -> None:
        """Checks an existing index: its dimension, its text keys and (a writer, `fix`) its mode. The
        text keys cannot be made non-filterable after creation, so an index without them was not
        made by memlane: it is refused, not repaired."""
        index = self._call("get_index", indexName=name)["index"]
        if int(index.get("dimension", self.dimension)) != self.dimension:
            raise EmbedderMismatchError(f"the search index '{name}' holds {index['dimension']} dimensions; "
                                        f"this embedder has {self.dimension}; {REINDEX_HINT}")
        config = index.get("metadataConfiguration", {})
        missing = set(lay.TEXT_KEYS) - {c["metadataKey"] for c in config.get("textSearchConfigurations", [])}
        if missing or not set(lay.TEXT_KEYS) <= set(config.get("nonFilterableMetadataKeys", [])):
            raise MemlaneError(f"the S3 Vectors index '{name}' was not created by memlane (its text keys are not "
                               f"searchable and non-filterable): delete it and run `memlane reindex --aws`")
        if index.get("indexMode", "ENHANCED") != "ENHANCED":
            if not fix:
                raise MemlaneError(f"the S3 Vectors index '{name}' is not ENHANCED: full-text search needs it "
                                   "(the next save switches it; `aws s3vectors update-index-mode` does it now)")
            self._call("update_index_mode", indexName=name, indexMode="ENHANCED")
        self._ready.add(name)

    def _existing(self, org_id: str) -> str | None:
        """The organization's index when it exists (None: nothing was written for it)."""
        if self.embedder_id is None:
            return None
        name = self.index_for(org_id)
        if name not in self._ready:
            try:
                self._settle(name)
            except IndexMissing:
                return None
        return name

    # ----------------------------------------------------------------- writes

    def _check(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None:
        for item in items:
            if len(item.vector) != self.dimension:
                raise EmbedderMismatchError(
                    f"chunk {item.chunk.id} has a {len(item.vector)}-dimension vector; the search index holds "
                    f"{self.dimension} dimensions; {REINDEX_HINT}")
        if self.embedder_id is None:
            self.embedder_id = embedder_id
        if embedder_id != self.embedder_id:
            raise EmbedderMismatchError(f"the search index is built with embedder '{self.embedder_id}' but "
                                        f"received vectors from '{embedder_id}'; {REINDEX_HINT}")

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None:
        if not items:
            return
        self._check(embedder_id, items)
        by_org: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            by_org.setdefault(item.chunk.organization_id, []).append(lay.put_vector(item, lay.normalize(item.vector)))
        for org_id, vectors in by_org.items():
            self._put(self.ensure_index(org_id), vectors)

    def _put(self, name: str, vectors: list[dict[str, Any]]) -> None:
        for batch in _batches(vectors):
            self._call("put_vectors", indexName=name, vectors=batch)

    def delete_document(self, org_id: str, document_id: str) -> None:
        """Removes the document's vectors from every index of the organization (of any embedder)."""
        for name in self._org_indexes(org_id):
            keys = [v["key"] for v in self._document_vectors(name, document_id)]
            for start in range(0, len(keys), lay.MAX_DELETE):
                try:
                    self._call("delete_vectors", indexName=name, keys=keys[start : start + lay.MAX_DELETE])
                except IndexMissing:
                    break

    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None:
        """Marks the document's chunks as an older version (hidden unless versions are asked for), or
        as the latest again: each vector read back and written with the flag changed."""
        name = self._existing(org_id)
        if name is None:
            return
        changed = []
        for vector in self._document_vectors(name, document_id, data=True):
            metadata = dict(vector.get("metadata") or {})
            if metadata.get(lay.ORGANIZATION) != org_id or metadata.get(lay.SUPERSEDED) == superseded:
                continue
            metadata[lay.SUPERSEDED] = superseded
            changed.append({"key": vector["key"], "data": vector["data"], "metadata": metadata})
        self._put(name, changed)

    def _document_vectors(self, name: str, document_id: str, *, data: bool = False) -> Iterator[dict[str, Any]]:
        """The document's vectors in one index, by key: chunk_id_for(document, 0…), 100 keys a request,
        on while the last key of a request was found (a document's chunks are numbered 0…n-1)."""
        start = 0
        while True:
            keys = [chunk_id_for(document_id, i) for i in range(start, start + lay.MAX_GET)]
            try:
                found = self._call("get_vectors", indexName=name, keys=keys, returnData=data,
                                   returnMetadata=data)["vectors"]
            except IndexMissing:
                return
            yield from found
            if keys[-1] not in {v["key"] for v in found}:
                return
            start += lay.MAX_GET

    # ----------------------------------------------------------------- reads

    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int,
        *, complete: bool = True,
    ) -> LegResults:
        """Each leg's own top min(k, 100) under `scope`, then (with `complete`) each leg's candidates
        scored on the other (SearchIndex.search's contract)."""
        if query_vector is not None and len(query_vector) != self.dimension:
            raise EmbedderMismatchError(f"query vector has {len(query_vector)} dimensions; the search index holds "
                                        f"{self.dimension}; {REINDEX_HINT}")
        name = self._existing(scope.organization_id)
        texts = lay.query_texts(query_text, self.context_boost)
        if name is None or (not texts and query_vector is None):
            return LegResults(vector=[], text=[])
        flt = lay.scope_filter(scope)
        top = max(1, min(k, self.max_top_k))
        query = lay.normalize(query_vector) if query_vector is not None else None
        try:
            found, vector = self._together(
                (lambda: self._text_leg(scope, name, flt, texts, top)) if texts else None,
                (lambda: self._vector_leg(scope, name, flt, query, top)) if query is not None else None)
            text = [c for c in found if c.score > 0]
            if complete:
                text, vector = self._fill(scope, name, flt, texts, query, text, vector,
                                          text_complete=len(found) < top)
        except IndexMissing:
            return LegResults(vector=[], text=[])
        return LegResults(vector=_best_first(vector), text=_best_first(text))

    def _query(self, scope: SearchScope, name: str, top: int, **request: Any) -> list[dict[str, Any]]:
        """One QueryVectors (its pages followed), only the organization's results (the filter already
        says so: a second look at what came back)."""
        results: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self._call("query_vectors", indexName=name, topK=top, returnMetadata=True,
                              **request, **({"nextToken": token} if token else {}))
            results += page.get("vectors", [])
            token = page.get("nextToken")
            if not token or len(results) >= top:
                break
        return [r for r in results[:top] if (r.get("metadata") or {}).get(lay.ORGANIZATION) == scope.organization_id]

    def _text_leg(self, scope: SearchScope, name: str, flt: dict[str, Any], texts: list[dict[str, str]],
                  top: int) -> list[Candidate]:
        results = self._query(scope, name, top, queryTexts=texts, filter=flt, returnScores=True)
        return [lay.candidate(r, lay.text_score(r, self.context_boost)) for r in results]

    def _vector_leg(self, scope: SearchScope, name: str, flt: dict[str, Any], query: list[float],
                    top: int) -> list[Candidate]:
        results = self._query(scope, name, top, queryVector={"float32": query}, filter=flt, returnDistance=True)
        return [lay.candidate(r, cosine) for r in results if (cosine := lay.cosine(r)) is not None]

    def _fill(
        self, scope: SearchScope, name: str, flt: dict[str, Any], texts: list[dict[str, str]],
        query: list[float] | None, text: list[Candidate], vector: list[Candidate], *, text_complete: bool,
    ) -> tuple[list[Candidate], list[Candidate]]:
        """Each leg's candidates scored on the other: the text leg's request narrowed to the vector
        candidates it did not return (unless it returned every match already), and the stored vectors
        of the text candidates the vector leg did not return."""
        text_ids = {c.chunk_id for c in text}
        vector_ids = {c.chunk_id for c in vector}
        bm25_of = [] if text_complete or not texts else [c.chunk_id for c in vector if c.chunk_id not in text_ids]
        cosines_of = [c for c in text if c.chunk_id not in vector_ids] if query is not None else []
        filled, stored = self._together(
            (lambda: self._text_leg(scope, name, lay.narrowed(flt, bm25_of), texts, len(bm25_of))) if bm25_of else None,
            (lambda: self._stored_vectors(name, [c.chunk_id for c in cosines_of])) if cosines_of else None)
        if filled:
            text = text + [c for c in filled if c.score > 0 and c.chunk_id in set(bm25_of)]
        if stored and query is not None:
            vector = vector + [replace(c, score=_cosine(stored[c.chunk_id], query))
                               for c in cosines_of if c.chunk_id in stored]
        return text, vector

    def _together(self, first: Callable[[], Any] | None, second: Callable[[], Any] | None) -> tuple[Any, Any]:
        """Two requests at once (each leg, then each fill, is a round trip of its own: ~100 ms warm);
        a missing one gives []. An error of either is raised here."""
        if first is None or second is None:
            return (first() if first else []), (second() if second else [])
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="s3vectors")
        pending = self._pool.submit(second)
        return first(), pending.result()

    def _stored_vectors(self, name: str, keys: Sequence[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), lay.MAX_GET):
            page = self._call("get_vectors", indexName=name, keys=list(keys[start : start + lay.MAX_GET]),
                              returnData=True, returnMetadata=False)
            found.update({v["key"]: v["data"]["float32"] for v in page["vectors"] if v.get("data")})
        return found

    def holdings(self, document_id: str, org_id: str | None = None) -> IndexHoldings:
        """What the indexes hold of the document, read by key: in the organization's indexes when it is
        named (a deletion receipt names it), else in every memlane index of the bucket. The text lives
        in the vector's metadata, so both counts are the vectors found."""
        held = 0
        for name in self._org_indexes(org_id):
            held += sum(1 for _ in self._document_vectors(name, document_id))
        return IndexHoldings(text=held, vector=held)

    def document_ids(self, org_id: str | None = None) -> set[str]:
        """Every document id in the organization's indexes (or every memlane index), by listing them:
        for the doctor's orphan check."""
        ids: set[str] = set()
        for name in self._org_indexes(org_id):
            token: str | None = None
            while True:
                try:
                    page = self._call("list_vectors", indexName=name, maxResults=lay.MAX_LIST, returnMetadata=True,
                                      **({"nextToken": token} if token else {}))
                except IndexMissing:
                    break
                for vector in page.get("vectors", []):
                    metadata = vector.get("metadata") or {}
                    if org_id is None or metadata.get(lay.ORGANIZATION) == org_id:
                        ids.add(str(metadata.get(lay.DOCUMENT)))
                token = page.get("nextToken")
                if not token:
                    break
        return ids


def _batches(vectors: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """At most 500 vectors and ~16 MiB of JSON per PutVectors."""
    batch: list[dict[str, Any]] = []
    size = 0
    for vector in vectors:
        entry = len(json.dumps(vector, separators=(",", ":")))
        if batch and (len(batch) == lay.MAX_PUT or size + entry > MAX_PUT_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(vector)
        size += entry
    if batch:
        yield batch


def _cosine(stored: Sequence[float], query: Sequence[float]) -> float:
    """The cosine of a stored vector (unit length when written, float32 since) and the unit query."""
    norm = math.sqrt(math.fsum(v * v for v in stored))
    return sum(map(operator.mul, stored, query)) / norm if norm else 0.0


def _best_first(candidates: list[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (-c.score, c.chunk_id))
