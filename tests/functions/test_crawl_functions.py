"""The page worker and the refresh job, invoked with the events/ files under moto.

There is no DynamoDB DocsetStore yet (compose.build_docset_store says so), so these tests hand
the composition the SQLite DocsetStore of the embedded default and an in-memory fetcher; the
page queue, metadata, content and the rest are the AWS adapters on moto."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fn_support import ORG_ID, Deployment, context, load_event

from functions.invoke import invoke
from memlane.adapters.aws import compose
from memlane.adapters.aws.crawl_queue import PageMessage
from memlane.adapters.local.docset_store import SqliteDocsetStore
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.crawl.types import FetchResult
from memlane.docsets.models import Docset, PageStatus, page_id_for
from memlane.domain.errors import MemlaneError
from memlane.domain.models import Organization

SITE = {
    "https://docs.example.com/guide/": ("<html><head><title>Guide</title></head><body><main><h1>Guide</h1>"
                                        "<p>Welcome to the widget guide. Widgets turn sprockets into gears "
                                        "with very little friction, as the sections below explain.</p>"
                                        "<a href='/guide/install'>Install</a> <a href='/guide/usage'>Usage</a>"
                                        "</main></body></html>"),
    "https://docs.example.com/guide/install": ("<html><head><title>Install</title></head><body><main>"
                                               "<h1>Install</h1><p>Install the widget with pip install "
                                               "widget, then run widget init in your project folder.</p>"
                                               "</main></body></html>"),
    "https://docs.example.com/guide/usage": ("<html><head><title>Usage</title></head><body><main><h1>Usage"
                                             "</h1><p>Call widget.turn() to convert a sprocket; pass "
                                             "gentle=True for fragile sprockets.</p></main></body></html>"),
}


class SiteFetcher:
    def __init__(self) -> None:
        self.fetched: list[str] = []

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        self.fetched.append(url)
        body = SITE.get(url)
        if body is None:
            return FetchResult(url, 404, b"", None, None, None)
        return FetchResult(url, 200, body.encode(), "text/html; charset=utf-8", None, None)


@pytest.fixture
def crawl(deployment: Deployment, org: Organization, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    store = SqliteDocsetStore(SqliteDatabase(tmp_path / "docsets.sqlite3"))
    fetcher = SiteFetcher()
    monkeypatch.setattr(compose, "build_docset_store", lambda aws: store)
    monkeypatch.setattr(compose, "build_fetcher", lambda settings: fetcher)
    import functions.page_worker.handler as page_worker

    page_worker._docsets.cache_clear()
    project = deployment.services().metadata.list_projects(ORG_ID)[0]
    docset = store.create_docset(Docset(organization_id=ORG_ID, project_id=project.id, name="Widgets",
                                        base_url="https://docs.example.com/guide",
                                        seed_url="https://docs.example.com/guide/", seed_slug=""))
    store.add_pages(docset, [docset.seed_url], int(time.time() * 1000))
    yield store, docset, fetcher
    page_worker._docsets.cache_clear()


def page_event(deployment: Deployment, docset: Docset, page_ids: list[str]) -> dict:
    event = load_event("page_worker_batch.json")
    template = event["Records"][0]
    event["Records"] = [{**template, "messageId": f"msg-{i}", "body": PageMessage(
        organization_id=ORG_ID, docset_id=docset.id, page_id=pid).model_dump_json()}
        for i, pid in enumerate(page_ids)]
    return event


def queued_pages(deployment: Deployment) -> list[str]:
    messages = deployment.sqs.receive_message(QueueUrl=deployment.page_queue_url, MaxNumberOfMessages=10)
    return sorted(json.loads(m["Body"])["page_id"] for m in messages.get("Messages", []))


def test_page_worker_indexes_the_page_and_queues_its_links(deployment: Deployment, crawl) -> None:
    store, docset, fetcher = crawl
    seed = page_id_for(docset.id, docset.seed_url)
    # Given the seed page's message and one that is not a page message
    event = page_event(deployment, docset, [seed])
    event["Records"].append({**event["Records"][0], "messageId": "poison", "body": "{not json"})
    # When the page worker handles the batch
    response = invoke("page_worker", event, context("page-worker"))
    # Then only the malformed message is reported for retry
    assert response == {"batchItemFailures": [{"itemIdentifier": "poison"}]}
    page = store.get_page(docset.id, seed)
    assert page.status == PageStatus.INDEXED and page.document_id
    doc = deployment.services().metadata.get_document(ORG_ID, page.document_id)
    assert doc.title == "Guide" and "sprockets into gears" in doc.content
    assert deployment.search.document_ids(ORG_ID) == {page.document_id}
    # and each link the page added is one message on the page queue
    linked = sorted(page_id_for(docset.id, f"https://docs.example.com/guide/{p}") for p in ("install", "usage"))
    assert queued_pages(deployment) == linked
    # When those messages are handled, and one is delivered twice
    assert invoke("page_worker", page_event(deployment, docset, [*linked, linked[0]]),
                  context("page-worker")) == {"batchItemFailures": []}
    # Then every page is indexed once
    assert {p.status for p in store.list_pages(docset.id)[0]} == {PageStatus.INDEXED}
    assert len(deployment.search.document_ids(ORG_ID)) == 3
    assert fetcher.fetched.count("https://docs.example.com/guide/install") == 1


def test_refresh_job_requeues_stale_docsets_onto_the_page_queue(deployment: Deployment, crawl) -> None:
    store, docset, _ = crawl
    seed = page_id_for(docset.id, docset.seed_url)
    invoke("page_worker", page_event(deployment, docset, [seed]), context("page-worker"))
    queued_pages(deployment)  # drain the link messages
    # Given the docset was last refreshed two days ago
    two_days_ago = int(time.time() * 1000) - 48 * 3_600_000
    store.update_docset(store.get_docset(ORG_ID, docset.id).model_copy(
        update={"created_at": two_days_ago, "last_refreshed_at": two_days_ago}))
    for page in store.list_pages(docset.id)[0]:
        if page.status != PageStatus.INDEXED:
            store.save_page(page.model_copy(update={"status": PageStatus.SKIPPED, "retry_at": None}))
    # When the daily schedule fires
    first = invoke("refresh_job", load_event("refresh_job_schedule.json"), context("refresh"))
    # Then the docset is refreshed and its pages are on the page queue
    assert first["job"] == "refresh" and (first["total"], first["refreshed"]) == (1, 1)
    assert seed in queued_pages(deployment)
    # and a second run right after (a schedule firing twice) finds it fresh
    again = invoke("refresh_job", load_event("refresh_job_schedule.json"), context("refresh"))
    assert (again["total"], again["refreshed"]) == (1, 0)


def test_without_a_docset_store_the_crawl_functions_refuse_clearly(deployment: Deployment,
                                                                   org: Organization) -> None:
    with pytest.raises(MemlaneError, match="need a DynamoDB DocsetStore"):
        invoke("refresh_job", load_event("refresh_job_schedule.json"), context("refresh"))
