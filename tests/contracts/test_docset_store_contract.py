"""The DocsetStore contract: the same behaviour from the embedded default (SQLite), from AWS
(DynamoDB on moto) and from the in-memory fake, case by case. The SQLite store is the reference;
a case that passes for one and not another is a bug in the other. (DynamoDB's own queue keys are
checked in tests/aws/test_aws_docset_store.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from memory_stores import MemoryDocsetStore, MemoryMetadataStore

from memlane.adapters.aws.docset_store import DynamoDocsetStore
from memlane.adapters.aws.metadata_store import DynamoMetadataStore
from memlane.adapters.local.docset_store import SqliteDocsetStore
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.domain.docsets import ClientSession, Docset, DocsetPage, PageCounts, PageStatus, page_id_for
from memlane.domain.models import Organization, Project

pytestmark = pytest.mark.integration
ADAPTERS = ["sqlite", "aws", "memory"]  # the fixtures they need are in tests/contracts/conftest.py

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
ORG = "org-a"
OTHER_ORG = "org-b"
SITE = "https://d.example/docs/"


@dataclass
class Stores:
    docsets: Any  # SqliteDocsetStore | DynamoDocsetStore | MemoryDocsetStore
    metadata: Any
    project: Project


def _with_orgs(metadata: Any) -> Project:
    for org in (ORG, OTHER_ORG):
        metadata.create_organization(Organization(id=org, name=org, slug=org, created_at=T0, updated_at=T0))
    return metadata.create_project(Project(organization_id=ORG, name="Docs", slug="docs-1"))


@pytest.fixture(params=ADAPTERS)
def stores(request: pytest.FixtureRequest) -> Iterator[Stores]:
    if request.param == "sqlite":
        db = request.getfixturevalue("sqlite_db")
        metadata: Any = SqliteMetadataStore(db)
        yield Stores(SqliteDocsetStore(db), metadata, _with_orgs(metadata))
    elif request.param == "aws":
        table = request.getfixturevalue("table")
        metadata = DynamoMetadataStore(table, client=request.getfixturevalue("dynamodb"))
        docsets = DynamoDocsetStore(table, client=request.getfixturevalue("atomic_dynamodb"))
        yield Stores(docsets, metadata, _with_orgs(metadata))
    else:
        metadata = MemoryMetadataStore()
        yield Stores(MemoryDocsetStore(metadata), metadata, _with_orgs(metadata))


def new_docset(s: Stores, **overrides: Any) -> Docset:
    fields: dict[str, Any] = {
        "organization_id": ORG,
        "project_id": s.project.id,
        "name": "Docs",
        "base_url": "https://d.example/",
        "seed_url": SITE,
        "seed_slug": "/docs/",
        "allowed_paths": ["/docs"],
        "max_pages": 5,
        "created_at": 1,
        "updated_at": 1,
    }
    return s.docsets.create_docset(Docset(**{**fields, **overrides}))


def urls(*names: str) -> list[str]:
    return [f"{SITE}{n}" for n in names]


def finish(s: Stores, page: DocsetPage, **update: Any) -> None:
    s.docsets.save_page(page.model_copy(update={"retry_at": None, **update}))


# ----------------------------------------------------------------------------- docsets


def test_docsets_are_read_listed_and_updated_within_their_organization(stores: Stores) -> None:
    # Given two docsets of one organization and one of another
    first = new_docset(stores, created_at=10)
    second = new_docset(stores, name="More", allowed_paths=[], created_at=20)
    theirs = new_docset(stores, organization_id=OTHER_ORG, created_at=15)
    # Then each is read back as written, and only by its own organization
    assert stores.docsets.get_docset(ORG, first.id) == first
    assert stores.docsets.get_docset(ORG, second.id).allowed_paths == []
    assert stores.docsets.get_docset(OTHER_ORG, first.id) is None
    assert [d.id for d in stores.docsets.list_docsets(ORG)] == [first.id, second.id]
    assert [d.id for d in stores.docsets.list_docsets()] == [first.id, theirs.id, second.id]
    # When a refresh records its time
    stores.docsets.update_docset(first.model_copy(update={"updated_at": 99, "last_refreshed_at": 98}))
    # Then the name and refresh times change
    again = stores.docsets.get_docset(ORG, first.id)
    assert (again.updated_at, again.last_refreshed_at, again.created_at) == (99, 98, 10)


def test_deleting_a_docset_removes_its_pages_and_its_project(stores: Stores) -> None:
    # Given a docset with two pages
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("a", "b"), now=1)
    page = stores.docsets.list_pages(docset.id, limit=1)[0][0]
    # When another organization tries to delete it, then its own does
    assert stores.docsets.delete_docset(OTHER_ORG, docset.id) is False
    assert stores.docsets.delete_docset(ORG, docset.id) is True
    # Then the docset, its pages and its project are gone, and a late save does not bring a page back
    assert stores.docsets.get_docset(ORG, docset.id) is None
    assert stores.docsets.list_pages(docset.id) == ([], 0)
    assert stores.metadata.get_project(ORG, stores.project.id) is None
    stores.docsets.save_page(page.model_copy(update={"status": PageStatus.INDEXED}))
    assert stores.docsets.get_page(docset.id, page.id) is None
    assert stores.docsets.delete_docset(ORG, docset.id) is False


# ----------------------------------------------------------------------------- pages


def test_pages_are_queued_once_and_capped_per_docset(stores: Stores) -> None:
    docset = new_docset(stores)
    # When the same URLs are added twice, then more than the cap
    assert stores.docsets.add_pages(docset, urls("p0", "p1", "p2", "p0"), now=1) == urls("p0", "p1", "p2")
    assert stores.docsets.add_pages(docset, urls("p1", "p3", "p4", "p5"), now=2) == urls("p3", "p4")
    assert stores.docsets.add_pages(docset, urls("p6"), now=3) == []
    # Then the docset holds each URL once, as a due pending page
    pages, total = stores.docsets.list_pages(docset.id)
    assert total == 5 and [p.url for p in pages] == urls("p0", "p1", "p2", "p3", "p4")
    first = pages[0]
    assert (first.id, first.path, first.status, first.retry_at) == (
        page_id_for(docset.id, urls("p0")[0]),
        "/docs/p0",
        PageStatus.PENDING,
        1,
    )
    # and insert_page adds a page as given, once
    extra = first.model_copy(update={"id": page_id_for(docset.id, f"{SITE}x"), "url": f"{SITE}x"})
    assert stores.docsets.insert_page(extra) is True
    assert stores.docsets.insert_page(extra) is False
    assert sorted(stores.docsets.page_ids(docset.id)) == sorted((p.id, None) for p in [*pages, extra])


def test_a_page_is_claimed_exactly_once_even_when_claimed_concurrently(stores: Stores) -> None:
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("a", "b"), now=1)
    a, b = (page_id_for(docset.id, u) for u in urls("a", "b"))
    # When page a is claimed twice
    claimed = stores.docsets.claim_page(docset.id, a, now=5)
    assert claimed is not None and stores.docsets.claim_page(docset.id, a, now=6) is None
    # Then the first claim holds it
    assert (claimed.status, claimed.claimed_at, claimed.attempts, claimed.retry_at) == (
        PageStatus.PROCESSING,
        5,
        1,
        None,
    )
    assert stores.docsets.get_page(docset.id, a) == claimed
    # When eight workers claim page b at the same moment, exactly one gets it
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: stores.docsets.claim_page(docset.id, b, 7), range(8)))
    assert sum(r is not None for r in results) == 1
    # and a page that is done, or unknown, is not claimed
    finish(stores, claimed, status=PageStatus.INDEXED)
    assert stores.docsets.claim_page(docset.id, a, now=8) is None
    assert stores.docsets.claim_page(docset.id, "no-such-page", now=8) is None


def test_a_text_joins_the_set_only_at_the_version_it_was_judged_against(stores: Stores) -> None:
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("print", "intro", "other"), now=1)
    printed, intro, other = (page_id_for(docset.id, u) for u in urls("print", "intro", "other"))
    assert stores.docsets.text_version(docset.id) == 0
    # When the print page joins at version 0, a chapter judged against version 0 too is refused
    assert stores.docsets.register_text(docset.id, printed, [1, 2, 3], expected_version=0) is True
    assert stores.docsets.register_text(docset.id, intro, [2, 3], expected_version=0) is False
    # Then only the print page's sketch is stored, and the version says one text joined
    assert stores.docsets.get_page(docset.id, printed).sketch == [1, 2, 3]
    assert stores.docsets.get_page(docset.id, intro).sketch is None
    assert stores.docsets.text_version(docset.id) == 1
    # and the chapter, judged again at version 1, joins
    assert stores.docsets.register_text(docset.id, intro, [2, 3], expected_version=1) is True
    assert stores.docsets.get_page(docset.id, intro).sketch == [2, 3]
    # When eight workers register at the same version at the same moment, exactly one joins
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: stores.docsets.register_text(docset.id, other, [i], 2), range(8)))
    assert sum(results) == 1 and stores.docsets.text_version(docset.id) == 3
    # A page deleted meanwhile has nothing to register: no record comes back for it
    stores.docsets.delete_page(docset.id, other)
    version = stores.docsets.text_version(docset.id)
    assert stores.docsets.register_text(docset.id, other, [9], version) is True
    assert stores.docsets.get_page(docset.id, other) is None
    # and a deleted docset's version starts again from 0
    stores.docsets.delete_docset(ORG, docset.id)
    assert stores.docsets.text_version(docset.id) == 0


def test_a_retryable_error_is_claimable_and_a_final_one_is_not(stores: Stores) -> None:
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("a", "b"), now=1)
    a, b = (stores.docsets.claim_page(docset.id, page_id_for(docset.id, u), now=2) for u in urls("a", "b"))
    stores.docsets.save_page(
        a.model_copy(update={"status": PageStatus.ERROR, "error": "503", "retry_at": 50})
    )
    finish(stores, b, status=PageStatus.ERROR, error="boom")
    assert stores.docsets.claim_page(docset.id, b.id, now=3) is None
    assert stores.docsets.claim_page(docset.id, a.id, now=3).attempts == 2


def test_a_page_left_in_processing_can_be_reclaimed_once_it_counts_as_stuck(stores: Stores) -> None:
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("a", "b"), now=1)
    a, b = (page_id_for(docset.id, u) for u in urls("a", "b"))
    assert stores.docsets.claim_page(docset.id, a, now=10) is not None
    # When a redelivered message claims it again: not while the claim is recent, then once
    assert stores.docsets.claim_page(docset.id, a, now=20, stuck_before=10) is None
    again = stores.docsets.claim_page(docset.id, a, now=20, stuck_before=11)
    assert (again.status, again.claimed_at, again.attempts) == (PageStatus.PROCESSING, 20, 2)
    assert stores.docsets.claim_page(docset.id, a, now=21, stuck_before=11) is None
    # and a finished page is never reclaimed
    done = stores.docsets.claim_page(docset.id, b, now=10)
    finish(stores, done, status=PageStatus.INDEXED)
    assert stores.docsets.claim_page(docset.id, b, now=30, stuck_before=30) is None


def test_pages_are_listed_by_status_a_slice_at_a_time_with_the_total(stores: Stores) -> None:
    docset = new_docset(stores, max_pages=10)
    stores.docsets.add_pages(docset, urls("c", "a", "b"), now=1)
    stores.docsets.add_pages(docset, urls("e", "d"), now=2)
    done = stores.docsets.claim_page(docset.id, page_id_for(docset.id, urls("a")[0]), now=3)
    finish(stores, done, status=PageStatus.INDEXED, chunk_count=3)
    # Then pages come in (created_at, url) order, a slice at a time, with the filtered total
    pages, total = stores.docsets.list_pages(docset.id, limit=2, offset=1)
    assert total == 5 and [p.url for p in pages] == urls("b", "c")
    pending, total = stores.docsets.list_pages(docset.id, PageStatus.PENDING, limit=3, offset=2)
    assert total == 4 and [p.url for p in pending] == urls("d", "e")
    indexed, total = stores.docsets.list_pages(docset.id, PageStatus.INDEXED)
    assert total == 1 and indexed[0].chunk_count == 3
    assert stores.docsets.list_pages(docset.id, PageStatus.ERROR) == ([], 0)


def test_page_counts_report_every_state_and_stuck_pages(stores: Stores) -> None:
    docset = new_docset(stores, max_pages=10)
    stores.docsets.add_pages(docset, urls("a", "b", "c", "d", "e", "f"), now=1)
    claim = {
        u: stores.docsets.claim_page(docset.id, page_id_for(docset.id, u), now=10)
        for u in urls("a", "b", "c", "d")
    }
    a, b, c, d = claim.values()
    finish(stores, a, status=PageStatus.INDEXED, chunk_count=4, updated_at=40)
    finish(stores, b, status=PageStatus.SKIPPED, updated_at=30)
    stores.docsets.save_page(
        c.model_copy(update={"status": PageStatus.ERROR, "retry_at": 99, "updated_at": 20})
    )
    # d stays claimed (at 10): stuck once the threshold passes it
    counts = stores.docsets.page_counts(docset.id, stuck_before=11)
    assert counts == PageCounts(
        total=6,
        indexed=1,
        pending=3,
        error=1,
        skipped=1,
        chunks=4,
        stuck=1,
        retried=0,
        retrying=1,
        last_update=40,
    )
    assert stores.docsets.page_counts(docset.id, stuck_before=10).stuck == 0
    assert [p.id for p in stores.docsets.stuck_pages(docset.id, stuck_before=11)] == [d.id]
    assert stores.docsets.stuck_pages(docset.id, stuck_before=10) == []
    assert stores.docsets.page_counts("no-such-docset", stuck_before=11) == PageCounts()


# ----------------------------------------------------------------------------- the runner's queue


def test_due_pages_are_claimed_oldest_first_across_docsets_except_excluded(stores: Stores) -> None:
    one = new_docset(stores)
    two = new_docset(stores, seed_url=f"{SITE}two/")
    stores.docsets.add_pages(one, urls("late"), now=30)
    stores.docsets.add_pages(two, urls("early"), now=10)
    stores.docsets.add_pages(one, urls("future"), now=500)
    assert stores.docsets.next_due() == 10
    # When the runner claims from everything but docset two
    got = stores.docsets.claim_pages(now=100, limit=5, exclude_docsets=[two.id])
    assert [p.url for p in got] == urls("late")
    # Then docset two's page is next, and the page due later is not claimed before its time
    assert [p.url for p in stores.docsets.claim_pages(now=100, limit=5)] == urls("early")
    assert stores.docsets.claim_pages(now=100, limit=5) == []
    assert stores.docsets.next_due() == 500
    assert [p.url for p in stores.docsets.claim_pages(now=500, limit=5)] == urls("future")
    assert stores.docsets.next_due() is None


def test_stuck_pages_are_released_back_to_the_queue(stores: Stores) -> None:
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("a", "b", "c"), now=1)
    old, recent, done = stores.docsets.claim_pages(now=10, limit=3)
    stores.docsets.save_page(recent.model_copy(update={"claimed_at": 50}))
    finish(stores, done, status=PageStatus.INDEXED)
    # When pages claimed before 20 are released at 60
    assert stores.docsets.release_stuck(stuck_before=20, now=60) == 1
    # Then only the old claim is pending again, due at once, with a note of what happened
    page = stores.docsets.get_page(docset.id, old.id)
    assert (page.status, page.retry_at, page.updated_at, page.error) == (
        PageStatus.PENDING,
        60,
        60,
        "retried after being stuck in processing",
    )
    assert stores.docsets.get_page(docset.id, recent.id).status == PageStatus.PROCESSING
    assert [p.id for p in stores.docsets.claim_pages(now=60, limit=5)] == [old.id]
    assert stores.docsets.release_stuck(stuck_before=20, now=61) == 0


def test_requeue_keeps_the_hashes_of_indexed_pages_unless_a_full_reindex(stores: Stores) -> None:
    docset = new_docset(stores)
    stores.docsets.add_pages(docset, urls("a", "b", "c", "d"), now=1)
    a, b, c, d = stores.docsets.claim_pages(now=2, limit=4)
    finish(stores, a, status=PageStatus.INDEXED, content_hash="h", etag='"1"', last_modified="Mon")
    finish(stores, b, status=PageStatus.SKIPPED, error="HTTP 404", etag='"2"')
    finish(stores, c, status=PageStatus.ERROR, error="boom")
    # d is still being processed: a refresh leaves it to its worker
    assert stores.docsets.requeue_docset(docset.id, now=5, clear_hashes=False) == (3, 1, 2)
    kept = stores.docsets.get_page(docset.id, a.id)
    assert (kept.status, kept.content_hash, kept.etag, kept.last_modified, kept.retry_at, kept.attempts) == (
        PageStatus.PENDING,
        "h",
        '"1"',
        "Mon",
        5,
        0,
    )
    assert (
        stores.docsets.get_page(docset.id, b.id).etag,
        stores.docsets.get_page(docset.id, c.id).error,
    ) == (None, None)
    assert stores.docsets.get_page(docset.id, d.id).status == PageStatus.PROCESSING
    assert {p.id for p in stores.docsets.claim_pages(now=5, limit=5)} == {a.id, b.id, c.id}
    for page in (a, b, c):
        finish(stores, stores.docsets.get_page(docset.id, page.id), status=PageStatus.INDEXED)
    # When a full reindex is asked for
    assert stores.docsets.requeue_docset(docset.id, now=6, clear_hashes=True) == (3, 0, 3)
    cleared = stores.docsets.get_page(docset.id, a.id)
    assert (cleared.content_hash, cleared.etag, cleared.last_modified) == (None, None, None)


# ----------------------------------------------------------------------------- sessions


def test_sessions_are_per_organization_and_a_second_register_is_a_heartbeat(stores: Stores) -> None:
    store = stores.docsets
    store.put_session(
        ClientSession(id="s1", organization_id=ORG, client_type="cli", connected_at=1, last_heartbeat=1)
    )
    store.put_session(
        ClientSession(id="s1", organization_id=ORG, client_type="cli", connected_at=9, last_heartbeat=5)
    )
    store.put_session(ClientSession(id="s0", organization_id=ORG, connected_at=3, last_heartbeat=3))
    store.put_session(ClientSession(id="s1", organization_id=OTHER_ORG, connected_at=2, last_heartbeat=2))
    assert [(x.id, x.connected_at, x.last_heartbeat, x.client_type) for x in store.list_sessions(ORG)] == [
        ("s1", 1, 5, "cli"),
        ("s0", 3, 3, None),
    ]
    assert store.get_session(ORG, "s1").last_heartbeat == 5 and store.get_session(ORG, "nope") is None
    assert store.delete_session(ORG, "s1") is True and store.delete_session(ORG, "s1") is False
    assert [x.organization_id for x in store.list_sessions(OTHER_ORG)] == [OTHER_ORG]
