"""The metadata store methods behind the web app's routes, run against both adapters, SQLite (the
embedded default) and DynamoDB (moto), and the in-memory fake of tests/memory_stores.py. Same
inputs, same answers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlane.adapters.aws.metadata_store import INLINE_CONTENT_LIMIT_BYTES
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.errors import ConflictError, InvalidInputError
from memlane.domain.models import ApiKey, Document, Organization, Project
from memlane.ports import MetadataStore

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "dynamodb", "memory"])
def any_store(request, tmp_path) -> MetadataStore:
    if request.param == "sqlite":
        return SqliteMetadataStore(SqliteDatabase(tmp_path / "meta.db"))
    if request.param == "memory":
        from memory_stores import MemoryMetadataStore

        return MemoryMetadataStore()
    return request.getfixturevalue("store")


@pytest.fixture
def two_orgs(any_store: MetadataStore) -> tuple[Project, Project]:
    for org_id, slug in (("org-a", "acme"), ("org-b", "beta")):
        any_store.create_organization(Organization(id=org_id, name=slug, slug=slug, created_at=T0, updated_at=T0))
    a = any_store.create_project(Project(id="proj-a", organization_id="org-a", name="Docs", slug="docs",
                                         is_default=True, created_at=T0))
    b = any_store.create_project(Project(id="proj-b", organization_id="org-b", name="Docs", slug="docs",
                                         created_at=T0))
    return a, b


def test_a_key_that_manages_keys_keeps_that_right_through_the_store(any_store, two_orgs) -> None:
    # Given two keys of one organization, one allowed to manage keys
    for key_id, manages in (("k-admin", True), ("k-plain", False)):
        any_store.put_api_key(ApiKey(id=key_id, organization_id="org-a", key_hash=f"hash-{key_id}",
                                     prefix=f"mlk_{key_id}", created_at=T0, can_manage_keys=manages))
    # When they are read back by hash and listed
    # Then each keeps its right
    assert any_store.find_api_key_by_hash("hash-k-admin").can_manage_keys is True
    assert any_store.find_api_key_by_hash("hash-k-plain").can_manage_keys is False
    assert {k.id: k.can_manage_keys for k in any_store.list_api_keys("org-a")} == {"k-admin": True,
                                                                                     "k-plain": False}


def test_a_renamed_project_moves_its_slug_and_frees_the_old_one(any_store, two_orgs) -> None:
    # Given a project "Docs" (slug docs) and another "Notes"
    any_store.create_project(Project(id="proj-n", organization_id="org-a", name="Notes", slug="notes",
                                     created_at=T0))
    project = any_store.get_project("org-a", "proj-a")
    # When it is renamed to "Guides" with a description
    any_store.update_project(project.model_copy(update={"name": "Guides", "slug": "guides",
                                                        "description": "how-tos", "updated_at": T0}))
    # Then it is found by its new slug only, with the new fields
    assert any_store.find_project_by_slug("org-a", "guides").description == "how-tos"
    assert any_store.find_project_by_slug("org-a", "docs") is None
    # and the freed slug can be taken again, while a taken one is a conflict
    any_store.create_project(Project(id="proj-d2", organization_id="org-a", name="Docs", slug="docs", created_at=T0))
    renamed = any_store.get_project("org-a", "proj-a")
    with pytest.raises(ConflictError):
        any_store.update_project(renamed.model_copy(update={"name": "Notes", "slug": "notes"}))
    assert any_store.get_project("org-a", "proj-a").slug == "guides"
    # and the other organization's project of the same slug was never touched
    assert any_store.get_project("org-b", "proj-b").name == "Docs"


def test_deleting_a_project_removes_it_and_its_slug_only_in_its_organization(any_store, two_orgs) -> None:
    # Given projects of the same slug in two organizations
    # When one organization deletes its project (and the other tries to delete it by id)
    assert any_store.delete_project("org-b", "proj-a") is False
    assert any_store.delete_project("org-a", "proj-a") is True
    # Then only that one is gone, and deleting it again finds nothing
    assert any_store.get_project("org-a", "proj-a") is None
    assert any_store.find_project_by_slug("org-a", "docs") is None
    assert any_store.get_project("org-b", "proj-b") is not None
    assert any_store.delete_project("org-a", "proj-a") is False


def _docs(store: MetadataStore, make_document: Callable[..., Document], n: int, **fields: Any) -> list[Document]:
    docs = []
    for i in range(n):
        doc = make_document("org-a", "proj-a", id=f"doc-{i:02d}", content_hash=f"h{i}",
                            created_at=T0 + timedelta(minutes=i), **fields)
        store.put_document(doc)
        docs.append(doc)
    return docs


def test_pages_of_a_project_are_newest_first_without_gaps_or_repeats(any_store, two_orgs, make_document) -> None:
    # Given 7 documents, one superseded, one expired, one of another organization
    docs = _docs(any_store, make_document, 7)
    any_store.put_document(docs[3].model_copy(update={"superseded_by": docs[6].id}))
    any_store.put_document(docs[5].model_copy(update={"forget_after": T0 + timedelta(days=1)}))
    any_store.put_document(make_document("org-b", "proj-b", id="doc-other", content_hash="x", created_at=T0))
    now = T0 + timedelta(days=2)
    # When they are paged through two at a time
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = any_store.page_documents("org-a", "proj-a", now, limit=2, cursor=cursor)
        seen.extend(d.id for d in page.documents)
        pages += 1
        assert all(d.content == "" for d in page.documents)  # listings carry no content
        cursor = page.next_cursor
        if cursor is None:
            break
    # Then every visible latest version appears once, newest first
    assert seen == ["doc-06", "doc-04", "doc-02", "doc-01", "doc-00"]
    assert pages == 3
    # and with versions, the superseded one is listed too
    with_versions = any_store.page_documents("org-a", "proj-a", now, limit=10, include_superseded=True)
    assert [d.id for d in with_versions.documents] == ["doc-06", "doc-04", "doc-03", "doc-02", "doc-01", "doc-00"]
    assert with_versions.next_cursor is None


def test_a_cursor_that_the_store_did_not_issue_is_a_400_naming_cursor(any_store, two_orgs) -> None:
    with pytest.raises(InvalidInputError) as err:
        any_store.page_documents("org-a", "proj-a", T0, limit=2, cursor="not-a-cursor!")
    assert err.value.field == "cursor"


def test_document_stats_count_this_week_and_the_bytes_of_the_text(any_store, two_orgs, make_document) -> None:
    # Given two old documents, one recent with non-ASCII text, one large (in S3 on DynamoDB),
    # and one of another organization
    _docs(any_store, make_document, 2)
    any_store.put_document(make_document("org-a", "proj-a", id="doc-new", content_hash="n", content="café ☕",
                                         created_at=T0 + timedelta(days=30)))
    large = "x" * (INLINE_CONTENT_LIMIT_BYTES + 10)
    any_store.put_document(make_document("org-a", "proj-a", id="doc-big", content_hash="b", content=large,
                                         created_at=T0 + timedelta(days=31)))
    any_store.put_document(make_document("org-b", "proj-b", id="doc-b", content_hash="o", created_at=T0))
    # When the stats since day 29 are read
    stats = any_store.document_stats("org-a", T0 + timedelta(days=29))
    # Then they count this organization's documents, the recent ones, and UTF-8 bytes
    base = len(make_document("org-a", "proj-a").content.encode())
    assert (stats.total, stats.created_since) == (4, 2)
    assert stats.content_bytes == 2 * base + len("café ☕".encode()) + len(large)


def test_the_forgotten_log_returns_the_newest_records_when_limited(any_store, two_orgs, make_document) -> None:
    docs = _docs(any_store, make_document, 3)
    for i, doc in enumerate(docs):
        any_store.record_forgotten(doc, T0 + timedelta(hours=i), "forget_after reached")
    assert [r["document_id"] for r in any_store.list_forgotten("org-a")] == ["doc-00", "doc-01", "doc-02"]
    assert [r["document_id"] for r in any_store.list_forgotten("org-a", 2)] == ["doc-01", "doc-02"]
    assert any_store.list_forgotten("org-b", 2) == []
