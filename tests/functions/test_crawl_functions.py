"""The page worker, the refresh job and the API's Mem-Oracle routes, invoked with the events/
files under moto: the docset store is DynamoDocsetStore on the moto table, the page queue is SQS.
Only the fetcher is replaced (an in-memory site), besides the fakes fn_support names."""

from __future__ import annotations

import json
import socket
from functools import partial

import pytest
from fn_support import ORG_ID, TABLE, Deployment, context, load_event

from memlane.adapters.aws.crawl_queue import PageMessage
from memlane.adapters.aws.docset_store import DynamoDocsetStore
from memlane.aws import compose
from memlane.domain.docsets import Docset, PageStatus, epoch_ms, page_id_for
from memlane.domain.models import Organization
from memlane.ports import FetchResult

SITE = {
    "https://docs.example.com/guide/": (
        "<html><head><title>Guide</title></head><body><main><h1>Guide</h1>"
        "<p>Welcome to the widget guide. Widgets turn sprockets into gears "
        "with very little friction, as the sections below explain.</p>"
        "<a href='/guide/install'>Install</a> <a href='/guide/usage'>Usage</a>"
        "</main></body></html>"
    ),
    "https://docs.example.com/guide/install": (
        "<html><head><title>Install</title></head><body><main>"
        "<h1>Install</h1><p>Install the widget with pip install "
        "widget, then run widget init in your project folder.</p>"
        "</main></body></html>"
    ),
    "https://docs.example.com/guide/usage": (
        "<html><head><title>Usage</title></head><body><main><h1>Usage"
        "</h1><p>Call widget.turn() to convert a sprocket; pass "
        "gentle=True for fragile sprockets.</p></main></body></html>"
    ),
}


class SiteFetcher:
    def __init__(self) -> None:
        self.fetched: list[str] = []
        self.down: set[str] = set()  # URLs whose server times out

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        self.fetched.append(url)
        if url in self.down:
            raise TimeoutError(f"{url} timed out")
        body = SITE.get(url)
        if body is None:
            return FetchResult(url, 404, b"", None, None, None)
        return FetchResult(url, 200, body.encode(), "text/html; charset=utf-8", None, None)


@pytest.fixture
def site(deployment: Deployment):
    """The in-memory site behind every function's fetcher: the docset context the functions are
    handed fetches from it."""
    fetcher = SiteFetcher()
    deployment.docsets = compose.build_docset_context(compose.AwsSettings.from_env(),
                                                      services=deployment.services(), fetcher=fetcher)
    return fetcher


@pytest.fixture
def crawl(deployment: Deployment, org: Organization, site: SiteFetcher):
    store = DynamoDocsetStore(TABLE, client=deployment.dynamodb)
    fetcher = site
    project = deployment.services().metadata.list_projects(ORG_ID)[0]
    docset = store.create_docset(
        Docset(
            organization_id=ORG_ID,
            project_id=project.id,
            name="Widgets",
            base_url="https://docs.example.com/guide",
            seed_url="https://docs.example.com/guide/",
            seed_slug="",
            created_at=epoch_ms(deployment.clock.now()),
            updated_at=epoch_ms(deployment.clock.now()),
        )
    )
    store.add_pages(docset, [docset.seed_url], epoch_ms(deployment.clock.now()))
    return store, docset, fetcher


def page_event(deployment: Deployment, docset: Docset, page_ids: list[str]) -> dict:
    event = load_event("page_worker_batch.json")
    template = event["Records"][0]
    event["Records"] = [
        {
            **template,
            "messageId": f"msg-{i}",
            "body": PageMessage(organization_id=ORG_ID, docset_id=docset.id, page_id=pid).model_dump_json(),
        }
        for i, pid in enumerate(page_ids)
    ]
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
    response = deployment.invoke("page_worker", event, context("page-worker"))
    # Then only the malformed message is reported for retry
    assert response == {"batchItemFailures": [{"itemIdentifier": "poison"}]}
    page = store.get_page(docset.id, seed)
    assert page.status == PageStatus.INDEXED and page.document_id
    doc = deployment.services().metadata.get_document(ORG_ID, page.document_id)
    assert doc.title == "Guide" and "sprockets into gears" in doc.content
    assert deployment.search.document_ids(ORG_ID) == {page.document_id}
    # and each link the page added is one message on the page queue
    linked = sorted(
        page_id_for(docset.id, f"https://docs.example.com/guide/{p}") for p in ("install", "usage")
    )
    assert queued_pages(deployment) == linked
    # When those messages are handled, and one is delivered twice
    assert deployment.invoke(
        "page_worker", page_event(deployment, docset, [*linked, linked[0]]), context("page-worker")
    ) == {"batchItemFailures": []}
    # Then every page is indexed once
    assert {p.status for p in store.list_pages(docset.id)[0]} == {PageStatus.INDEXED}
    assert len(deployment.search.document_ids(ORG_ID)) == 3
    assert fetcher.fetched.count("https://docs.example.com/guide/install") == 1


def test_refresh_job_requeues_stale_docsets_onto_the_page_queue(deployment: Deployment, crawl) -> None:
    store, docset, _ = crawl
    seed = page_id_for(docset.id, docset.seed_url)
    deployment.invoke("page_worker", page_event(deployment, docset, [seed]), context("page-worker"))
    queued_pages(deployment)  # drain the link messages
    # Given the docset was last refreshed two days ago
    two_days_ago = epoch_ms(deployment.clock.now()) - 48 * 3_600_000
    store.update_docset(
        store.get_docset(ORG_ID, docset.id).model_copy(
            update={"created_at": two_days_ago, "last_refreshed_at": two_days_ago}
        )
    )
    for page in store.list_pages(docset.id)[0]:
        if page.status != PageStatus.INDEXED:
            store.save_page(page.model_copy(update={"status": PageStatus.SKIPPED, "retry_at": None}))
    # When the daily schedule fires
    first = deployment.invoke("refresh_job", load_event("refresh_job_schedule.json"), context("refresh"))
    # Then the docset is refreshed and its pages are on the page queue
    assert first["job"] == "refresh" and (first["total"], first["refreshed"]) == (1, 1)
    assert seed in queued_pages(deployment)
    # and a second run right after (a schedule firing twice) finds it fresh
    again = deployment.invoke("refresh_job", load_event("refresh_job_schedule.json"), context("refresh"))
    assert (again["total"], again["refreshed"]) == (1, 0)


def test_a_page_that_fails_transiently_is_sent_again_after_its_backoff(deployment: Deployment, crawl) -> None:
    store, docset, fetcher = crawl
    seed = page_id_for(docset.id, docset.seed_url)
    # Given the seed's server times out
    fetcher.down.add(docset.seed_url)
    # When the page worker handles its message
    assert deployment.invoke("page_worker", page_event(deployment, docset, [seed]), context("page-worker")) == {
        "batchItemFailures": []
    }
    # Then the page records the error with a retry time, and its message is back on the queue, delayed
    page = store.get_page(docset.id, seed)
    assert page.status == PageStatus.ERROR and page.retry_at is not None and "timed out" in page.error
    attributes = deployment.sqs.get_queue_attributes(
        QueueUrl=deployment.page_queue_url, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )
    assert attributes["Attributes"]["ApproximateNumberOfMessagesDelayed"] == "1"
    # When the server is back and the message arrives
    fetcher.down.clear()
    deployment.invoke("page_worker", page_event(deployment, docset, [seed]), context("page-worker"))
    # Then the page is indexed on its second attempt
    page = store.get_page(docset.id, seed)
    assert (page.status, page.attempts) == (PageStatus.INDEXED, 2)


def test_a_message_redelivered_after_its_worker_died_reclaims_the_page(deployment: Deployment, crawl) -> None:
    store, docset, _ = crawl
    seed = page_id_for(docset.id, docset.seed_url)
    # Given the seed was claimed ten minutes ago by a worker that never finished
    ten_minutes_ago = epoch_ms(deployment.clock.now()) - 600_000
    assert store.claim_page(docset.id, seed, ten_minutes_ago) is not None
    # When SQS redelivers its message (after the visibility timeout)
    deployment.invoke("page_worker", page_event(deployment, docset, [seed]), context("page-worker"))
    # Then this worker claims it again and indexes it
    assert store.get_page(docset.id, seed).status == PageStatus.INDEXED
    # but a page claimed a moment ago belongs to a live worker: its duplicate message is dropped
    fresh = page_id_for(docset.id, "https://docs.example.com/guide/usage")
    assert store.claim_page(docset.id, fresh, epoch_ms(deployment.clock.now())) is not None
    deployment.invoke("page_worker", page_event(deployment, docset, [fresh]), context("page-worker"))
    assert store.get_page(docset.id, fresh).status == PageStatus.PROCESSING


def api(deployment: Deployment, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    """The sample API event (after the authorizer) with another method, path and body."""
    event = load_event("api_recall.json")
    event.update(
        httpMethod=method,
        path=path,
        body=json.dumps(body) if body is not None else None,
        pathParameters={"proxy": path.lstrip("/")},
    )
    event["requestContext"].update(httpMethod=method, path=f"/dev{path}")
    result = deployment.invoke("api", event, context("api"))
    return result["statusCode"], json.loads(result["body"] or "null")


def public_dns(host: str, port: int, *args: object, **kwargs: object) -> list[tuple]:
    """The SSRF check resolves the seed's host: docs.example.com answers with a public address."""
    assert host == "docs.example.com"
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]


def drain_page_queue(deployment: Deployment) -> int:
    """What the SQS event source does: page-queue messages to the page worker, until none are left."""
    handled = 0
    while True:
        messages = deployment.sqs.receive_message(
            QueueUrl=deployment.page_queue_url, MaxNumberOfMessages=10, VisibilityTimeout=60
        ).get("Messages", [])
        if not messages:
            return handled
        event = load_event("page_worker_batch.json")
        template = event["Records"][0]
        event["Records"] = [
            {**template, "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"]}
            for m in messages
        ]
        assert deployment.invoke("page_worker", event, context("page-worker")) == {"batchItemFailures": []}
        for m in messages:
            deployment.sqs.delete_message(
                QueueUrl=deployment.page_queue_url, ReceiptHandle=m["ReceiptHandle"]
            )
        handled += len(messages)


def test_a_docset_indexed_through_the_api_is_crawled_by_the_page_worker(
    deployment: Deployment, org: Organization, site: SiteFetcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlane.docsets.service as docset_service

    monkeypatch.setattr(docset_service, "check_url", partial(docset_service.check_url, resolver=public_dns))
    # Given POST /index for a documentation site, through the API function
    status, body = api(deployment, "POST", "/index", {"baseUrl": "https://docs.example.com", "seedSlug": "/guide/", "name": "Widgets"}
    )
    assert status == 200 and body["seedIndexed"] is False and body["status"] == "indexing"
    docset_id = body["docsetId"]
    # Then the seed page is one message on the page queue, and the docset reports it pending
    status, before = api(deployment, "GET", f"/docset/{docset_id}")
    assert status == 200 and before["indexStatus"]["pendingPages"] == 1
    # When the page worker handles the page queue until it is empty
    assert drain_page_queue(deployment) == 3  # the seed, then the two pages it links to
    # Then every page is indexed and searchable, and the docset is ready
    status, after = api(deployment, "GET", f"/docset/{docset_id}")
    assert status == 200 and after["status"] == "ready"
    assert (after["indexStatus"]["totalPages"], after["indexStatus"]["indexedPages"]) == (3, 3)
    assert after["indexStatus"]["totalChunks"] >= 3
    assert set(SITE) <= set(site.fetched)
    assert len(deployment.search.document_ids(ORG_ID)) == 3
    status, pages = api(deployment, "GET", f"/docset/{docset_id}/pages")
    assert status == 200 and pages["total"] == 3 and {p["status"] for p in pages["pages"]} == {"indexed"}
    # and another organization does not see it
    store = DynamoDocsetStore(TABLE, client=deployment.dynamodb)
    assert store.get_docset("another-org", docset_id) is None
