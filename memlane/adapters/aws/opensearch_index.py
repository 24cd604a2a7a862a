"""SearchIndex on OpenSearch: k-NN (faiss HNSW) + BM25 over chunks, in one index behind an alias.

Decisions, each for a reason:

* **Inner product on unit vectors, not cosinesimil.** faiss supports `cosinesimil` only from
  OpenSearch 2.19; `innerproduct` with faiss works on every 2.x domain and on Serverless. On
  L2-normalised vectors the inner product *is* the cosine. memlane's embedders already normalise;
  this adapter normalises again (idempotent) on write and on query so a stray embedder cannot
  break that. OpenSearch turns the faiss inner product into a non-negative score
  (ip ≥ 0 → 1 + ip, ip < 0 → 1 / (1 − ip)); `cosine_from_knn_score` undoes it so the vector leg
  returns the raw cosine that memlane's fusion expects.
* **`most_fields` for the text leg.** The chunk body, the document title and the section path are
  separate fields; `most_fields` sums their scores, so a chunk whose section *and* body match beats
  one that matches in the body alone, which is how the local FTS5 leg behaves (it indexes
  "title › headings" and the body as one text). `best_fields` would keep only the best field.
* **The tenant filter is built here**, from `scope.organization_id`, and placed in both legs: in
  the bool filter of the BM25 query and *inside* the knn clause (faiss efficient filtering), so
  the k nearest neighbours are chosen among the tenant's chunks, not filtered after the fact.
* **Each leg scores the other leg's candidates** (SearchIndex.search's contract): one more _msearch,
  only when a leg returned a chunk the other did not, with the text leg's BM25 query narrowed to the
  vector candidates and a fetch of the text candidates' stored vectors, dotted with the query here
  (`fill`; why not a k-NN body: opensearch_queries.fill_bodies).
* **Writes are upserts** (`_id` = the organization and the deterministic chunk id) and are not
  refreshed: a chunk becomes searchable after the index refresh interval (~1 s). Deletes refresh,
  so a deleted document disappears at once. The organization is part of `_id` so that no write can
  land on another organization's chunk; an index created before (its `_meta` has no `chunk_ids`)
  keeps `_id` = chunk id, and a write there is refused when another organization holds one of its
  ids (IdTakenError); a new index behind the alias is named the new way. Every request names the
  alias or its index in its path (`<alias>/_bulk`, never `/_bulk`): the functions' IAM grants and the
  domain's access policy name those paths only.
* **Older versions stay indexed, flagged.** `set_superseded` marks a document's chunks
  `superseded` (a partial update); both legs leave them out unless the scope asks for versions,
  as the local index does. Tags are indexed lower-cased: the tag filter ignores case.
* **One index behind an alias** (`{alias}-v{n}`): a new embedder is rolled out by filling
  `-v{n+1}` (`memlane reindex`) and swapping the alias atomically. The embedder that built an index
  is recorded in its mapping (`_meta.embedder`); vectors from another embedder are refused.

Serverless (vector search collections) differs in two ways handled here with `serverless=True`:
custom document ids are refused (chunks are indexed without `_id`, and an upsert first removes
the organization's earlier copies by `chunk_id`), and deletes go through search + bulk delete instead of
delete_by_query. Writes there become searchable later (Serverless refreshes on its own schedule).

Three modules: opensearch_mapping.py (the index's settings and mapping, a chunk's indexed
document, the vector space), opensearch_queries.py (the scope filter and each leg's body) and this
one (the adapter: index lifecycle and alias, writes, reads, the client factory).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlparse

from opensearchpy import exceptions as os_errors

from memlane.adapters.aws.opensearch_mapping import (
    CHUNK_IDS,
    CONTEXT_BOOST,
    CONTEXT_FIELD,
    PER_ORGANIZATION,
    TEXT_ANALYZER,
    VECTOR_FIELD,
    chunk_doc_id,
    chunk_source,
    cosine_from_knn_score,
    index_body,
    knn_score_from_cosine,
    normalize,
)
from memlane.adapters.aws.opensearch_queries import (
    MAX_K,
    REINDEX_HINT,
    fill_bodies,
    parse_time,
    scope_filter,
    search_bodies,
    text_fields,
)
from memlane.domain.errors import (
    DependencyUnavailableError,
    EmbedderMismatchError,
    IdTakenError,
    MemlaneError,
)
from memlane.domain.models import Chunk
from memlane.ports import Candidate, IndexedChunk, IndexHoldings, LegResults, SearchScope

# The index's shape (opensearch_mapping) and the recall's bodies (opensearch_queries) have modules
# of their own; these names stay importable from here, where the adapter has always been.
__all__ = ["OpenSearchIndex", "cosine_from_knn_score", "index_body", "knn_score_from_cosine",
           "make_opensearch_client", "normalize"]

BULK_BATCH = 200  # chunks per bulk request (1024-dim vectors are ~20 KB of JSON each)
AGG_PAGE = 1_000


class OpenSearchIndex:
    """SearchIndex over an opensearch-py client (see make_opensearch_client)."""

    def __init__(
        self,
        client: Any,
        alias: str,
        embedder_dimension: int,
        *,
        embedder_id: str | None = None,
        serverless: bool = False,
        context_boost: float = CONTEXT_BOOST,
    ) -> None:
        self.client = client
        self.context_boost = context_boost
        self.alias = alias
        self.dimension = embedder_dimension
        self.embedder_id = embedder_id  # written into a new index's _meta when known
        self.serverless = serverless
        self._recorded_embedder: str | None = None
        self._per_organization = True  # chunk _ids name the organization (read with the embedder)
        self._superseded_mapped = False
        self._context_mapped = False
        self._kind_mapped = False

    @property
    def backend(self) -> str:
        return "opensearch-serverless" if self.serverless else "opensearch"

    # ----------------------------------------------------------------- plumbing

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Transport failures become DependencyUnavailableError (the work is retried later);
        client errors (4xx) stay opensearch-py's exceptions."""
        try:
            return fn(*args, **kwargs)
        except (os_errors.ConnectionError, os_errors.ConnectionTimeout) as exc:
            raise DependencyUnavailableError(f"search index unreachable: {exc}") from exc
        except os_errors.TransportError as exc:
            status = exc.status_code if isinstance(exc.status_code, int) else 0
            if status == 429 or status >= 500:
                raise DependencyUnavailableError(f"search index unavailable ({status})") from exc
            raise

    def index_name(self, version: int) -> str:
        return f"{self.alias}-v{version}"

    # ----------------------------------------------------------------- index lifecycle

    def ensure_index(self, version: int = 1) -> str:
        """Creates `{alias}-v{version}` if absent, and points the alias at it if the alias does
        not exist yet. Returns the index name."""
        name = self.index_name(version)
        if not self._call(self.client.indices.exists, index=name):
            body = index_body(self.dimension, self.embedder_id, serverless=self.serverless)
            try:
                self._call(self.client.indices.create, index=name, body=body)
            except os_errors.RequestError as exc:
                if exc.error != "resource_already_exists_exception":  # another worker won the race
                    raise
        if not self._call(self.client.indices.exists_alias, name=self.alias):
            self._call(self.client.indices.put_alias, index=name, name=self.alias)
        return name

    def swap_alias(self, new_version: int) -> list[str]:
        """Points the alias at `{alias}-v{new_version}` in one atomic update_aliases call.
        Returns the indices it pointed at before (to delete once the new one is verified)."""
        target = self.index_name(new_version)
        if not self._call(self.client.indices.exists, index=target):
            raise MemlaneError(f"index {target} does not exist; create and fill it before swapping")
        previous = self._aliased_indices()
        actions: list[dict[str, Any]] = [
            {"remove": {"index": index, "alias": self.alias}} for index in previous if index != target
        ]
        actions.append({"add": {"index": target, "alias": self.alias}})
        self._call(self.client.indices.update_aliases, body={"actions": actions})
        self._recorded_embedder = None  # the embedder and the chunk ids' naming are read again
        return [index for index in previous if index != target]

    def _aliased_indices(self) -> list[str]:
        try:
            return sorted(self._call(self.client.indices.get_alias, name=self.alias))
        except os_errors.NotFoundError:
            return []

    def recorded_embedder(self) -> str | None:
        """The embedder id in the aliased index's _meta (None for an index no vector reached)."""
        return self._recorded_meta().get("embedder")

    def _recorded_meta(self) -> dict[str, Any]:
        mapping = self._call(self.client.indices.get_mapping, index=self.alias)
        for definition in mapping.values():
            meta: dict[str, Any] = definition.get("mappings", {}).get("_meta", {})
            return meta
        return {}

    def _check_embedder(self, embedder_id: str) -> None:
        if self._recorded_embedder == embedder_id:
            return
        try:
            meta = self._recorded_meta()
        except os_errors.NotFoundError:
            if self.embedder_id is None:
                self.embedder_id = embedder_id
            self.ensure_index()
            meta = self._recorded_meta()
        recorded = meta.get("embedder")
        if recorded is None:
            # An index created before any vector arrived (so holding no chunk): the first embedder
            # claims it, and its chunks are named per organization from the first.
            meta = {"memlane_schema": 1, "dimension": self.dimension, "embedder": embedder_id,
                    CHUNK_IDS: PER_ORGANIZATION}
            self._call(self.client.indices.put_mapping, index=self.alias, body={"_meta": meta})
            recorded = embedder_id
        if recorded != embedder_id:
            raise EmbedderMismatchError(
                f"the search index '{self.alias}' was built with embedder '{recorded}' but received "
                f"vectors from '{embedder_id}'; {REINDEX_HINT}"
            )
        self._per_organization = meta.get(CHUNK_IDS) == PER_ORGANIZATION
        self._recorded_embedder = embedder_id

    # ----------------------------------------------------------------- writes

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None:
        if not items:
            return
        for item in items:
            if len(item.vector) != self.dimension:
                raise EmbedderMismatchError(
                    f"chunk {item.chunk.id} has a {len(item.vector)}-dimension vector; the search index "
                    f"'{self.alias}' holds {self.dimension} dimensions; {REINDEX_HINT}"
                )
        self._check_embedder(embedder_id)
        if any(item.chunk.superseded for item in items):
            self._map_superseded()
        if any(item.context for item in items):
            self._map_context()
        self._map_kind()
        for start in range(0, len(items), BULK_BATCH):
            batch = items[start : start + BULK_BATCH]
            if self.serverless:
                # No custom _id on Serverless vector collections: remove the organization's earlier
                # copies first (never another organization's chunk of the same id).
                self._delete_matching(_own_chunks(batch))
            elif not self._per_organization:
                self._refuse_foreign(batch)
            body: list[dict[str, Any]] = []
            for item in batch:
                body.append({"index": self._action(item.chunk)})
                body.append(chunk_source(item))
            self._check_bulk(self._call(self.client.bulk, body=body, index=self.alias))

    def _action(self, chunk: Chunk) -> dict[str, Any]:
        """A chunk's bulk action: its `_id` names the organization (none on Serverless, the chunk
        id alone in an index from before)."""
        if self.serverless:
            return {"_index": self.alias}
        doc_id = chunk_doc_id(chunk.organization_id, chunk.id) if self._per_organization else chunk.id
        return {"_index": self.alias, "_id": doc_id}

    def _refuse_foreign(self, batch: Sequence[IndexedChunk]) -> None:
        """An index whose `_id` is the chunk id alone (created before chunk ids were per
        organization): IdTakenError when another organization holds one of the batch's ids, before
        anything is written."""
        found = self._call(self.client.mget, index=self.alias, body={"ids": [i.chunk.id for i in batch]},
                           _source_includes=["organization_id"])
        for item, doc in zip(batch, found.get("docs", []), strict=False):
            holder = (doc.get("_source") or {}).get("organization_id") if doc.get("found") else None
            if holder is not None and holder != item.chunk.organization_id:
                raise IdTakenError(f"chunk id {item.chunk.id} is not available")

    @staticmethod
    def _check_bulk(response: dict[str, Any]) -> None:
        if not response.get("errors"):
            return
        failed = [
            result
            for entry in response.get("items", [])
            for result in entry.values()
            if int(result.get("status", 200)) >= 300
        ]
        if not failed:
            return
        statuses = {int(f.get("status", 0)) for f in failed}
        first = failed[0].get("error", {})
        reason = first.get("reason", first) if isinstance(first, dict) else first
        message = f"{len(failed)} chunk writes failed in the search index: {reason}"
        if any(s == 429 or s >= 500 for s in statuses):
            raise DependencyUnavailableError(message)
        raise MemlaneError(message)

    def delete_document(self, org_id: str, document_id: str) -> None:
        self._delete_matching(
            {
                "bool": {
                    "filter": [{"term": {"organization_id": org_id}}, {"term": {"document_id": document_id}}]
                }
            }
        )

    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None:
        """Marks the document's chunks as an older version (hidden unless versions are asked
        for), or as the latest again: a partial update of each chunk, found by tenant and document."""
        query = {
            "bool": {
                "filter": [{"term": {"organization_id": org_id}}, {"term": {"document_id": document_id}}]
            }
        }
        try:
            ids = list(self._matching_ids(query))
        except os_errors.NotFoundError:
            return  # no index yet: nothing to mark
        if not ids:
            return
        self._map_superseded()
        refresh = {} if self.serverless else {"refresh": True}  # visible at once, like a delete
        for start in range(0, len(ids), BULK_BATCH):
            body: list[dict[str, Any]] = []
            for _id in ids[start : start + BULK_BATCH]:
                body.append({"update": {"_index": self.alias, "_id": _id}})
                body.append({"doc": {"superseded": superseded}})
            self._check_bulk(self._call(self.client.bulk, body=body, index=self.alias, **refresh))

    def _map_superseded(self) -> None:
        """Indices created before versions were indexed have no `superseded` field, and the mapping
        is strict: the field is added (an idempotent mapping update) before it is first written."""
        if self._superseded_mapped:
            return
        self._call(
            self.client.indices.put_mapping,
            index=self.alias,
            body={"properties": {"superseded": {"type": "boolean"}}},
        )
        self._superseded_mapped = True

    def _map_context(self) -> None:
        """The same for the `context` field of indices created before contextual indexing."""
        if self._context_mapped:
            return
        self._call(
            self.client.indices.put_mapping,
            index=self.alias,
            body={"properties": {CONTEXT_FIELD: {"type": "text", "analyzer": TEXT_ANALYZER}}},
        )
        self._context_mapped = True

    def _map_kind(self) -> None:
        """The same for the `kind` field of indices created before chunks carried their kind."""
        if self._kind_mapped:
            return
        self._call(
            self.client.indices.put_mapping, index=self.alias, body={"properties": {"kind": {"type": "keyword"}}}
        )
        self._kind_mapped = True

    def text_fields(self) -> list[str]:
        return text_fields(self.context_boost)

    def _delete_matching(self, query: dict[str, Any]) -> None:
        try:
            if not self.serverless:
                self._call(
                    self.client.delete_by_query,
                    index=self.alias,
                    body={"query": query},
                    conflicts="proceed",
                    refresh=True,
                )
                return
            ids = list(self._matching_ids(query))
            for start in range(0, len(ids), BULK_BATCH):
                body = [
                    {"delete": {"_index": self.alias, "_id": _id}} for _id in ids[start : start + BULK_BATCH]
                ]
                self._check_bulk(self._call(self.client.bulk, body=body, index=self.alias))
        except os_errors.NotFoundError:
            return  # no index yet: nothing to delete

    def _matching_ids(self, query: dict[str, Any]) -> Iterator[str]:
        search_after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": AGG_PAGE,
                "_source": False,
                "query": query,
                "sort": [{"chunk_id": "asc"}],
            }
            if search_after is not None:
                body["search_after"] = search_after
            hits = self._call(self.client.search, index=self.alias, body=body)["hits"]["hits"]
            for hit in hits:
                yield hit["_id"]
            if len(hits) < AGG_PAGE:
                return
            search_after = hits[-1]["sort"]

    # ----------------------------------------------------------------- reads

    @staticmethod
    def scope_filter(scope: SearchScope) -> list[dict[str, Any]]:
        """The filter both legs apply (memlane.adapters.aws.opensearch_queries)."""
        return scope_filter(scope)

    def search_bodies(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """The legs to run and the _msearch body (header, query pairs)."""
        return search_bodies(self.alias, self.text_fields(), self.dimension, scope, query_text, query_vector, k)

    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int,
        *, complete: bool = True,
    ) -> LegResults:
        """Both legs in one _msearch, then (only when one leg returned a chunk the other did not, and
        `complete`) one more _msearch that scores those chunks on the other leg (`fill`):
        SearchIndex.search's contract."""
        legs, body = self.search_bodies(scope, query_text, query_vector, k)
        if not legs:
            return LegResults(vector=[], text=[])
        found: dict[str, list[Candidate]] = {"text": [], "vector": []}
        text_complete = False
        response = self._call(self.client.msearch, body=body, index=self.alias)
        for leg, result in zip(legs, response.get("responses", []), strict=False):
            hits = self._leg_hits(leg, result, "leg")
            if hits is None:
                continue  # nothing indexed yet
            if leg == "text":
                # fewer hits than asked for: the leg returned every in-scope chunk holding a query
                # term, so a vector candidate it did not return has a BM25 of 0 (nothing to fill)
                text_complete = len(hits) < max(1, min(MAX_K, k))
            found[leg] = [self._candidate(hit, leg) for hit in self._own(scope, hits)]
        if not complete:
            return LegResults(vector=found["vector"], text=found["text"])
        return self.fill(
            scope, query_text, query_vector, LegResults(vector=found["vector"], text=found["text"]),
            text_complete=text_complete,
        )

    def fill(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, legs: LegResults,
        *, text_complete: bool = False,
    ) -> LegResults:
        """Scores each leg's candidates on the other leg, in one _msearch of up to two bodies
        (opensearch_queries.fill_bodies), and returns both lists with them merged in, best first
        (score, then chunk id):

        * a vector candidate the text leg did not return gets the BM25 the text leg gives it (same
          query, fields, analyzer, scope filter; only the ids are added to the filter) and joins
          `text` when that is > 0; skipped when `text_complete` (the text leg returned fewer hits than
          its size, so every chunk holding a query term is already in `text`);
        * a text candidate the vector leg did not return gets its cosine: its stored vector (unit
          length: opensearch_mapping.chunk_source normalises on write) dotted with the normalised
          query vector in Python, the inner product the faiss `innerproduct` space computes.

        No request at all when nothing is missing. Chunks outside the scope (another organization,
        project, content type...) are never filled in: the scope filter is in both bodies, and the
        organization is checked again on every hit."""
        text_ids = {c.chunk_id for c in legs.text}
        vector_ids = {c.chunk_id for c in legs.vector}
        bm25_of = [] if text_complete or not query_text.strip() else [
            c.chunk_id for c in legs.vector if c.chunk_id not in text_ids]
        vectors_of = [] if query_vector is None else [c.chunk_id for c in legs.text if c.chunk_id not in vector_ids]
        names, body = fill_bodies(
            self.alias, self.text_fields(), scope, query_text, query_vector, bm25_of, vectors_of
        )
        filled: dict[str, list[Candidate]] = {"text": list(legs.text), "vector": list(legs.vector)}
        if names:
            asked = {"text": set(bm25_of), "vector": set(vectors_of)}
            query = normalize(query_vector) if query_vector is not None else []
            response = self._call(self.client.msearch, body=body, index=self.alias)
            for leg, result in zip(names, response.get("responses", []), strict=False):
                hits = self._leg_hits(leg, result, "fill")
                if hits is None:
                    continue
                for hit in self._own(scope, hits):
                    candidate = self._candidate(hit, leg, raw=True)
                    if candidate.chunk_id not in asked[leg]:
                        continue  # only what was asked for
                    asked[leg].discard(candidate.chunk_id)  # once (Serverless may briefly hold two copies)
                    if leg == "text":
                        if candidate.score > 0:
                            filled["text"].append(candidate)
                        continue
                    stored = hit["_source"].get(VECTOR_FIELD)
                    if not isinstance(stored, list) or len(stored) != len(query):
                        continue  # no vector to score (not written by memlane): left unscored
                    cosine = sum(map(operator.mul, map(float, stored), query))  # ~4x fsum; float64 is ample
                    filled["vector"].append(replace(candidate, score=cosine))
        return LegResults(vector=_best_first(filled["vector"]), text=_best_first(filled["text"]))

    @staticmethod
    def _leg_hits(leg: str, result: dict[str, Any], what: str) -> list[dict[str, Any]] | None:
        """One _msearch response's hits; None when the index does not exist yet; other errors raise."""
        if "error" in result:
            error = result["error"]
            kind = error.get("type") if isinstance(error, dict) else str(error)
            if kind == "index_not_found_exception":
                return None
            raise DependencyUnavailableError(f"search index {leg} {what} failed: {kind}")
        hits: list[dict[str, Any]] = result.get("hits", {}).get("hits", [])
        return hits

    @staticmethod
    def _own(scope: SearchScope, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # defence in depth: the filter already excludes other tenants
        return [hit for hit in hits if hit.get("_source", {}).get("organization_id") == scope.organization_id]

    @staticmethod
    def _candidate(hit: dict[str, Any], leg: str, *, raw: bool = False) -> Candidate:
        """A hit as a candidate: BM25 as is, a k-NN score turned back into the cosine (unless `raw`: a
        fill's vector hits come from a plain filtered search, whose score means nothing)."""
        source = hit["_source"]
        score = float(hit.get("_score") or 0.0)
        return Candidate(
            chunk_id=str(source.get("chunk_id") or hit["_id"]),
            document_id=str(source["document_id"]),
            chunk_index=int(source.get("chunk_index", 0)),
            score=cosine_from_knn_score(score) if leg == "vector" and not raw else score,
            created_at=parse_time(source["created_at"]),
        )

    def holdings(self, document_id: str, org_id: str | None = None) -> IndexHoldings:
        """Chunks of the document the index holds: with text (the BM25 leg), and at all (each holds
        a vector, for the k-NN leg). Counted after a refresh so a delete that has not become visible yet is not
        mistaken for one that happened (Serverless refreshes on its own; its counts may lag ~1 s)."""
        base = {"term": {"document_id": document_id}}
        try:
            if not self.serverless:
                self._call(self.client.indices.refresh, index=self.alias)
            text = self._call(self.client.count, index=self.alias, body={"query": {"bool": {"filter": [
                base, {"exists": {"field": "text"}}]}}})["count"]
            # Every chunk document carries its vector (upsert writes both in one document).
            vector = self._call(self.client.count, index=self.alias, body={"query": {"bool": {"filter": [
                base]}}})["count"]
        except os_errors.NotFoundError:
            return IndexHoldings(text=0, vector=0)  # no index at all holds nothing
        return IndexHoldings(text=int(text), vector=int(vector))

    def document_ids(self, org_id: str | None = None) -> set[str]:
        """Every document id in the index (optionally one tenant's), by a paginated composite
        aggregation: for the doctor's orphan check."""
        query: dict[str, Any] = (
            {"bool": {"filter": [{"term": {"organization_id": org_id}}]}} if org_id else {"match_all": {}}
        )
        ids: set[str] = set()
        after: dict[str, Any] | None = None
        while True:
            composite: dict[str, Any] = {
                "size": AGG_PAGE,
                "sources": [{"document_id": {"terms": {"field": "document_id"}}}],
            }
            if after is not None:
                composite["after"] = after
            body = {"size": 0, "query": query, "aggs": {"documents": {"composite": composite}}}
            try:
                response = self._call(self.client.search, index=self.alias, body=body)
            except os_errors.NotFoundError:
                return ids
            agg = response.get("aggregations", {}).get("documents", {})
            buckets = agg.get("buckets", [])
            ids.update(str(b["key"]["document_id"]) for b in buckets)
            after = agg.get("after_key")
            if not buckets or after is None:
                return ids


def _own_chunks(batch: Sequence[IndexedChunk]) -> dict[str, Any]:
    """The batch's chunks, each only in its own organization."""
    by_org: dict[str, list[str]] = {}
    for item in batch:
        by_org.setdefault(item.chunk.organization_id, []).append(item.chunk.id)
    return {"bool": {"should": [
        {"bool": {"filter": [{"term": {"organization_id": org}}, {"terms": {"chunk_id": ids}}]}}
        for org, ids in by_org.items()
    ], "minimum_should_match": 1}}


def _best_first(candidates: list[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (-c.score, c.chunk_id))


def make_opensearch_client(
    endpoint: str,
    region: str,
    kind: str = "managed",
    credentials: Any | None = None,
    *,
    timeout: int = 10,
) -> Any:
    """An opensearch-py client that signs every request with SigV4: service "es" for a managed
    domain, "aoss" for OpenSearch Serverless. `credentials` default to boto3's chain (the
    Lambda role); frozen per request by the signer, so rotating role credentials are picked up."""
    from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

    services = {"managed": "es", "serverless": "aoss"}
    if kind not in services:
        raise ValueError(f"kind must be one of {sorted(services)}, not {kind!r}")
    if credentials is None:
        import boto3

        credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise MemlaneError("no AWS credentials found to sign OpenSearch requests")
    url = urlparse(endpoint if "://" in endpoint else f"https://{endpoint}")
    scheme = url.scheme or "https"
    port = url.port or (443 if scheme == "https" else 80)
    return OpenSearch(
        hosts=[{"host": url.hostname, "port": port, "scheme": scheme}],
        http_auth=AWSV4SignerAuth(credentials, region, services[kind]),
        use_ssl=scheme == "https",
        verify_certs=scheme == "https",
        connection_class=RequestsHttpConnection,
        pool_maxsize=10,
        timeout=timeout,
    )
