"""DynamoMetadataStore against moto's DynamoDB and S3: every MetadataStore method, real values."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.blob_store import S3BlobStore
from memlane.adapters.aws.metadata_store import INLINE_CONTENT_LIMIT_BYTES, DynamoMetadataStore, content_key
from memlane.domain.errors import ConflictError, InvalidInputError, PayloadTooLargeError
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

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
MakeDoc = Callable[..., Document]
MakeChunks = Callable[..., list[Chunk]]


def all_items(store: DynamoMetadataStore) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": store.table_name}
    while True:
        page = store.client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def keys_of(store: DynamoMetadataStore) -> set[tuple[str, str]]:
    return {(i["pk"]["S"], i["sk"]["S"]) for i in all_items(store)}


@pytest.fixture
def orgs(store: DynamoMetadataStore) -> tuple[Organization, Organization]:
    a = store.create_organization(
        Organization(id="org-a", name="Acme", slug="acme", created_at=T0, updated_at=T0)
    )
    b = store.create_organization(
        Organization(id="org-b", name="Beta", slug="beta", created_at=T0, updated_at=T0)
    )
    return a, b


@pytest.fixture
def projects(store: DynamoMetadataStore, orgs: tuple[Organization, Organization]) -> tuple[Project, Project]:
    a = store.create_project(
        Project(
            id="proj-a", organization_id="org-a", name="Docs", slug="docs", is_default=True, created_at=T0
        )
    )
    b = store.create_project(
        Project(id="proj-b", organization_id="org-b", name="Docs", slug="docs", created_at=T0)
    )
    return a, b


# --------------------------------------------------------------------------- organizations and keys


def test_organization_round_trip_and_slug_lookup(store: DynamoMetadataStore) -> None:
    # Given an organization
    org = Organization(id="org-1", name="Acme Corp", slug="acme", created_at=T0, updated_at=T0)
    # When it is created
    store.create_organization(org)
    # Then it is found by id and by slug, equal field by field
    assert store.get_organization("org-1") == org
    assert store.find_organization_by_slug("acme") == org
    assert store.get_organization("missing") is None
    assert store.find_organization_by_slug("missing") is None


def test_organization_slug_is_unique(store: DynamoMetadataStore) -> None:
    store.create_organization(Organization(id="org-1", name="Acme", slug="acme"))
    # When another organization takes the same slug, it is refused and nothing of it is written
    with pytest.raises(ConflictError):
        store.create_organization(Organization(id="org-2", name="Other Acme", slug="acme"))
    assert store.get_organization("org-2") is None
    assert store.find_organization_by_slug("acme").id == "org-1"  # type: ignore[union-attr]


def test_api_keys_put_find_list_revoke(store: DynamoMetadataStore, orgs: Any) -> None:
    k1 = ApiKey(id="key-1", organization_id="org-a", key_hash="h1", prefix="ml_abc", created_at=T0)
    k2 = ApiKey(
        id="key-2",
        organization_id="org-a",
        key_hash="h2",
        prefix="ml_def",
        created_at=T0 + timedelta(minutes=1),
    )
    k3 = ApiKey(id="key-3", organization_id="org-b", key_hash="h3", prefix="ml_ghi", created_at=T0)
    for key in (k2, k1, k3):
        store.put_api_key(key)

    assert store.find_api_key_by_hash("h1") == k1
    assert store.find_api_key_by_hash("nope") is None
    assert [k.id for k in store.list_api_keys("org-a")] == ["key-1", "key-2"]
    assert [k.id for k in store.list_api_keys("org-b")] == ["key-3"]
    assert sorted(k.id for k in store.list_api_keys()) == ["key-1", "key-2", "key-3"]

    # When a key is revoked (twice), the first revocation time stays
    revoked_at = T0 + timedelta(hours=1)
    assert store.revoke_api_key("key-1", revoked_at) is True
    assert store.revoke_api_key("key-1", revoked_at + timedelta(hours=1)) is True
    found = store.find_api_key_by_hash("h1")
    assert found is not None and found.revoked_at == revoked_at and not found.active
    assert store.find_api_key_by_hash("h2").active  # type: ignore[union-attr]
    assert store.revoke_api_key("no-such-key", revoked_at) is False


def test_api_key_re_put_updates_but_hash_collision_conflicts(store: DynamoMetadataStore, orgs: Any) -> None:
    store.put_api_key(ApiKey(id="key-1", organization_id="org-a", key_hash="h1", prefix="p", created_at=T0))
    store.put_api_key(
        ApiKey(
            id="key-1",
            organization_id="org-a",
            key_hash="h1",
            prefix="p",
            created_at=T0,
            rate_limit_per_minute=5,
        )
    )
    assert store.find_api_key_by_hash("h1").rate_limit_per_minute == 5  # type: ignore[union-attr]
    with pytest.raises(ConflictError):
        store.put_api_key(ApiKey(id="key-9", organization_id="org-b", key_hash="h1", prefix="p"))
    assert store.find_api_key_by_hash("h1").organization_id == "org-a"  # type: ignore[union-attr]


# --------------------------------------------------------------------------- projects


def test_projects_round_trip_and_tenant_isolation(store: DynamoMetadataStore, projects: Any) -> None:
    a, b = projects
    store.create_project(
        Project(id="proj-a2", organization_id="org-a", name="Notes", slug="notes", created_at=T0)
    )

    assert store.get_project("org-a", "proj-a") == a
    assert store.find_project_by_slug("org-a", "docs") == a
    assert store.find_project_by_slug("org-b", "docs") == b  # the same slug in another org is its own
    assert [p.id for p in store.list_projects("org-a")] == ["proj-a", "proj-a2"]
    assert [p.id for p in store.list_projects("org-b")] == ["proj-b"]
    # Org B cannot see org A's project by id
    assert store.get_project("org-b", "proj-a") is None


def test_project_slug_is_unique_within_an_org(store: DynamoMetadataStore, projects: Any) -> None:
    with pytest.raises(ConflictError):
        store.create_project(Project(id="proj-x", organization_id="org-a", name="Docs 2", slug="docs"))
    assert store.get_project("org-a", "proj-x") is None
    assert [p.id for p in store.list_projects("org-a")] == ["proj-a"]


def test_count_documents_per_project(
    store: DynamoMetadataStore, projects: Any, make_document: MakeDoc
) -> None:
    store.create_project(Project(id="proj-empty", organization_id="org-a", name="Empty", slug="empty"))
    for i in range(3):
        store.put_document(make_document("org-a", "proj-a", id=f"doc-{i}"))
    store.put_document(make_document("org-b", "proj-b", id="doc-b"))
    store.put_document(make_document("org-a", "proj-a", id="doc-0", title="re-put"))  # same id: no new doc
    assert store.count_documents("org-a") == {"proj-a": 3, "proj-empty": 0}
    assert store.count_documents("org-b") == {"proj-b": 1}


# --------------------------------------------------------------------------- documents


def test_document_round_trip_keeps_every_field(store: DynamoMetadataStore, make_document: MakeDoc) -> None:
    doc = make_document(
        "org-a",
        "proj-a",
        id="doc-1",
        forget_after=T0 + timedelta(days=30),
        last_accessed_at=T0 + timedelta(minutes=5),
        updates_memory_id="doc-0",
        status_reason="embedded",
        chunk_count=4,
    )
    store.put_document(doc)
    loaded = store.get_document("org-a", "doc-1")
    assert loaded == doc
    assert loaded is not None and loaded.metadata == {
        "tags": ["aws", "retries"],
        "score": 0.75,
        "nested": {"depth": 2},
    }
    # Stored as the schema says: fixed-width ISO UTC strings, JSON metadata, GSI keys set
    raw = store.client.get_item(
        TableName=store.table_name, Key={"pk": {"S": "ORG#org-a#DOC#doc-1"}, "sk": {"S": "DOC"}}
    )
    item = raw["Item"]
    assert item["created_at"] == {"S": "2025-03-01T12:00:00.000000+00:00"}
    assert item["metadata"]["S"].startswith("{")
    assert item["gsi1pk"] == {"S": "ORG#org-a#PROJECT#proj-a"}
    assert item["gsi1sk"] == {"S": "2025-03-01T12:00:00.000000+00:00#doc-1"}
    assert item["gsi2pk"]["S"] == f"FORGET#{ks.forget_shard('doc-1')}"
    assert item["tags"] == {"L": [{"S": "aws"}, {"S": "retries"}]}


def test_put_document_is_idempotent_and_overwrites(
    store: DynamoMetadataStore, projects: Any, make_document: MakeDoc
) -> None:
    doc = make_document("org-a", "proj-a", id="doc-1")
    store.put_document(doc)
    store.put_document(doc)  # a redelivered message
    updated = doc.model_copy(update={"title": "Retry policies, revised", "status": DocumentStatus.FAILED})
    store.put_document(updated)
    assert store.get_document("org-a", "doc-1") == updated
    assert store.count_documents("org-a") == {"proj-a": 1}


def test_documents_are_invisible_to_other_tenants(
    store: DynamoMetadataStore, make_document: MakeDoc, make_chunks: MakeChunks
) -> None:
    # Given org A's document with chunks
    doc = make_document("org-a", "proj-a", id="doc-1", content_hash="h-1")
    store.put_document(doc)
    chunks = make_chunks(doc, 2)
    store.put_chunks("org-a", "doc-1", chunks)
    before = keys_of(store)

    # When org B asks for it by every path, it gets the answer for "does not exist"
    assert store.get_document("org-b", "doc-1") is None
    assert store.get_documents("org-b", ["doc-1"]) == []
    assert store.find_document_by_hash("org-b", "proj-a", "h-1") is None
    assert store.get_chunks("org-b", "doc-1") == []
    assert store.get_chunks_by_id("org-b", [c.id for c in chunks]) == []
    assert store.recent_documents("org-b", ["proj-a"], RecallFilters(), T0 + timedelta(days=1), 10) == []
    assert store.delete_document("org-b", "doc-1") is False
    store.set_status("org-b", "doc-1", DocumentStatus.FAILED, "hijack")
    store.touch_documents("org-b", ["doc-1"], T0)

    # Then org A's document is untouched and no item was created for org B
    assert store.get_document("org-a", "doc-1") == doc
    assert keys_of(store) == before


def test_find_document_by_hash_follows_content_changes(
    store: DynamoMetadataStore, make_document: MakeDoc
) -> None:
    doc = make_document("org-a", "proj-a", id="doc-1", content_hash="sha-old")
    store.put_document(doc)
    assert store.find_document_by_hash("org-a", "proj-a", "sha-old") == doc
    assert store.find_document_by_hash("org-a", "proj-other", "sha-old") is None

    # When the content changes, the old hash no longer dedupes to it and the new one does
    changed = doc.model_copy(update={"content": "new text", "content_hash": "sha-new"})
    store.put_document(changed)
    assert store.find_document_by_hash("org-a", "proj-a", "sha-old") is None
    assert store.find_document_by_hash("org-a", "proj-a", "sha-new") == changed
    assert ("ORG#org-a#PROJECT#proj-a#HASH#sha-old", "HASH") not in keys_of(store)


def test_set_status_sets_and_clears_reason(store: DynamoMetadataStore, make_document: MakeDoc) -> None:
    store.put_document(make_document("org-a", "proj-a", id="doc-1", status=DocumentStatus.QUEUED))
    store.set_status("org-a", "doc-1", DocumentStatus.FAILED, "embedding API unavailable")
    doc = store.get_document("org-a", "doc-1")
    assert doc is not None and (doc.status, doc.status_reason) == (
        DocumentStatus.FAILED,
        "embedding API unavailable",
    )
    store.set_status("org-a", "doc-1", DocumentStatus.READY)
    doc = store.get_document("org-a", "doc-1")
    assert doc is not None and (doc.status, doc.status_reason) == (DocumentStatus.READY, None)
    # A missing document is a no-op, not a new item
    store.set_status("org-a", "doc-missing", DocumentStatus.READY)
    assert ("ORG#org-a#DOC#doc-missing", "DOC") not in keys_of(store)


def test_delete_document_removes_item_chunks_refs_hash_and_blob(
    store: DynamoMetadataStore, make_document: MakeDoc, make_chunks: MakeChunks, blob_store: S3BlobStore
) -> None:
    big = make_document("org-a", "proj-a", id="doc-1", content="x" * 150_000, content_hash="sha-1")
    keep = make_document("org-a", "proj-a", id="doc-2", content_hash="sha-2")
    store.put_document(big)
    store.put_document(keep)
    store.put_chunks("org-a", "doc-1", make_chunks(big, 30))
    store.put_chunks("org-a", "doc-2", make_chunks(keep, 2))

    assert store.delete_document("org-a", "doc-1") is True

    remaining = keys_of(store)
    assert not any(pk.startswith("ORG#org-a#DOC#doc-1") for pk, _ in remaining)
    assert not any(
        pk.startswith("ORG#org-a#CHUNK#") and sk == "CHUNKREF" for pk, sk in remaining if "doc-1" in pk
    )
    refs_left = {pk for pk, sk in remaining if sk == "CHUNKREF"}
    assert refs_left == {f"ORG#org-a#CHUNK#{chunk_id_for('doc-2', i)}" for i in range(2)}
    assert ("ORG#org-a#PROJECT#proj-a#HASH#sha-1", "HASH") not in remaining
    assert blob_store.get(content_key("org-a", "doc-1")) is None
    assert store.get_document("org-a", "doc-1") is None
    assert store.find_document_by_hash("org-a", "proj-a", "sha-1") is None
    # The other document is intact, and deleting again says "not found"
    assert len(store.get_chunks("org-a", "doc-2")) == 2
    assert store.delete_document("org-a", "doc-1") is False


def test_large_content_round_trips_through_s3(
    store: DynamoMetadataStore, make_document: MakeDoc, blob_store: S3BlobStore
) -> None:
    # Given content over the inline limit in bytes (60,000 three-byte characters = 180 KB)
    content = "€" * 60_000
    doc = make_document("org-a", "proj-a", id="doc-big", content=content)
    store.put_document(doc)

    item = store.client.get_item(
        TableName=store.table_name, Key={"pk": {"S": "ORG#org-a#DOC#doc-big"}, "sk": {"S": "DOC"}}
    )["Item"]
    assert "content" not in item
    assert item["content_key"] == {"S": "content/org-a/doc-big.txt"}
    assert blob_store.get("content/org-a/doc-big.txt") == content.encode("utf-8")
    # Then every read path brings the content back
    assert store.get_document("org-a", "doc-big") == doc
    assert store.get_documents("org-a", ["doc-big"]) == [doc]
    assert store.recent_documents("org-a", ["proj-a"], RecallFilters(), T0 + timedelta(days=1), 5) == [doc]

    # When the document shrinks below the limit, the blob is removed and content is inline again
    small = doc.model_copy(update={"content": "short now"})
    store.put_document(small)
    assert blob_store.get("content/org-a/doc-big.txt") is None
    assert store.get_document("org-a", "doc-big") == small


def test_content_at_the_limit_stays_inline(store: DynamoMetadataStore, make_document: MakeDoc) -> None:
    doc = make_document("org-a", "proj-a", id="doc-edge", content="a" * INLINE_CONTENT_LIMIT_BYTES)
    store.put_document(doc)
    item = store.client.get_item(
        TableName=store.table_name, Key={"pk": {"S": "ORG#org-a#DOC#doc-edge"}, "sk": {"S": "DOC"}}
    )["Item"]
    assert len(item["content"]["S"]) == INLINE_CONTENT_LIMIT_BYTES
    assert store.get_document("org-a", "doc-edge") == doc


def test_large_content_without_blob_store_is_refused(dynamodb: Any, make_document: MakeDoc) -> None:
    store = DynamoMetadataStore("memlane-test", client=dynamodb)
    with pytest.raises(PayloadTooLargeError):
        store.put_document(make_document("org-a", "proj-a", id="doc-big", content="x" * 200_000))
    assert store.get_document("org-a", "doc-big") is None


def test_get_documents_keeps_order_and_skips_missing(
    store: DynamoMetadataStore, make_document: MakeDoc
) -> None:
    for i in range(120):  # more than one BatchGetItem (100 keys)
        store.put_document(make_document("org-a", "proj-a", id=f"doc-{i:03d}"))
    wanted = [f"doc-{i:03d}" for i in (119, 3, 57)] + ["doc-missing"] + [f"doc-{i:03d}" for i in range(100)]
    docs = store.get_documents("org-a", wanted)
    assert [d.id for d in docs] == [w for w in dict.fromkeys(wanted) if w != "doc-missing"]


def test_recent_documents_filters_and_orders(store: DynamoMetadataStore, make_document: MakeDoc) -> None:
    now = T0 + timedelta(days=10)

    def put(doc_id: str, minutes: int, **kw: Any) -> None:
        store.put_document(
            make_document(
                "org-a",
                kw.pop("project", "proj-a"),
                id=doc_id,
                created_at=T0 + timedelta(minutes=minutes),
                **kw,
            )
        )

    put("old", 0)
    put("md-aws", 10, metadata={"tags": ["aws"]})
    put("code-py", 20, content_type=ContentType.CODE, metadata={"tags": ["python"]})
    put("other-project", 30, project="proj-2")
    put("expired", 40, forget_after=now - timedelta(seconds=1))
    put("expires-later", 50, forget_after=now + timedelta(days=1))
    put("expires-exactly-now", 55, forget_after=now)
    put("queued", 60, status=DocumentStatus.QUEUED)
    put("failed", 70, status=DocumentStatus.FAILED)
    put("newest", 80, metadata={"tags": ["python", "aws"]})
    store.put_document(make_document("org-b", "proj-a", id="tenant-b", created_at=T0 + timedelta(minutes=90)))

    def ids(projects: list[str], filters: RecallFilters | None = None, limit: int = 20) -> list[str]:
        docs = store.recent_documents("org-a", projects, filters or RecallFilters(), now, limit)
        return [d.id for d in docs]

    # Only ready, unexpired documents of the asked projects, newest first
    assert ids(["proj-a"]) == ["newest", "expires-later", "code-py", "md-aws", "old"]
    assert ids(["proj-a", "proj-2"]) == [
        "newest",
        "expires-later",
        "other-project",
        "code-py",
        "md-aws",
        "old",
    ]
    assert ids(["proj-a", "proj-2"], limit=3) == ["newest", "expires-later", "other-project"]
    # Content types, created_after (strict), tags (any of)
    assert ids(["proj-a"], RecallFilters(content_types=(ContentType.CODE,))) == ["code-py"]
    assert ids(["proj-a"], RecallFilters(created_after=T0 + timedelta(minutes=20))) == [
        "newest",
        "expires-later",
    ]
    # ("old" and "expires-later" carry the factory's default tags: aws, retries)
    assert ids(["proj-a"], RecallFilters(tags=("aws",))) == ["newest", "expires-later", "md-aws", "old"]
    assert ids(["proj-a"], RecallFilters(tags=("python", "nope"))) == ["newest", "code-py"]
    assert ids(["proj-a"], RecallFilters(tags=tuple(f"t{i}" for i in range(200)) + ("python",))) == [
        "newest",
        "code-py",
    ]
    assert ids(["proj-a"], limit=0) == []


def test_recent_documents_paginates_past_filtered_items(
    store: DynamoMetadataStore, make_document: MakeDoc
) -> None:
    # Given 20 ready documents under 110 newer queued ones (more than two query pages)
    for i in range(20):
        store.put_document(
            make_document("org-a", "proj-a", id=f"ready-{i:02d}", created_at=T0 + timedelta(seconds=i))
        )
    for i in range(110):
        store.put_document(
            make_document(
                "org-a",
                "proj-a",
                id=f"queued-{i:03d}",
                created_at=T0 + timedelta(hours=1, seconds=i),
                status=DocumentStatus.QUEUED,
            )
        )
    docs = store.recent_documents("org-a", ["proj-a"], RecallFilters(), T0 + timedelta(days=1), 5)
    assert [d.id for d in docs] == ["ready-19", "ready-18", "ready-17", "ready-16", "ready-15"]


def test_touch_documents_sets_last_accessed(store: DynamoMetadataStore, make_document: MakeDoc) -> None:
    store.put_document(make_document("org-a", "proj-a", id="doc-1"))
    store.put_document(make_document("org-a", "proj-a", id="doc-2"))
    when = T0 + timedelta(hours=3)
    store.touch_documents("org-a", ["doc-1", "doc-missing", "doc-1"], when)
    assert store.get_document("org-a", "doc-1").last_accessed_at == when  # type: ignore[union-attr]
    assert store.get_document("org-a", "doc-2").last_accessed_at is None  # type: ignore[union-attr]
    assert ("ORG#org-a#DOC#doc-missing", "DOC") not in keys_of(store)


def test_expired_documents_lists_due_ones_across_tenants(
    store: DynamoMetadataStore, make_document: MakeDoc
) -> None:
    now = T0 + timedelta(days=1)
    store.put_document(make_document("org-a", "proj-a", id="due-a", forget_after=now - timedelta(hours=1)))
    store.put_document(make_document("org-b", "proj-b", id="due-b", forget_after=now))
    store.put_document(make_document("org-a", "proj-a", id="later", forget_after=now + timedelta(hours=1)))
    store.put_document(make_document("org-a", "proj-a", id="never"))
    due = store.expired_documents(now)
    assert sorted((d.organization_id, d.id) for d in due) == [("org-a", "due-a"), ("org-b", "due-b")]
    assert [d.id for d in due] == ["due-a", "due-b"]  # soonest forget_after first, whole documents
    assert due[0].content == "Exponential backoff with jitter spreads retries over time."
    assert len(store.expired_documents(now, limit=1)) == 1


# --------------------------------------------------------------------------- chunks


def test_chunks_round_trip_in_index_order(
    store: DynamoMetadataStore, make_document: MakeDoc, make_chunks: MakeChunks
) -> None:
    doc = make_document("org-a", "proj-a", id="doc-1", forget_after=T0 + timedelta(days=7))
    chunks = make_chunks(doc, 30)  # more than one BatchWriteItem (25 requests)
    store.put_chunks("org-a", "doc-1", list(reversed(chunks)))
    assert store.get_chunks("org-a", "doc-1") == chunks

    wanted = [chunks[7].id, "missing", chunks[2].id, chunks[29].id]
    assert store.get_chunks_by_id("org-a", wanted) == [chunks[7], chunks[2], chunks[29]]


def test_put_chunks_replaces_a_longer_earlier_version(
    store: DynamoMetadataStore, make_document: MakeDoc, make_chunks: MakeChunks
) -> None:
    doc = make_document("org-a", "proj-a", id="doc-1")
    store.put_chunks("org-a", "doc-1", make_chunks(doc, 5))
    shorter = make_chunks(doc.model_copy(update={"title": "Rewritten"}), 2)
    store.put_chunks("org-a", "doc-1", shorter)
    store.put_chunks("org-a", "doc-1", shorter)  # idempotent
    assert store.get_chunks("org-a", "doc-1") == shorter
    assert store.get_chunks_by_id("org-a", [chunk_id_for("doc-1", 4)]) == []
    refs = {pk for pk, sk in keys_of(store) if sk == "CHUNKREF"}
    assert refs == {f"ORG#org-a#CHUNK#{c.id}" for c in shorter}


def test_put_chunks_rejects_foreign_or_duplicate_chunks(
    store: DynamoMetadataStore, make_document: MakeDoc, make_chunks: MakeChunks
) -> None:
    doc = make_document("org-a", "proj-a", id="doc-1")
    with pytest.raises(InvalidInputError):
        store.put_chunks("org-b", "doc-1", make_chunks(doc, 1))
    chunk = make_chunks(doc, 1)[0]
    with pytest.raises(InvalidInputError):
        store.put_chunks("org-a", "doc-1", [chunk, chunk])
    assert store.get_chunks("org-a", "doc-1") == []


# --------------------------------------------------------------------------- lifecycle reads (port methods)


def test_status_updates_of_a_large_document_do_not_rewrite_its_blob(
    store: DynamoMetadataStore, make_document: MakeDoc, s3: Any
) -> None:
    text = "x" * (INLINE_CONTENT_LIMIT_BYTES + 1)
    doc = make_document("org-a", "proj-a", id="big", content=text, content_hash="hash-big")
    store.put_document(doc)
    first = s3.head_object(Bucket="memlane-test-content", Key=content_key("org-a", "big"))["ETag"]
    puts: list[str] = []
    original = store.blob_store.put
    store.blob_store.put = lambda key, data: (puts.append(key), original(key, data))  # type: ignore[method-assign]
    # a summary or status change keeps the content: no second upload
    store.put_document(doc.model_copy(update={"summary": "new", "status": DocumentStatus.READY}))
    assert puts == []
    assert store.get_document("org-a", "big").content == text
    # changed content is uploaded again
    store.put_document(doc.model_copy(update={"content": text + "y", "content_hash": "hash-big-2"}))
    assert puts == [content_key("org-a", "big")]
    assert s3.head_object(Bucket="memlane-test-content", Key=content_key("org-a", "big"))["ETag"] != first


def test_find_latest_by_source_url_skips_superseded_and_failed_versions(
    store: DynamoMetadataStore, make_document: MakeDoc
) -> None:
    url = "https://docs.example.com/retries"
    store.put_document(make_document("org-a", "proj-a", id="v1", source_url=url, superseded_by="v2"))
    store.put_document(make_document("org-a", "proj-a", id="v2", source_url=url, created_at=T0 + timedelta(1)))
    store.put_document(make_document("org-a", "proj-a", id="v3", source_url=url, created_at=T0 + timedelta(2),
                                     status=DocumentStatus.FAILED))
    store.put_document(make_document("org-a", "proj-a", id="other", source_url="https://docs.example.com/x",
                                     created_at=T0 + timedelta(3)))
    assert store.find_latest_by_source_url("org-a", "proj-a", url).id == "v2"
    assert store.find_latest_by_source_url("org-b", "proj-a", url) is None
    assert store.find_latest_by_source_url("org-a", "proj-a", "https://nowhere.example.com/") is None


def test_list_documents_and_forgotten_records(store: DynamoMetadataStore, make_document: MakeDoc) -> None:
    for i, status in enumerate((DocumentStatus.READY, DocumentStatus.QUEUED, DocumentStatus.FAILED)):
        store.put_document(make_document("org-a", "proj-a", id=f"d{i}", status=status,
                                         created_at=T0 + timedelta(minutes=i)))
    store.put_document(make_document("org-a", "proj-b", id="elsewhere"))
    assert [d.id for d in store.list_documents("org-a", "proj-a")] == ["d0", "d1", "d2"]
    store.record_forgotten(store.get_document("org-a", "d0"), T0 + timedelta(days=1), "forget_after reached")
    assert store.list_forgotten("org-a") == [{"document_id": "d0", "project_id": "proj-a",
                                              "forgotten_at": "2025-03-02T12:00:00.000000+00:00",
                                              "reason": "forget_after reached"}]
    assert store.list_forgotten("org-b") == []
