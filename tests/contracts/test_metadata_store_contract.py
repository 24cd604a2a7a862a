"""The MetadataStore contract: what services rely on, from SQLite, DynamoDB (moto) and the
in-memory fake alike. Another organization's records are never returned, changed or deleted;
writes are upserts by id; reads filter status, expiry, versions, content type, time and tags.

Not part of the contract (callers do not rely on them, so the adapters may differ):
* the order of get_documents / get_chunks_by_id (callers index the result by id);
* whether count_documents lists a project with no documents (callers read it with .get(id, 0));
* how content too large for a DynamoDB item is stored (tests/aws/test_aws_metadata_store.py).
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memory_stores import MemoryMetadataStore

from memlane.adapters.aws.blob_store import S3BlobStore
from memlane.adapters.aws.metadata_store import DynamoMetadataStore
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.domain.errors import ConflictError, IdTakenError
from memlane.domain.models import (
    ApiKey,
    Chunk,
    ContentType,
    Document,
    DocumentStatus,
    Organization,
    Project,
    chunk_id_for,
)
from memlane.ports import RecallFilters

pytestmark = pytest.mark.integration
ADAPTERS = ["sqlite", "aws", "memory"]  # the fixtures they need are in tests/contracts/conftest.py

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=10)
A, B = "org-a", "org-b"


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest) -> Any:
    if request.param == "sqlite":
        return SqliteMetadataStore(request.getfixturevalue("sqlite_db"))
    if request.param == "aws":
        blobs = S3BlobStore(request.getfixturevalue("bucket"), client=request.getfixturevalue("s3"))
        return DynamoMetadataStore(
            request.getfixturevalue("table"), client=request.getfixturevalue("dynamodb"), blob_store=blobs
        )
    return MemoryMetadataStore()


def org(store: Any, org_id: str, **overrides: Any) -> Organization:
    fields = {"id": org_id, "name": org_id, "slug": org_id, "created_at": T0, "updated_at": T0}
    return store.create_organization(Organization(**{**fields, **overrides}))


def project(store: Any, org_id: str, project_id: str, **overrides: Any) -> Project:
    fields: dict[str, Any] = {
        "id": project_id,
        "organization_id": org_id,
        "name": project_id,
        "slug": project_id,
        "created_at": T0,
        "updated_at": T0,
    }
    return store.create_project(Project(**{**fields, **overrides}))


def document(org_id: str, doc_id: str, project_id: str = "proj-a", **overrides: Any) -> Document:
    fields: dict[str, Any] = {
        "id": doc_id,
        "organization_id": org_id,
        "project_id": project_id,
        "user_id": "user-1",
        "title": f"Title of {doc_id}",
        "content": f"Content of {doc_id}: exponential backoff with jitter.",
        "summary": "How to retry.",
        "content_type": ContentType.MARKDOWN,
        "source_url": f"https://docs.example/{doc_id}",
        "metadata": {"tags": ["aws"], "score": 0.75, "nested": {"depth": 2}},
        "content_hash": f"hash-{doc_id}",
        "created_at": T0,
        "updated_at": T0,
        "status": DocumentStatus.READY,
        "chunk_count": 0,
        "embedder": "test/hash/256",
    }
    return Document(**{**fields, **overrides})


def chunks_of(doc: Document, count: int, label: str = "v1") -> list[Chunk]:
    return [
        Chunk(
            id=chunk_id_for(doc.id, i),
            document_id=doc.id,
            organization_id=doc.organization_id,
            project_id=doc.project_id,
            content=f"{label} chunk {i} of {doc.id}",
            chunk_index=i,
            chunk_count=count,
            start_offset=i * 100,
            end_offset=i * 100 + 99,
            heading_path=["Guide", f"Section {i}"],
            title=doc.title,
            content_type=doc.content_type,
            tags=doc.tags,
            created_at=doc.created_at,
        )
        for i in range(count)
    ]


def ids(docs: list[Document]) -> list[str]:
    return [d.id for d in docs]


# ----------------------------------------------------------------------------- organizations and keys


def test_organizations_are_found_by_id_and_slug_and_a_slug_is_taken_once(store: Any) -> None:
    created = org(store, A, slug="acme")
    assert store.get_organization(A) == created
    assert store.find_organization_by_slug("acme") == created
    assert store.get_organization("nobody") is None and store.find_organization_by_slug("nobody") is None
    with pytest.raises(ConflictError):
        org(store, B, slug="acme")
    assert store.get_organization(B) is None


def test_api_keys_are_found_by_hash_listed_per_organization_and_revoked_once(store: Any) -> None:
    org(store, A), org(store, B, slug="b")
    k1 = ApiKey(id="key-1", organization_id=A, key_hash="h1", prefix="ml_abc", created_at=T0)
    k2 = ApiKey(
        id="key-2", organization_id=A, key_hash="h2", prefix="ml_def", created_at=T0 + timedelta(minutes=1)
    )
    k3 = ApiKey(id="key-3", organization_id=B, key_hash="h3", prefix="ml_ghi", created_at=T0)
    for key in (k2, k1, k3):
        store.put_api_key(key)
    # Then each key is found by its hash, and listed with its own organization, oldest first
    assert store.find_api_key_by_hash("h1") == k1 and store.find_api_key_by_hash("nope") is None
    assert ids(store.list_api_keys(A)) == ["key-1", "key-2"]
    assert ids(store.list_api_keys(B)) == ["key-3"]
    assert sorted(ids(store.list_api_keys())) == ["key-1", "key-2", "key-3"]
    # When a key is put again with a new limit, it is updated, not duplicated
    store.put_api_key(k1.model_copy(update={"rate_limit_per_minute": 5}))
    assert store.find_api_key_by_hash("h1").rate_limit_per_minute == 5
    assert ids(store.list_api_keys(A)) == ["key-1", "key-2"]
    # and another key with the same hash is refused, leaving the first one as it was
    with pytest.raises(ConflictError):
        store.put_api_key(ApiKey(id="key-9", organization_id=B, key_hash="h1", prefix="ml_x"))
    assert store.find_api_key_by_hash("h1").organization_id == A
    # When a key is revoked twice: both succeed (the admin API's revoke is idempotent) and the
    # first time stays
    assert store.revoke_api_key("key-1", T0 + timedelta(hours=1)) is True
    assert store.revoke_api_key("key-1", T0 + timedelta(hours=2)) is True
    revoked = store.find_api_key_by_hash("h1")
    assert revoked.revoked_at == T0 + timedelta(hours=1) and not revoked.active
    assert store.find_api_key_by_hash("h2").active
    assert store.revoke_api_key("no-such-key", T0) is False


# ----------------------------------------------------------------------------- projects


def test_projects_are_read_and_listed_within_their_organization(store: Any) -> None:
    org(store, A), org(store, B, slug="b")
    later = project(store, A, "p-later", created_at=T0 + timedelta(minutes=2))
    first = project(store, A, "p-first", created_at=T0 + timedelta(minutes=1))
    default = project(
        store, A, "p-default", slug="default", is_default=True, created_at=T0 + timedelta(minutes=3)
    )
    theirs = project(store, B, "p-theirs", slug="p-first")  # the same slug in another organization
    # Then the default project comes first, then the others by creation
    assert ids(store.list_projects(A)) == [default.id, first.id, later.id]
    assert store.get_project(A, first.id) == first
    assert store.find_project_by_slug(A, "p-first") == first
    assert store.find_project_by_slug(B, "p-first") == theirs
    # and nothing of one organization is reachable from the other
    assert store.get_project(B, first.id) is None
    assert store.get_project(A, theirs.id) is None
    assert store.find_project_by_slug(B, "default") is None
    assert ids(store.list_projects(B)) == [theirs.id]
    assert store.list_projects("nobody") == []


def test_a_slug_is_taken_once_per_organization(store: Any) -> None:
    org(store, A)
    project(store, A, "p1", slug="docs")
    with pytest.raises(ConflictError):
        project(store, A, "p2", slug="docs")
    assert store.get_project(A, "p2") is None


# ----------------------------------------------------------------------------- documents


def test_a_document_reads_back_as_written_and_a_second_put_is_an_update(store: Any) -> None:
    org(store, A), project(store, A, "proj-a")
    doc = document(
        A,
        "doc-1",
        forget_after=NOW + timedelta(days=1),
        last_accessed_at=T0 + timedelta(hours=1),
        updates_memory_id="doc-0",
        status_reason=None,
        chunk_count=3,
        created_at=T0 + timedelta(microseconds=250),
    )
    store.put_document(doc)
    assert store.get_document(A, "doc-1") == doc
    # When the same document is put again (a redelivered job, a status change)
    changed = doc.model_copy(update={"title": "Renamed", "superseded_by": "doc-2"})
    store.put_document(changed)
    store.put_document(changed)
    # Then there is one copy, with the new fields
    assert store.get_document(A, "doc-1") == changed
    assert ids(store.list_documents(A, "proj-a")) == ["doc-1"]
    assert {k: v for k, v in store.count_documents(A).items() if v} == {"proj-a": 1}


def test_memories_are_counted_once_whatever_their_versions(store: Any) -> None:
    # Given a project with a memory in three versions and another in one
    org(store, A), project(store, A, "proj-a")
    store.put_document(document(A, "v1", superseded_by="v2"))
    store.put_document(document(A, "v2", superseded_by="v3", content_hash="h2"))
    store.put_document(document(A, "v3", content_hash="h3"))
    store.put_document(document(A, "other", content_hash="h4"))
    # Then it holds four documents but two memories
    assert {k: v for k, v in store.count_documents(A).items() if v} == {"proj-a": 4}
    assert {k: v for k, v in store.count_documents(A, current_only=True).items() if v} == {"proj-a": 2}


def test_no_read_returns_and_no_write_touches_another_organizations_document(store: Any) -> None:
    org(store, A), org(store, B, slug="b")
    project(store, A, "proj-a"), project(store, B, "proj-a-of-b", slug="proj-a")
    mine = document(A, "doc-a")
    theirs = document(B, "doc-b", "proj-a-of-b", content_hash=mine.content_hash, source_url=mine.source_url)
    for doc in (mine, theirs):
        store.put_document(doc)
        store.put_chunks(doc.organization_id, doc.id, chunks_of(doc, 2))
    everything = RecallFilters(include_superseded=True)
    # Then org B, asking with org A's ids, finds nothing of A's
    assert store.get_document(B, "doc-a") is None
    assert store.get_documents(B, ["doc-a", "doc-b"]) == [theirs]
    assert store.find_document_by_hash(B, "proj-a", mine.content_hash) is None
    assert store.find_latest_by_source_url(B, "proj-a", mine.source_url) is None
    assert store.list_documents(B, "proj-a") == []
    assert store.recent_documents(B, ["proj-a"], everything, NOW, 10) == []
    assert {k: v for k, v in store.count_documents(B).items() if v} == {"proj-a-of-b": 1}
    assert store.get_chunks(B, "doc-a") == []
    assert store.get_chunks_by_id(B, [c.id for c in chunks_of(mine, 2)]) == []
    # When org B writes with org A's ids
    store.set_status(B, "doc-a", DocumentStatus.FAILED, "not yours")
    store.touch_documents(B, ["doc-a"], NOW)
    assert store.delete_document(B, "doc-a") is False
    # Then A's document, its chunks and its lookups are as they were
    assert store.get_document(A, "doc-a") == mine
    assert [c.content for c in store.get_chunks(A, "doc-a")] == [c.content for c in chunks_of(mine, 2)]
    assert store.find_document_by_hash(A, "proj-a", mine.content_hash) == mine
    assert store.get_document(B, "doc-b") == theirs


def test_a_document_id_another_organization_holds_is_refused_and_its_records_kept(store: Any) -> None:
    """Issue 34, finding 1: an import that named another organization's document id replaced that
    document (SQLite's `documents.id` is the primary key alone). The store's own write refuses it."""
    org(store, A), org(store, B, slug="b")
    project(store, A, "proj-a"), project(store, B, "proj-b")
    mine = document(A, "doc-shared")
    store.put_document(mine)
    store.put_chunks(A, mine.id, chunks_of(mine, 2))
    # When org B writes a document, then chunk records, under that id
    forged = document(B, "doc-shared", "proj-b", content="Forged text.", content_hash="hash-forged")
    with pytest.raises(IdTakenError):
        store.put_document(forged)
    with contextlib.suppress(IdTakenError):  # refused, or kept under B's own key: never over A's
        store.put_chunks(B, "doc-shared", chunks_of(forged, 2, label="forged"))
    # Then A's document and its chunk records are as they were, and B holds no document
    assert store.get_document(A, "doc-shared") == mine
    assert [c.content for c in store.get_chunks(A, "doc-shared")] == [c.content for c in chunks_of(mine, 2)]
    assert store.find_document_by_hash(A, "proj-a", mine.content_hash) == mine
    assert store.get_document(B, "doc-shared") is None and store.list_documents(B, "proj-b") == []
    # and A's own writes of its id stay upserts
    store.put_document(mine.model_copy(update={"title": "Retitled"}))
    assert store.get_document(A, "doc-shared").title == "Retitled"
    # and once A deleted it, the id is nobody's
    assert store.delete_document(A, "doc-shared") is True
    store.put_document(forged)
    assert store.get_document(B, "doc-shared") == forged


def test_status_moves_through_processing_to_ready_or_failed_with_a_reason(store: Any) -> None:
    store.put_document(document(A, "doc-1", status=DocumentStatus.QUEUED))
    store.set_status(A, "doc-1", DocumentStatus.PROCESSING)
    assert store.get_document(A, "doc-1").status == DocumentStatus.PROCESSING
    store.set_status(A, "doc-1", DocumentStatus.FAILED, "embedding service returned 503")
    failed = store.get_document(A, "doc-1")
    assert (failed.status, failed.status_reason) == (DocumentStatus.FAILED, "embedding service returned 503")
    # A later status without a reason clears the old reason
    store.set_status(A, "doc-1", DocumentStatus.READY)
    ready = store.get_document(A, "doc-1")
    assert (ready.status, ready.status_reason) == (DocumentStatus.READY, None)
    # and a document deleted while it was processing is not brought back by its worker
    store.delete_document(A, "doc-1")
    store.set_status(A, "doc-1", DocumentStatus.READY)
    assert store.get_document(A, "doc-1") is None


def test_a_duplicate_is_found_by_content_hash_unless_it_failed_or_changed(store: Any) -> None:
    store.put_document(document(A, "doc-1", content_hash="h1"))
    assert store.find_document_by_hash(A, "proj-a", "h1").id == "doc-1"
    assert store.find_document_by_hash(A, "proj-b", "h1") is None  # dedupe is per project
    assert store.find_document_by_hash(A, "proj-a", "") is None
    # A failed save is retried by saving again: it is not answered as a duplicate
    store.set_status(A, "doc-1", DocumentStatus.FAILED, "boom")
    assert store.find_document_by_hash(A, "proj-a", "h1") is None
    # and a document whose content changed is no longer found by its old hash
    store.put_document(document(A, "doc-2", content_hash="h2"))
    store.put_document(document(A, "doc-2", content_hash="h3"))
    assert store.find_document_by_hash(A, "proj-a", "h2") is None
    assert store.find_document_by_hash(A, "proj-a", "h3").id == "doc-2"


def test_adding_a_document_stores_it_unless_its_content_is_already_live_in_the_project(store: Any) -> None:
    # Given a document with content h1
    assert store.add_document(document(A, "doc-1", content_hash="h1")) is None
    # When another document with that content is added to the same project, it is not stored and
    # the first one is returned; another project, or another organization, keeps its own
    assert store.add_document(document(A, "doc-2", content_hash="h1")).id == "doc-1"
    assert store.get_document(A, "doc-2") is None
    assert store.add_document(document(A, "doc-3", "proj-b", content_hash="h1")) is None
    assert store.add_document(document(B, "doc-4", content_hash="h1")) is None
    # and a failed one does not stand for its content: the retry is stored, and then stands for it
    store.set_status(A, "doc-1", DocumentStatus.FAILED, "boom")
    assert store.add_document(document(A, "doc-5", content_hash="h1")) is None
    assert store.find_document_by_hash(A, "proj-a", "h1").id == "doc-5"
    # and neither does a deleted one
    store.delete_document(A, "doc-5")
    assert store.add_document(document(A, "doc-6", content_hash="h1")) is None
    assert store.find_document_by_hash(A, "proj-a", "h1").id == "doc-6"


@pytest.fixture(params=ADAPTERS)
def racing_store(request: pytest.FixtureRequest) -> Any:
    """The store with DynamoDB's atomic writes (moto alone does not serialise concurrent calls)."""
    if request.param == "aws":
        blobs = S3BlobStore(request.getfixturevalue("bucket"), client=request.getfixturevalue("s3"))
        return DynamoMetadataStore(request.getfixturevalue("table"),
                                   client=request.getfixturevalue("atomic_dynamodb"), blob_store=blobs)
    if request.param == "sqlite":
        return SqliteMetadataStore(request.getfixturevalue("sqlite_db"))
    return MemoryMetadataStore()


def test_of_concurrent_adds_of_one_content_exactly_one_is_stored(racing_store: Any) -> None:
    # Given eight saves of the same content racing each other (a conversation re-sent at once)
    contenders = [document(A, f"doc-{n}", content_hash="same") for n in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(racing_store.add_document, contenders))
    # Then one was stored and every other got that one back
    stored = [d.id for d, answer in zip(contenders, answers, strict=True) if answer is None]
    assert len(stored) == 1
    assert {answer.id for answer in answers if answer is not None} == set(stored)
    assert [d.id for d in racing_store.list_documents(A, "proj-a")] == stored


def test_deleting_a_document_leaves_nothing_findable(store: Any) -> None:
    doc = document(A, "doc-1", content_hash="h1")
    store.put_document(doc)
    chunks = chunks_of(doc, 3)
    store.put_chunks(A, "doc-1", chunks)
    assert store.delete_document(A, "doc-1") is True
    assert store.get_document(A, "doc-1") is None
    assert store.get_documents(A, ["doc-1"]) == []
    assert store.get_chunks(A, "doc-1") == []
    assert store.get_chunks_by_id(A, [c.id for c in chunks]) == []
    assert store.find_document_by_hash(A, "proj-a", "h1") is None
    assert store.find_latest_by_source_url(A, "proj-a", doc.source_url) is None
    assert store.list_documents(A, "proj-a") == []
    assert store.recent_documents(A, ["proj-a"], RecallFilters(), NOW, 10) == []
    assert store.delete_document(A, "doc-1") is False


def test_recent_documents_are_ready_unexpired_latest_versions_newest_first(store: Any) -> None:
    def put(doc_id: str, minutes: int, project_id: str = "proj-a", **kw: Any) -> None:
        store.put_document(document(A, doc_id, project_id, created_at=T0 + timedelta(minutes=minutes), **kw))

    put("old", 0)
    put("tagged", 10, metadata={"tags": ["Python", "sdk"]})
    put("code", 20, content_type=ContentType.CODE, metadata={"tags": ["python"]})
    put("other-project", 30, "proj-b")
    put("unlisted-project", 31, "proj-z")
    put("expired", 40, forget_after=NOW - timedelta(seconds=1))
    put("expires-now", 41, forget_after=NOW)
    put("expires-later", 50, forget_after=NOW + timedelta(days=1))
    put("queued", 60, status=DocumentStatus.QUEUED)
    put("processing", 61, status=DocumentStatus.PROCESSING)
    put("failed", 62, status=DocumentStatus.FAILED)
    put("superseded", 70, superseded_by="newest")
    put("newest", 80, updates_memory_id="superseded", metadata={"tags": ["aws", "sdk"]})
    store.put_document(document(B, "tenant-b", created_at=T0 + timedelta(minutes=90)))

    def recent(projects: tuple[str, ...] = ("proj-a",), limit: int = 20, **filters: Any) -> list[str]:
        return ids(store.recent_documents(A, list(projects), RecallFilters(**filters), NOW, limit))

    assert recent() == ["newest", "expires-later", "code", "tagged", "old"]
    assert recent(("proj-a", "proj-b")) == [
        "newest",
        "expires-later",
        "other-project",
        "code",
        "tagged",
        "old",
    ]
    assert recent(("proj-a", "proj-b"), limit=3) == ["newest", "expires-later", "other-project"]
    assert recent(limit=0) == []
    assert recent(include_superseded=True) == [
        "newest",
        "superseded",
        "expires-later",
        "code",
        "tagged",
        "old",
    ]
    assert recent(content_types=(ContentType.CODE,)) == ["code"]
    # created_after is strict: "code", created at the bound itself, is not after it
    assert recent(created_after=T0 + timedelta(minutes=20)) == ["newest", "expires-later"]
    # tags: any of them, whatever their case
    assert recent(tags=("python", "nope")) == ["code", "tagged"]
    assert recent(tags=("SDK",)) == ["newest", "tagged"]
    assert recent(tags=("nope",)) == []


def test_touching_documents_records_when_they_were_last_recalled(store: Any) -> None:
    for doc_id in ("doc-1", "doc-2"):
        store.put_document(document(A, doc_id))
    store.touch_documents(A, ["doc-1", "missing"], NOW)
    assert store.get_document(A, "doc-1").last_accessed_at == NOW
    assert store.get_document(A, "doc-2").last_accessed_at is None
    store.touch_documents(A, [], NOW)


def test_expired_documents_are_found_across_organizations_soonest_first(store: Any) -> None:
    store.put_document(document(A, "a-late", forget_after=NOW - timedelta(minutes=1)))
    store.put_document(document(B, "b-early", forget_after=NOW - timedelta(hours=1)))
    store.put_document(document(A, "a-now", forget_after=NOW))
    store.put_document(document(A, "a-future", forget_after=NOW + timedelta(seconds=1)))
    store.put_document(document(A, "a-never"))
    assert ids(store.expired_documents(NOW, 10)) == ["b-early", "a-late", "a-now"]
    due = store.expired_documents(NOW, 2)
    assert len(due) == 2 and {d.id for d in due} <= {"b-early", "a-late", "a-now"}
    assert store.expired_documents(T0, 10) == []


def test_the_latest_version_from_a_url_skips_superseded_and_failed_ones(store: Any) -> None:
    url = "https://docs.example/page"

    def put(doc_id: str, minutes: int, **kw: Any) -> None:
        store.put_document(
            document(A, doc_id, source_url=url, created_at=T0 + timedelta(minutes=minutes), **kw)
        )

    put("v1", 0, superseded_by="v2")
    put("v2", 1)
    put("v3-failed", 2, status=DocumentStatus.FAILED)
    assert store.find_latest_by_source_url(A, "proj-a", url).id == "v2"
    assert store.find_latest_by_source_url(A, "proj-b", url) is None
    assert store.find_latest_by_source_url(A, "proj-a", url + "/other") is None


def test_list_documents_returns_every_status_and_version_oldest_first(store: Any) -> None:
    org(store, A), project(store, A, "proj-a"), project(store, A, "proj-b")
    store.put_document(document(A, "b", created_at=T0 + timedelta(minutes=2), status=DocumentStatus.FAILED))
    store.put_document(document(A, "a", created_at=T0 + timedelta(minutes=1), superseded_by="b"))
    store.put_document(document(A, "c", created_at=T0 + timedelta(minutes=3), status=DocumentStatus.QUEUED))
    store.put_document(document(A, "elsewhere", "proj-b"))
    assert ids(store.list_documents(A, "proj-a")) == ["a", "b", "c"]
    assert {k: v for k, v in store.count_documents(A).items() if v} == {"proj-a": 3, "proj-b": 1}


# ----------------------------------------------------------------------------- chunks


def test_chunks_are_replaced_as_a_whole_and_read_in_index_order(store: Any) -> None:
    doc = document(A, "doc-1")
    store.put_document(doc)
    first = chunks_of(doc, 4)
    store.put_chunks(A, doc.id, list(reversed(first)))
    assert store.get_chunks(A, doc.id) == first
    # When a shorter version replaces it (twice: a redelivered job)
    second = chunks_of(doc, 2, label="v2")
    store.put_chunks(A, doc.id, second)
    store.put_chunks(A, doc.id, second)
    # Then only the new chunks are there, by document and by id
    assert store.get_chunks(A, doc.id) == second
    found = store.get_chunks_by_id(A, [c.id for c in first] + ["no-such-chunk"])
    assert sorted(found, key=lambda c: c.chunk_index) == second


def test_receipts_are_read_back_by_their_organization_only(store: Any) -> None:
    store.put_receipt(A, "receipt-1", '{"verified": true}', T0)
    assert store.get_receipt(A, "receipt-1") == '{"verified": true}'
    assert store.get_receipt(B, "receipt-1") is None
    assert store.get_receipt(A, "receipt-2") is None


def test_media_and_source_changes_are_kept_and_marked_by_url_outside_the_excluded_project(store: Any) -> None:
    from memlane.domain.models import MediaInfo

    org(store, A), org(store, B, slug="b")
    project(store, A, "proj-a"), project(store, A, "docs-a"), project(store, B, "proj-b")
    url = "https://docs.example/page"
    media = MediaInfo(kind="audio", mime="audio/mpeg", bytes=12, blob_key="media/org-a/doc-1",
                      extracted_by="transcribe", duration_s=9.5, segments=[(0, 0.0, 4.5), (30, 4.5, 9.5)])
    store.put_document(document(A, "doc-1", source_url=url, media=media))
    store.put_document(document(A, "page-1", project_id="docs-a", source_url=url))
    store.put_document(document(A, "doc-2", source_url="https://docs.example/other"))
    store.put_document(document(B, "doc-b", project_id="proj-b", source_url=url))
    assert store.get_document(A, "doc-1").media == media
    # When the page at url changed, memories of org A saved from it (not the docset's page) are marked
    assert store.mark_source_changed(A, url, NOW, exclude_project_id="docs-a") == 1
    assert store.get_document(A, "doc-1").source_changed_at == NOW
    assert store.get_document(A, "page-1").source_changed_at is None
    assert store.get_document(A, "doc-2").source_changed_at is None
    assert store.get_document(B, "doc-b").source_changed_at is None


# ----------------------------------------------------------------------------------- conversations


def test_a_conversation_reads_in_message_order_and_neighbours_stay_inside_it(store: Any) -> None:
    # Given a conversation of five messages saved out of order (index 3 first, a day apart), with a
    # queued, a superseded and an expired message of it, another conversation and a plain note saved
    # in between, and the same conversation id in another project and another organization
    org(store, A), org(store, B), project(store, A, "proj-a"), project(store, A, "proj-b")
    saves = [("m3", 3), ("m0", 0), ("m4", 4), ("m1", 1), ("m2", 2)]
    for n, (doc_id, index) in enumerate(saves):
        store.put_document(document(A, doc_id, conversation_id="chat", message_index=index,
                                    created_at=T0 + timedelta(days=n)))
        store.put_document(document(A, f"other-{n}", conversation_id="other", message_index=n,
                                    created_at=T0 + timedelta(days=n, seconds=1)))
        store.put_document(document(A, f"note-{n}", created_at=T0 + timedelta(days=n, seconds=2)))
    store.put_document(document(A, "queued", conversation_id="chat", message_index=2, status=DocumentStatus.QUEUED))
    store.put_document(document(A, "old", conversation_id="chat", message_index=1, superseded_by="m1"))
    store.put_document(document(A, "gone", conversation_id="chat", message_index=2, forget_after=NOW - timedelta(hours=1)))
    store.put_document(document(A, "elsewhere", "proj-b", conversation_id="chat", message_index=9))
    store.put_document(document(B, "theirs", conversation_id="chat", message_index=9))

    # Then the conversation reads in message order, visible messages only
    assert ids(store.conversation_documents(A, "proj-a", "chat", NOW)) == ["m0", "m1", "m2", "m3", "m4"]
    # and, for a save comparing a re-sent conversation, with the messages still being written too
    # (a failed one never: saving it again retries it)
    store.put_document(document(A, "failed", conversation_id="chat", message_index=5, status=DocumentStatus.FAILED))
    assert ids(store.conversation_documents(A, "proj-a", "chat", NOW, pending=True)) == [
        "m0", "m1", "queued", "m2", "m3", "m4"]
    assert ids(store.conversation_documents(B, "proj-a", "chat", NOW)) == ["theirs"]
    # and the next message goes after the highest index of any status (9 is another project's)
    assert store.next_message_index(A, "proj-a", "chat") == 6
    assert store.next_message_index(A, "proj-a", "new") == 0
    # and neighbours are the nearest messages of the same conversation, nearest first; a plain note
    # has none, whatever was saved a second before or after it
    around = store.conversation_around(A, ["m2", "m4", "m0", "note-2", "missing"], 2, NOW)
    assert around == {
        "m2": (["m1", "m0"], ["m3", "m4"]),
        "m4": (["m3", "m2"], []),
        "m0": ([], ["m1", "m2"]),
    }
    # and a message not visible itself (being written) still has its place
    assert store.conversation_around(A, ["queued"], 1, NOW)["queued"] == (["m1"], ["m2"])
    # and another organization sees nothing
    assert store.conversation_around(B, ["m2"], 1, NOW) == {}
    # and recall learns which of its candidates are messages of a conversation (their text entry also
    # holds their neighbours' words): of this organization's documents only
    assert store.conversation_messages(A, ["m2", "note-2", "m4", "missing", "theirs"]) == {"m2", "m4"}
    assert store.conversation_messages(B, ["m2", "theirs"]) == {"theirs"}
    assert store.conversation_messages(A, []) == set()


def test_stats_count_the_projects_set_apart_on_their_own(store: Any) -> None:
    # Given a memory project with two documents (one this week, in two versions) and a documentation
    # project with three pages (two this week), and another organization's document
    org(store, A), project(store, A, "proj-a"), project(store, A, "docs-a")
    org(store, B), project(store, B, "proj-b")
    week = NOW - timedelta(days=7)
    store.put_document(document(A, "old", created_at=T0))
    store.put_document(document(A, "new-v1", created_at=NOW, superseded_by="new-v2", content_hash="h1"))
    store.put_document(document(A, "new-v2", created_at=NOW, content_hash="h2", content="café ☕"))
    for i, when in enumerate((T0, NOW, NOW)):
        store.put_document(document(A, f"page-{i}", "docs-a", created_at=when, content_hash=f"p{i}"))
    store.put_document(document(B, "theirs", "proj-b", created_at=NOW))
    everything = [store.get_document(A, d) for d in ("old", "new-v1", "new-v2", "page-0", "page-1", "page-2")]
    size = sum(len(d.content.encode()) for d in everything if d is not None)
    # When the figures are read with the documentation project set apart
    stats = store.document_stats(A, week, apart=["docs-a"])
    # Then memories and this week count the memory project only, versions included; the pages are
    # counted apart; the storage used is every document's text
    assert (stats.total, stats.created_since, stats.apart_total) == (3, 2, 3)
    assert stats.content_bytes == size
    # and with nothing set apart, every document is a memory
    plain = store.document_stats(A, week)
    assert (plain.total, plain.created_since, plain.apart_total, plain.content_bytes) == (6, 4, 0, size)
