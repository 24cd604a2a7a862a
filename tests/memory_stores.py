"""In-memory implementations of every port in memlane.ports, for unit tests of services.

They are held to the same contract suites as the SQLite and AWS adapters (tests/contracts/), so a
service test that passes on them relies only on behaviour every adapter has: tenant scoping in
every read, upserts by id, superseded/expired filtering, generation bumps, page claims. Where the
adapters differ (see the contract modules' comments), these follow the embedded default (SQLite).

Values are copied in and out, as a store would serialise them: a caller that mutates what it
stored or read does not change the stored record. Each store takes a lock, so services that run
work on threads (the local worker, the crawl runner) can use them too.

    stores = MemoryStores()
    Services(metadata=stores.metadata, blobs=stores.blobs, index=stores.index, queue=stores.queue,
             cache=stores.cache, ...)
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memlane.domain.docsets import ClientSession, Docset, DocsetPage, PageCounts, PageStatus, new_page
from memlane.domain.errors import ConflictError, EmbedderMismatchError, IdTakenError
from memlane.domain.models import (
    ApiKey,
    Chunk,
    Document,
    DocumentStatus,
    IngestJob,
    Organization,
    Project,
    conversation_order,
)
from memlane.ports import (
    UNKNOWN_KIND,
    Candidate,
    DocumentPage,
    DocumentStats,
    IndexedChunk,
    IndexHoldings,
    LegResults,
    RecallFilters,
    SearchScope,
    around_in_conversations,
    decode_cursor,
    encode_cursor,
)
from memlane.services.ratelimit import InMemoryRateLimiter

# The local server's limiter is already in memory (memlane.services.ratelimit): it is the fake.
MemoryRateLimiter = InMemoryRateLimiter

STUCK_MESSAGE = "retried after being stuck in processing"


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _after(value: datetime, bound: datetime | None) -> bool:
    """`created_after` is strict: a document created at the bound itself is not after it."""
    return bound is None or _utc(value) > _utc(bound)


def _tag_match(tags: Sequence[str], wanted: Sequence[str]) -> bool:
    """Any of the wanted tags, compared without case."""
    return not wanted or bool({t.lower() for t in tags} & {w.lower() for w in wanted})


# --------------------------------------------------------------------------- metadata


class MemoryMetadataStore:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._orgs: dict[str, Organization] = {}
        self._keys: dict[str, ApiKey] = {}
        self._projects: dict[tuple[str, str], Project] = {}
        self._docs: dict[tuple[str, str], Document] = {}
        self._owners: dict[str, str] = {}  # document id -> the organization holding it (ids are global)
        self._chunks: dict[tuple[str, str], list[Chunk]] = {}
        self.forgotten: list[dict[str, Any]] = []
        self.receipts: dict[tuple[str, str], str] = {}

    # organizations and keys

    def create_organization(self, org: Organization) -> Organization:
        with self._lock:
            if org.id in self._orgs or any(o.slug == org.slug for o in self._orgs.values()):
                raise ConflictError(f"an organization with slug {org.slug!r} already exists")
            self._orgs[org.id] = org.model_copy(deep=True)
        return org

    def get_organization(self, org_id: str) -> Organization | None:
        with self._lock:
            found = self._orgs.get(org_id)
            return found.model_copy(deep=True) if found else None

    def find_organization_by_slug(self, slug: str) -> Organization | None:
        with self._lock:
            found = next((o for o in self._orgs.values() if o.slug == slug), None)
            return found.model_copy(deep=True) if found else None

    def list_organizations(self) -> list[Organization]:
        with self._lock:
            return [o.model_copy(deep=True) for o in sorted(self._orgs.values(), key=lambda o: o.created_at)]

    def put_api_key(self, key: ApiKey) -> None:
        with self._lock:
            if any(k.key_hash == key.key_hash and k.id != key.id for k in self._keys.values()):
                raise ConflictError("an API key with this hash already exists")
            self._keys[key.id] = key.model_copy(deep=True)

    def find_api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        with self._lock:
            found = next((k for k in self._keys.values() if k.key_hash == key_hash), None)
            return found.model_copy(deep=True) if found else None

    def list_api_keys(self, org_id: str | None = None) -> list[ApiKey]:
        with self._lock:
            keys = [k for k in self._keys.values() if org_id is None or k.organization_id == org_id]
            return [k.model_copy(deep=True) for k in sorted(keys, key=lambda k: (k.created_at, k.id))]

    def revoke_api_key(self, key_id: str, when: datetime) -> bool:
        """True for a known key (revoking again keeps the first time), False for an unknown one."""
        with self._lock:
            key = self._keys.get(key_id)
            if key is None:
                return False
            if key.revoked_at is None:
                self._keys[key_id] = key.model_copy(update={"revoked_at": when})
            return True

    # projects

    def create_project(self, project: Project) -> Project:
        with self._lock:
            org = project.organization_id
            if (org, project.id) in self._projects or self._project_by_slug(org, project.slug):
                raise ConflictError(f"a project with slug {project.slug!r} already exists")
            self._projects[(org, project.id)] = project.model_copy(deep=True)
        return project

    def _project_by_slug(self, org_id: str, slug: str) -> Project | None:
        return next((p for (o, _), p in self._projects.items() if o == org_id and p.slug == slug), None)

    def get_project(self, org_id: str, project_id: str) -> Project | None:
        with self._lock:
            found = self._projects.get((org_id, project_id))
            return found.model_copy(deep=True) if found else None

    def find_project_by_slug(self, org_id: str, slug: str) -> Project | None:
        with self._lock:
            found = self._project_by_slug(org_id, slug)
            return found.model_copy(deep=True) if found else None

    def list_projects(self, org_id: str) -> list[Project]:
        """The default project first, then by creation."""
        with self._lock:
            mine = [p for (o, _), p in self._projects.items() if o == org_id]
            ordered = sorted(mine, key=lambda p: (not p.is_default, p.created_at, p.id))
            return [p.model_copy(deep=True) for p in ordered]

    def delete_project(self, org_id: str, project_id: str) -> bool:
        """The project record only (its documents are removed first by the caller); also what the
        docset store does to the project of a deleted docset."""
        with self._lock:
            return self._projects.pop((org_id, project_id), None) is not None

    def update_project(self, project: Project) -> None:
        with self._lock:
            key = (project.organization_id, project.id)
            other = self._project_by_slug(project.organization_id, project.slug)
            if other is not None and other.id != project.id:
                raise ConflictError(f"a project with slug {project.slug!r} already exists")
            if key in self._projects:
                self._projects[key] = project.model_copy(deep=True)

    def document_stats(self, org_id: str, since: datetime, apart: Collection[str] = ()) -> DocumentStats:
        with self._lock:
            everything = [d for (o, _), d in self._docs.items() if o == org_id]
            docs = [d for d in everything if d.project_id not in apart]
            return DocumentStats(total=len(docs), created_since=sum(_utc(d.created_at) >= _utc(since) for d in docs),
                                 content_bytes=sum(len(d.content.encode()) for d in everything),
                                 apart_total=len(everything) - len(docs))

    def page_documents(self, org_id: str, project_id: str, now: datetime, *, limit: int, cursor: str | None = None,
                       include_superseded: bool = False) -> DocumentPage:
        with self._lock:
            docs = [d for d in reversed(self._project_docs(org_id, project_id))
                    if not d.is_expired(now) and (include_superseded or d.superseded_by is None)]
            if cursor is not None:
                created, doc_id = decode_cursor(cursor)
                after = (datetime.fromisoformat(created), doc_id)
                docs = [d for d in docs if (_utc(d.created_at), d.id) < after]
            page = [d.model_copy(update={"content": ""}, deep=True) for d in docs[:limit]]
            more = len(docs) > limit
            return DocumentPage(documents=page, next_cursor=encode_cursor(_utc(page[-1].created_at).isoformat(),
                                                                          page[-1].id) if more and page else None)

    def list_forgotten(self, org_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            mine = [{k: v for k, v in r.items() if k != "organization_id"} for r in self.forgotten
                    if r["organization_id"] == org_id]
            return mine if limit is None else mine[-limit:]

    def count_documents(self, org_id: str, *, current_only: bool = False) -> dict[str, int]:
        with self._lock:
            counts: dict[str, int] = {}
            for (o, _), doc in self._docs.items():
                if o == org_id and not (current_only and doc.superseded_by):
                    counts[doc.project_id] = counts.get(doc.project_id, 0) + 1
            return counts

    # documents

    def put_document(self, doc: Document) -> None:
        with self._lock:
            if self._owners.setdefault(doc.id, doc.organization_id) != doc.organization_id:
                raise IdTakenError(f"document id {doc.id} is not available")
            self._docs[(doc.organization_id, doc.id)] = doc.model_copy(deep=True)

    def add_document(self, doc: Document) -> Document | None:
        with self._lock:
            existing = self.find_document_by_hash(doc.organization_id, doc.project_id, doc.content_hash)
            if existing is not None:
                return existing
            self.put_document(doc)
            return None

    def get_document(self, org_id: str, document_id: str) -> Document | None:
        with self._lock:
            found = self._docs.get((org_id, document_id))
            return found.model_copy(deep=True) if found else None

    def conversation_messages(self, org_id: str, document_ids: Sequence[str]) -> set[str]:
        with self._lock:
            return {d for d in document_ids if (found := self._docs.get((org_id, d))) and found.conversation_id}

    def get_documents(self, org_id: str, document_ids: Sequence[str]) -> list[Document]:
        """The documents that exist, in the order asked for."""
        with self._lock:
            return [
                self._docs[(org_id, d)].model_copy(deep=True)
                for d in dict.fromkeys(document_ids)
                if (org_id, d) in self._docs
            ]

    def _project_docs(self, org_id: str, project_id: str) -> list[Document]:
        docs = [d for (o, _), d in self._docs.items() if o == org_id and d.project_id == project_id]
        return sorted(docs, key=lambda d: (_utc(d.created_at), d.id))

    def find_document_by_hash(self, org_id: str, project_id: str, content_hash: str) -> Document | None:
        """The oldest document of the project with this content, unless it failed (a failed save
        is retried by saving again, not answered as a duplicate)."""
        if not content_hash:
            return None
        with self._lock:
            for doc in self._project_docs(org_id, project_id):
                if doc.content_hash == content_hash and doc.status != DocumentStatus.FAILED:
                    return doc.model_copy(deep=True)
            return None

    def set_status(
        self, org_id: str, document_id: str, status: DocumentStatus, reason: str | None = None
    ) -> None:
        with self._lock:
            doc = self._docs.get((org_id, document_id))
            if doc is not None:  # a document deleted while it was processing stays deleted
                self._docs[(org_id, document_id)] = doc.model_copy(
                    update={"status": DocumentStatus(status), "status_reason": reason}
                )

    def delete_document(self, org_id: str, document_id: str) -> bool:
        with self._lock:
            if self._docs.pop((org_id, document_id), None) is None:
                return False
            self._owners.pop(document_id, None)
            self._chunks.pop((org_id, document_id), None)
            return True

    def recent_documents(
        self, org_id: str, project_ids: Sequence[str], filters: RecallFilters, now: datetime, limit: int
    ) -> list[Document]:
        """Ready, unexpired documents of the projects, newest first."""
        projects = set(project_ids)
        with self._lock:
            docs = [
                d
                for (o, _), d in self._docs.items()
                if o == org_id
                and d.project_id in projects
                and d.status == DocumentStatus.READY
                and not d.is_expired(now)
                and (filters.include_superseded or d.superseded_by is None)
                and (not filters.content_types or d.content_type in filters.content_types)
                and _after(d.created_at, filters.created_after)
                and _tag_match(d.tags, filters.tags)
            ]
            docs.sort(key=lambda d: d.id)
            docs.sort(key=lambda d: _utc(d.created_at), reverse=True)
            return [d.model_copy(deep=True) for d in docs[: max(0, limit)]]

    def touch_documents(self, org_id: str, document_ids: Sequence[str], when: datetime) -> None:
        with self._lock:
            for doc_id in document_ids:
                doc = self._docs.get((org_id, doc_id))
                if doc is not None:
                    self._docs[(org_id, doc_id)] = doc.model_copy(update={"last_accessed_at": when})

    def next_message_index(self, org_id: str, project_id: str, conversation_id: str) -> int:
        with self._lock:
            indexes = [d.message_index or 0 for d in self._project_docs(org_id, project_id)
                       if d.conversation_id == conversation_id]
            return max(indexes) + 1 if indexes else 0

    def conversation_documents(
        self, org_id: str, project_id: str, conversation_id: str, now: datetime, *, pending: bool = False
    ) -> list[Document]:
        statuses = {DocumentStatus.READY} | ({DocumentStatus.QUEUED, DocumentStatus.PROCESSING} if pending else set())
        with self._lock:
            docs = [
                d.model_copy(deep=True) for d in self._project_docs(org_id, project_id)
                if d.conversation_id == conversation_id and d.status in statuses
                and d.superseded_by is None and not d.is_expired(now)
            ]
        return sorted(docs, key=conversation_order)

    def conversation_around(
        self, org_id: str, document_ids: Sequence[str], window: int, now: datetime
    ) -> dict[str, tuple[list[str], list[str]]]:
        return around_in_conversations(self, org_id, document_ids, window, now)

    def list_documents(self, org_id: str, project_id: str) -> list[Document]:
        """Every document of a project, whatever its status or version, oldest first."""
        with self._lock:
            return [d.model_copy(deep=True) for d in self._project_docs(org_id, project_id)]

    def find_latest_by_source_url(self, org_id: str, project_id: str, source_url: str) -> Document | None:
        with self._lock:
            for doc in reversed(self._project_docs(org_id, project_id)):
                if (
                    doc.source_url == source_url
                    and doc.superseded_by is None
                    and doc.status != DocumentStatus.FAILED
                ):
                    return doc.model_copy(deep=True)
            return None

    def expired_documents(self, now: datetime, limit: int = 100) -> list[Document]:
        """Documents of every organization whose forget_after is at or before `now`."""
        with self._lock:
            due = [d for d in self._docs.values() if d.is_expired(now)]
            due.sort(key=lambda d: (_utc(d.forget_after or now), d.id))
            return [d.model_copy(deep=True) for d in due[:limit]]

    def record_forgotten(self, doc: Document, when: datetime, reason: str) -> None:
        """What was forgotten, when and why — never the content."""
        with self._lock:
            self.forgotten.append(
                {
                    "organization_id": doc.organization_id,
                    "document_id": doc.id,
                    "project_id": doc.project_id,
                    "forgotten_at": when,
                    "reason": reason,
                }
            )

    def mark_source_changed(self, org_id: str, source_url: str, when: datetime,
                            exclude_project_id: str | None = None) -> int:
        with self._lock:
            marked = [key for key, d in self._docs.items() if key[0] == org_id and d.source_url == source_url
                      and d.project_id != exclude_project_id]
            for key in marked:
                self._docs[key] = self._docs[key].model_copy(update={"source_changed_at": when})
            return len(marked)

    def put_receipt(self, org_id: str, receipt_id: str, body: str, when: datetime) -> None:
        with self._lock:
            self.receipts[(org_id, receipt_id)] = body

    def get_receipt(self, org_id: str, receipt_id: str) -> str | None:
        with self._lock:
            return self.receipts.get((org_id, receipt_id))

    def all_document_ids(self, org_id: str | None = None) -> set[str]:
        with self._lock:
            return {d for (o, d) in self._docs if org_id is None or o == org_id}

    # chunks

    def put_chunks(self, org_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        """Replaces the document's chunk records (an earlier, longer version leaves nothing)."""
        with self._lock:
            ids = {c.id for c in chunks}
            if any(o != org_id and c.id in ids for (o, _), held in self._chunks.items() for c in held):
                raise IdTakenError("a chunk id of this document is not available")
            self._chunks[(org_id, document_id)] = [c.model_copy(deep=True) for c in chunks]

    def get_chunks(self, org_id: str, document_id: str) -> list[Chunk]:
        with self._lock:
            chunks = self._chunks.get((org_id, document_id), [])
            return [c.model_copy(deep=True) for c in sorted(chunks, key=lambda c: c.chunk_index)]

    def get_chunks_by_id(self, org_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks that exist, in the order asked for."""
        with self._lock:
            by_id = {c.id: c for (o, _), chunks in self._chunks.items() if o == org_id for c in chunks}
            return [by_id[c].model_copy(deep=True) for c in dict.fromkeys(chunk_ids) if c in by_id]


# --------------------------------------------------------------------------- blobs


class MemoryBlobStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[str, bytes] = {}

    def put(self, key: str, data: bytes) -> None:
        with self._lock:
            self._blobs[key] = bytes(data)

    def get(self, key: str) -> bytes | None:
        with self._lock:
            return self._blobs.get(key)

    def delete(self, key: str) -> None:
        with self._lock:
            self._blobs.pop(key, None)

    def keys(self, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted(k for k in self._blobs if k.startswith(prefix))

    def delete_prefix(self, prefix: str) -> int:
        if not prefix:
            raise ValueError("delete_prefix needs a prefix; refusing to delete every blob")
        with self._lock:
            doomed = [k for k in self._blobs if k.startswith(prefix)]
            for key in doomed:
                del self._blobs[key]
            return len(doomed)

    def versions(self, prefix: str) -> int:
        """One version per key, like the embedded store."""
        return len(self.keys(prefix))


# --------------------------------------------------------------------------- search

_WORD = re.compile(r"\w+", re.UNICODE)
TITLE_WEIGHT = 2.0  # a word in the title or section path counts more than one in the body
CONTEXT_WEIGHT = 0.5  # a word of the memories saved around it (IndexedChunk.context) counts less
BM25_K1, BM25_B = 1.2, 0.75


def _words(text: str) -> list[str]:
    """Lower-cased words. No stemming: the fake matches the words as written (the real indexes
    also match other forms of a word; tests of the fake should not rely on either)."""
    return [w.lower() for w in _WORD.findall(text)]


@dataclass
class _Row:
    chunk: Chunk
    vector: list[float]
    superseded: bool
    seq: int  # insertion order, to break score ties as the local index does (row order)
    context: str = ""
    kind: str = UNKNOWN_KIND  # IndexedChunk.kind as written (UNKNOWN_KIND: a row from before kinds)


class MemorySearchIndex:
    """Exact k-NN (cosine) and a plain BM25 over chunks, with the scope applied in both legs."""

    backend = "memory"

    def __init__(self, dimension: int | None = None) -> None:
        self.dimension = dimension
        self._lock = threading.Lock()
        self._rows: dict[str, _Row] = {}
        self._embedder: str | None = None
        self._seq = 0

    def upsert(self, embedder_id: str, items: Sequence[IndexedChunk]) -> None:
        if not items:
            return
        with self._lock:
            if self._embedder is not None and self._embedder != embedder_id:
                raise EmbedderMismatchError(
                    f"this index was built with embedder {self._embedder!r}, not {embedder_id!r}; "
                    "run `memlane reindex`"
                )
            for item in items:
                if self.dimension is not None and len(item.vector) != self.dimension:
                    raise EmbedderMismatchError(
                        f"vector of dimension {len(item.vector)} for an index of dimension {self.dimension}"
                    )
                held = self._rows.get(item.chunk.id)
                if held is not None and held.chunk.organization_id != item.chunk.organization_id:
                    raise IdTakenError(f"chunk id {item.chunk.id} is not available")
            self._embedder = embedder_id
            for item in items:
                self._seq += 1
                chunk = item.chunk.model_copy(deep=True)
                norm = math.sqrt(math.fsum(v * v for v in item.vector)) or 1.0
                self._rows[chunk.id] = _Row(
                    chunk, [v / norm for v in item.vector], chunk.superseded, self._seq, item.context, item.kind
                )

    def delete_document(self, org_id: str, document_id: str) -> None:
        with self._lock:
            for chunk_id in [
                cid
                for cid, row in self._rows.items()
                if row.chunk.organization_id == org_id and row.chunk.document_id == document_id
            ]:
                del self._rows[chunk_id]

    def set_superseded(self, org_id: str, document_id: str, superseded: bool) -> None:
        with self._lock:
            for row in self._rows.values():
                if row.chunk.organization_id == org_id and row.chunk.document_id == document_id:
                    row.superseded = superseded

    def _in_scope(self, row: _Row, scope: SearchScope) -> bool:
        c, f = row.chunk, scope.filters
        return (
            c.organization_id == scope.organization_id
            and c.project_id in scope.project_ids
            and (scope.now is None or c.forget_after is None or _utc(c.forget_after) > _utc(scope.now))
            and (f.include_superseded or not row.superseded)
            and (not f.content_types or c.content_type in f.content_types)
            and (not f.kinds or row.kind in f.kinds or row.kind == UNKNOWN_KIND)
            and _after(c.created_at, f.created_after)
            and (scope.created_until is None or _utc(c.created_at) <= _utc(scope.created_until))
            and _tag_match(c.tags, f.tags)
        )

    def search(
        self, scope: SearchScope, query_text: str, query_vector: Sequence[float] | None, k: int,
        *, complete: bool = True,
    ) -> LegResults:
        with self._lock:
            rows = [r for r in self._rows.values() if self._in_scope(r, scope)]
            vector: list[tuple[float, _Row]] = []
            if query_vector is not None:
                norm = math.sqrt(math.fsum(v * v for v in query_vector)) or 1.0
                q = [v / norm for v in query_vector]
                vector = [(math.fsum(a * b for a, b in zip(r.vector, q, strict=True)), r) for r in rows]
            text = self._bm25(rows, query_text)
        # each leg also scores the other's candidates (memlane.ports.SearchIndex.search)
        top_vector, top_text = _top(vector, k), _top(text, k)
        if not complete:
            return LegResults(vector=top_vector, text=top_text)
        nearest = {c.chunk_id for c in top_vector}
        matched = {c.chunk_id for c in top_text}
        text_fill = [c for c in _top(text, len(text)) if c.chunk_id in nearest and c.chunk_id not in matched and c.score > 0]
        vector_fill = [c for c in _top(vector, len(vector)) if c.chunk_id in matched and c.chunk_id not in nearest]
        by_score = lambda c: -c.score  # noqa: E731 - a sort key
        return LegResults(vector=sorted(top_vector + vector_fill, key=by_score),
                          text=sorted(top_text + text_fill, key=by_score))

    @staticmethod
    def _bm25(rows: list[_Row], query_text: str) -> list[tuple[float, _Row]]:
        """BM25 over the scope's rows, title and section words weighted ×2."""
        terms = list(dict.fromkeys(_words(query_text)))
        if not terms or not rows:
            return []
        weighted: list[dict[str, float]] = []
        lengths: list[float] = []
        for r in rows:
            tf: dict[str, float] = {}
            for w in _words(" ".join([r.chunk.title, *r.chunk.heading_path])):
                tf[w] = tf.get(w, 0.0) + TITLE_WEIGHT
            for w in _words(r.chunk.content):
                tf[w] = tf.get(w, 0.0) + 1.0
            length = sum(tf.values())  # the chunk's own words: context adds evidence, not length
            for w in _words(r.context):
                tf[w] = tf.get(w, 0.0) + CONTEXT_WEIGHT
            weighted.append(tf)
            lengths.append(length)
        average = sum(lengths) / len(lengths) or 1.0
        n = len(rows)
        scored = []
        for r, tf, length in zip(rows, weighted, lengths, strict=True):
            score = 0.0
            for t in terms:
                f = tf.get(t, 0.0)
                if not f:
                    continue
                df = sum(1 for other in weighted if t in other)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * f * (BM25_K1 + 1) / (f + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            if score > 0:
                scored.append((score, r))
        return scored

    def document_ids(self, org_id: str | None = None) -> set[str]:
        with self._lock:
            return {
                r.chunk.document_id
                for r in self._rows.values()
                if org_id is None or r.chunk.organization_id == org_id
            }

    def chunk_count(self) -> int:
        with self._lock:
            return len(self._rows)

    def holdings(self, document_id: str, org_id: str | None = None) -> IndexHoldings:
        with self._lock:
            rows = sum(1 for r in self._rows.values() if r.chunk.document_id == document_id)
            return IndexHoldings(text=rows, vector=rows)


def _top(scored: list[tuple[float, _Row]], k: int) -> list[Candidate]:
    best = sorted(scored, key=lambda s: (-s[0], s[1].seq))[: max(0, k)]
    return [
        Candidate(
            chunk_id=r.chunk.id,
            document_id=r.chunk.document_id,
            chunk_index=r.chunk.chunk_index,
            score=score,
            created_at=_utc(r.chunk.created_at),
        )
        for score, r in best
    ]


# --------------------------------------------------------------------------- cache


class MemoryCache:
    """Entries by key with an expiry, a record of the documents each names, and per-scope
    generation numbers that only go up."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[bytes, float, frozenset[str]]] = {}
        self._generations: dict[str, int] = {}

    def get(self, key: str, now: datetime) -> bytes | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[1] <= now.timestamp():
                return None
            return entry[0]

    def set(
        self, key: str, value: bytes, ttl_seconds: int, now: datetime, document_ids: Sequence[str] = ()
    ) -> None:
        with self._lock:
            self._entries[key] = (bytes(value), now.timestamp() + ttl_seconds, frozenset(document_ids))

    def generations(self, scope_keys: Sequence[str]) -> dict[str, int]:
        with self._lock:
            return {k: self._generations.get(k, 0) for k in scope_keys}

    def bump_generation(self, scope_key: str) -> int:
        with self._lock:
            self._generations[scope_key] = self._generations.get(scope_key, 0) + 1
            return self._generations[scope_key]

    def purge_document(self, document_id: str) -> int:
        """Drops every entry naming the document; returns how many."""
        with self._lock:
            doomed = [k for k, (_, _, docs) in self._entries.items() if document_id in docs]
            for key in doomed:
                del self._entries[key]
            return len(doomed)

    def entries_naming(self, document_id: str) -> int:
        with self._lock:
            return sum(1 for (_, _, docs) in self._entries.values() if document_id in docs)

    def purge_expired(self, now: datetime) -> int:
        with self._lock:
            doomed = [k for k, (_, expires, _) in self._entries.items() if expires <= now.timestamp()]
            for key in doomed:
                del self._entries[key]
            return len(doomed)

    def document_ids(self) -> set[str]:
        with self._lock:
            return {d for (_, _, docs) in self._entries.values() for d in docs}


# --------------------------------------------------------------------------- jobs


@dataclass
class _Job:
    job: IngestJob
    lease_until: float | None = None


class MemoryJobQueue:
    """The local queue's semantics: one job per document, claims ordered by due time, a claim
    leases the job (attempts + 1) until it completes, is put back, or the lease runs out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}

    def enqueue(self, job: IngestJob) -> None:
        with self._lock:
            if any(j.job.document_id == job.document_id for j in self._jobs.values()):
                return
            self._jobs[job.id] = _Job(job.model_copy(deep=True))

    def claim(self, now: datetime, lease_seconds: int) -> IngestJob | None:
        ts = now.timestamp()
        with self._lock:
            due = [
                j
                for j in self._jobs.values()
                if j.job.not_before.timestamp() <= ts and (j.lease_until is None or j.lease_until < ts)
            ]
            if not due:
                return None
            chosen = min(due, key=lambda j: (j.job.not_before.timestamp(), _utc(j.job.created_at)))
            chosen.lease_until = ts + lease_seconds
            chosen.job = chosen.job.model_copy(update={"attempts": chosen.job.attempts + 1})
            return chosen.job.model_copy(deep=True)

    def complete(self, job_id: str) -> None:
        with self._lock:
            self._jobs.pop(job_id, None)

    def retry_later(self, job_id: str, error: str, not_before: datetime) -> None:
        with self._lock:
            entry = self._jobs.get(job_id)
            if entry is not None:
                entry.lease_until = None
                entry.job = entry.job.model_copy(update={"last_error": error, "not_before": not_before})

    def release_leases(self) -> int:
        with self._lock:
            leased = [j for j in self._jobs.values() if j.lease_until is not None]
            for j in leased:
                j.lease_until = None
            return len(leased)

    def pending_count(self) -> int:
        with self._lock:
            return len(self._jobs)

    def next_due(self) -> datetime | None:
        with self._lock:
            return min((j.job.not_before for j in self._jobs.values()), default=None)


# --------------------------------------------------------------------------- docsets


class MemoryDocsetStore:
    """Docsets, page crawl state and client sessions. Deleting a docset deletes its project from
    `metadata` (as the SQLite and DynamoDB stores do in the same database/table)."""

    def __init__(self, metadata: MemoryMetadataStore | None = None) -> None:
        self._lock = threading.RLock()
        self.metadata = metadata
        self._docsets: dict[str, Docset] = {}
        self._pages: dict[str, dict[str, DocsetPage]] = {}  # docset id → page id → page
        self._sessions: dict[tuple[str, str], ClientSession] = {}
        self._text_versions: dict[str, int] = {}

    # docsets

    def create_docset(self, docset: Docset) -> Docset:
        with self._lock:
            if docset.id in self._docsets:
                raise ConflictError(f"docset {docset.id} already exists")
            self._docsets[docset.id] = docset.model_copy(deep=True)
            self._pages.setdefault(docset.id, {})
        return docset

    def update_docset(self, docset: Docset) -> None:
        """Name and refresh times; a deleted docset stays deleted."""
        with self._lock:
            current = self._docsets.get(docset.id)
            if current is not None:
                self._docsets[docset.id] = current.model_copy(
                    update={
                        "name": docset.name,
                        "updated_at": docset.updated_at,
                        "last_refreshed_at": docset.last_refreshed_at,
                    }
                )

    def get_docset(self, org_id: str, docset_id: str) -> Docset | None:
        with self._lock:
            found = self._docsets.get(docset_id)
            return found.model_copy(deep=True) if found and found.organization_id == org_id else None

    def list_docsets(self, org_id: str | None = None) -> list[Docset]:
        with self._lock:
            found = [d for d in self._docsets.values() if org_id is None or d.organization_id == org_id]
            return [d.model_copy(deep=True) for d in sorted(found, key=lambda d: (d.created_at, d.id))]

    def delete_docset(self, org_id: str, docset_id: str) -> bool:
        with self._lock:
            docset = self._docsets.get(docset_id)
            if docset is None or docset.organization_id != org_id:
                return False
            del self._docsets[docset_id]
            self._pages.pop(docset_id, None)
            self._text_versions.pop(docset_id, None)
            if self.metadata is not None:
                self.metadata.delete_project(org_id, docset.project_id)
            return True

    # pages

    def _docset_pages(self, docset_id: str) -> dict[str, DocsetPage]:
        return self._pages.get(docset_id, {})

    def add_pages(self, docset: Docset, urls: Sequence[str], now: int) -> list[str]:
        """Queues URLs the docset does not know yet, up to its page cap; returns those queued."""
        with self._lock:
            if docset.id not in self._docsets:
                return []
            pages = self._pages[docset.id]
            known = {p.url for p in pages.values()}
            room = docset.max_pages - len(pages)
            added: list[str] = []
            for url in dict.fromkeys(urls):
                if len(added) >= room:
                    break
                if url in known:
                    continue
                page = new_page(docset, url, now)
                pages[page.id] = page
                added.append(url)
            return added

    def insert_page(self, page: DocsetPage) -> bool:
        with self._lock:
            pages = self._pages.get(page.docset_id)
            if pages is None or page.id in pages or any(p.url == page.url for p in pages.values()):
                return False
            pages[page.id] = page.model_copy(deep=True)
            return True

    def save_page(self, page: DocsetPage) -> None:
        """Replaces the page's record; a page removed meanwhile stays removed."""
        with self._lock:
            pages = self._pages.get(page.docset_id)
            if pages is not None and page.id in pages:
                pages[page.id] = page.model_copy(deep=True)

    def get_page(self, docset_id: str, page_id: str) -> DocsetPage | None:
        with self._lock:
            found = self._docset_pages(docset_id).get(page_id)
            return found.model_copy(deep=True) if found else None

    def delete_page(self, docset_id: str, page_id: str) -> None:
        with self._lock:
            self._docset_pages(docset_id).pop(page_id, None)

    @staticmethod
    def _claimable(page: DocsetPage) -> bool:
        return page.retry_at is not None and page.status in (PageStatus.PENDING, PageStatus.ERROR)

    def _claim(self, page: DocsetPage, now: int) -> DocsetPage:
        claimed = page.model_copy(
            update={
                "status": PageStatus.PROCESSING,
                "claimed_at": now,
                "retry_at": None,
                "attempts": page.attempts + 1,
                "updated_at": now,
            }
        )
        self._pages[page.docset_id][page.id] = claimed
        return claimed.model_copy(deep=True)

    def claim_pages(self, now: int, limit: int, exclude_docsets: Sequence[str] = ()) -> list[DocsetPage]:
        """Marks up to `limit` due pages processing and returns them, oldest due first."""
        excluded = set(exclude_docsets)
        with self._lock:
            due = [
                p
                for docset_id, pages in self._pages.items()
                if docset_id not in excluded
                for p in pages.values()
                if self._claimable(p) and p.retry_at is not None and p.retry_at <= now
            ]
            due.sort(key=lambda p: (p.retry_at, p.created_at))
            return [self._claim(p, now) for p in due[: max(0, limit)]]

    def claim_page(
        self, docset_id: str, page_id: str, now: int, stuck_before: int | None = None
    ) -> DocsetPage | None:
        """Claims one page when it is claimable (due or not) or, with `stuck_before`, when it was
        claimed before then and never finished."""
        with self._lock:
            page = self._docset_pages(docset_id).get(page_id)
            if page is None:
                return None
            stuck = (
                stuck_before is not None
                and page.status == PageStatus.PROCESSING
                and page.claimed_at is not None
                and page.claimed_at < stuck_before
            )
            if not (self._claimable(page) or stuck):
                return None
            return self._claim(page, now)

    def next_due(self) -> int | None:
        with self._lock:
            return min(
                (
                    p.retry_at
                    for pages in self._pages.values()
                    for p in pages.values()
                    if self._claimable(p) and p.retry_at is not None
                ),
                default=None,
            )

    def text_version(self, docset_id: str) -> int:
        with self._lock:
            return self._text_versions.get(docset_id, 0)

    def register_text(self, docset_id: str, page_id: str, sketch: list[int], expected_version: int) -> bool:
        with self._lock:
            if self._text_versions.get(docset_id, 0) != expected_version:
                return False
            self._text_versions[docset_id] = expected_version + 1
            page = self._pages.get(docset_id, {}).get(page_id)
            if page is not None:
                self._pages[docset_id][page_id] = page.model_copy(update={"sketch": list(sketch)})
            return True

    def list_pages(
        self, docset_id: str, status: PageStatus | None = None, limit: int = 100, offset: int = 0
    ) -> tuple[list[DocsetPage], int]:
        with self._lock:
            pages = [
                p for p in self._docset_pages(docset_id).values() if status is None or p.status == status
            ]
            pages.sort(key=lambda p: (p.created_at, p.url))
            return [p.model_copy(deep=True) for p in pages[offset : offset + limit]], len(pages)

    def page_counts(self, docset_id: str, stuck_before: int) -> PageCounts:
        with self._lock:
            pages = list(self._docset_pages(docset_id).values())
        if not pages:
            return PageCounts()

        def count(predicate: Any) -> int:
            return sum(1 for p in pages if predicate(p))

        return PageCounts(
            total=len(pages),
            indexed=count(lambda p: p.status == PageStatus.INDEXED),
            pending=count(lambda p: p.status in (PageStatus.PENDING, PageStatus.PROCESSING)),
            error=count(lambda p: p.status == PageStatus.ERROR),
            skipped=count(lambda p: p.status == PageStatus.SKIPPED),
            chunks=sum(p.chunk_count for p in pages if p.status == PageStatus.INDEXED),
            stuck=count(lambda p: p.status == PageStatus.PROCESSING and (p.claimed_at or 0) < stuck_before),
            retried=count(lambda p: p.attempts > 1),
            retrying=count(lambda p: p.status == PageStatus.ERROR and p.retry_at is not None),
            last_update=max(p.updated_at for p in pages),
        )

    def stuck_pages(self, docset_id: str, stuck_before: int, limit: int = 100) -> list[DocsetPage]:
        with self._lock:
            stuck = [
                p
                for p in self._docset_pages(docset_id).values()
                if p.status == PageStatus.PROCESSING
                and p.claimed_at is not None
                and p.claimed_at < stuck_before
            ]
            stuck.sort(key=lambda p: p.claimed_at or 0)
            return [p.model_copy(deep=True) for p in stuck[:limit]]

    def release_stuck(self, stuck_before: int, now: int) -> int:
        """Pages claimed before `stuck_before` and never finished go back to the queue."""
        with self._lock:
            released = 0
            for pages in self._pages.values():
                for page in list(pages.values()):
                    if (
                        page.status == PageStatus.PROCESSING
                        and page.claimed_at is not None
                        and page.claimed_at < stuck_before
                    ):
                        pages[page.id] = page.model_copy(
                            update={
                                "status": PageStatus.PENDING,
                                "retry_at": now,
                                "updated_at": now,
                                "error": page.error or STUCK_MESSAGE,
                            }
                        )
                        released += 1
            return released

    def requeue_docset(self, docset_id: str, now: int, clear_hashes: bool) -> tuple[int, int, int]:
        """Every page not being processed is queued again; indexed pages keep their validators
        and hash unless `clear_hashes`. Returns (queued, hashes kept, hashes cleared)."""
        with self._lock:
            pages = self._docset_pages(docset_id)
            queued = kept = 0
            for page in list(pages.values()):
                if page.status == PageStatus.PROCESSING:
                    continue
                queued += 1
                keep = not clear_hashes and page.status == PageStatus.INDEXED and bool(page.content_hash)
                update: dict[str, Any] = {
                    "status": PageStatus.PENDING,
                    "retry_at": now,
                    "attempts": 0,
                    "error": None,
                    "updated_at": now,
                }
                if keep:
                    kept += 1
                else:
                    update.update({"etag": None, "last_modified": None, "content_hash": None})
                pages[page.id] = page.model_copy(update=update)
            return queued, kept, queued - kept

    def page_ids(self, docset_id: str) -> list[tuple[str, str | None]]:
        with self._lock:
            return [(p.id, p.document_id) for p in self._docset_pages(docset_id).values()]

    # sessions

    def put_session(self, session: ClientSession) -> None:
        """A second register of the same session is a heartbeat: connected_at stays."""
        with self._lock:
            key = (session.organization_id, session.id)
            current = self._sessions.get(key)
            if current is None:
                self._sessions[key] = session.model_copy(deep=True)
            else:
                self._sessions[key] = current.model_copy(
                    update={"client_type": session.client_type, "last_heartbeat": session.last_heartbeat}
                )

    def get_session(self, org_id: str, session_id: str) -> ClientSession | None:
        with self._lock:
            found = self._sessions.get((org_id, session_id))
            return found.model_copy(deep=True) if found else None

    def delete_session(self, org_id: str, session_id: str) -> bool:
        with self._lock:
            return self._sessions.pop((org_id, session_id), None) is not None

    def list_sessions(self, org_id: str) -> list[ClientSession]:
        with self._lock:
            mine = [s for (o, _), s in self._sessions.items() if o == org_id]
            return [s.model_copy(deep=True) for s in sorted(mine, key=lambda s: (s.connected_at, s.id))]


# --------------------------------------------------------------------------- all of them


@dataclass
class MemoryStores:
    """One of each, wired together as a composition would (the docset store shares the metadata
    store, as the SQLite and DynamoDB stores share a database/table)."""

    dimension: int | None = None
    metadata: MemoryMetadataStore = field(default_factory=MemoryMetadataStore)
    blobs: MemoryBlobStore = field(default_factory=MemoryBlobStore)
    cache: MemoryCache = field(default_factory=MemoryCache)
    queue: MemoryJobQueue = field(default_factory=MemoryJobQueue)
    rate_limiter: InMemoryRateLimiter = field(default_factory=InMemoryRateLimiter)
    index: MemorySearchIndex = field(init=False)
    docsets: MemoryDocsetStore = field(init=False)

    def __post_init__(self) -> None:
        self.index = MemorySearchIndex(self.dimension)
        self.docsets = MemoryDocsetStore(self.metadata)
