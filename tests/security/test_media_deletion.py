"""Issue 34, finding 2: a document's files go with it on every removal path.

An image's original, a scanned PDF's original, a large text's stored copy (DynamoDB keeps text over
100 KB in S3) and embedding progress kept between attempts are each written under a key of their
own. Every removal path (DELETE /v3/documents, the auto-forget sweep, a project delete, a docset
delete, a connection delete) must leave none of them behind, its deletion receipt must say so
(`verified: true`), and `memlane doctor` must find no orphan.

The keys are found by watching the blob store while the documents are saved, not by reading
memlane's own list of keys (memlane.documents.keys), so a kind of file that list forgets is caught.
Both hosts: the embedded default (SQLite), and the AWS stores (DynamoDB and a versioned S3 bucket,
on moto) under the same services.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import pytest
from fakes import FixedClock, HashEmbedder
from PIL import Image, ImageDraw

from memlane.api.app import MemlaneApi
from memlane.api.auth import authorizer_context
from memlane.api.events import build_event
from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.crawl.ssrf import NetworkPolicy
from memlane.docsets.pages import CrawlContext, RobotsCache, crawl_page
from memlane.docsets.service import DocsetContext
from memlane.documents.forget import forget_expired
from memlane.domain.docsets import Docset, page_id_for
from memlane.domain.errors import TransientError
from memlane.domain.models import Project
from memlane.domain.principal import Principal
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.local.doctor import examine
from memlane.local.worker import IngestWorker
from memlane.ports import FetchResult, Services
from memlane.services.keys import ensure_organization

REMOVALS = ("api", "auto-forget", "project")
# Every DELETE route of the route table, by what it removes: a new one fails
# test_every_delete_route_is_a_removal_path_tested_here until it is placed (and, if it removes
# documents, its removal path is tested below).
REMOVES_DOCUMENTS = {
    "DELETE /v3/documents/{document_id}": "api",
    "DELETE /v3/projects/{project_id}": "project",
    "DELETE /docset/{docset_id}": "docset",
    "DELETE /v3/connections/{connection_id}": "connection",
}
REMOVES_NO_DOCUMENT = {"DELETE /v3/keys/{key_id}", "DELETE /mcp"}


class WatchedBlobs:
    """The blob store, with every key ever written remembered."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.written: set[str] = set()

    def put(self, key: str, data: bytes) -> None:
        self.written.add(key)
        self.real.put(key, data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class Reader:
    """An OCR engine that reads every picture as the same receipt."""

    id = "fake-ocr"

    def read_text(self, png: bytes) -> str:
        return "Receipt 0091: espresso machine, 249.00, paid by card at the harbour shop"


class FailsOnce(HashEmbedder):
    """Once armed, fails one call (`fail_at`, the second by default) and then embeds again: a long
    document's first batch is embedded, the second fails, and a resumable write (the worker's)
    keeps the first batch's vectors as progress (work/…) for the retry."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0
        self.armed = False
        self.fail_at = 2  # the attempt that fails

    def embed_documents(self, texts):  # noqa: ANN001, ANN201 - the Embedder port
        if self.armed:
            self.attempts += 1
            if self.attempts == self.fail_at:
                self.armed = False
                raise TransientError("embedding service unavailable")
        return super().embed_documents(texts)


def png(text: str) -> bytes:
    picture = Image.new("RGB", (600, 120), "white")
    ImageDraw.Draw(picture).text((10, 50), text, fill="black")
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


def scanned_pdf() -> bytes:
    out = io.BytesIO()
    Image.open(io.BytesIO(png("Lease agreement, Harbour Street 12"))).save(out, "PDF")
    return out.getvalue()


def large_text() -> str:
    """~160 KB in ~200 chunks: over DynamoDB's inline limit, and more than one embedding batch."""
    return "\n\n".join(f"Section {i}. The tide at berth {i} turns {i % 7} minutes after the bell; "
                       + "moorings are checked at dawn and at dusk by the harbour crew. " * 12
                       for i in range(200))


@dataclass
class Host:
    svc: Services
    blobs: WatchedBlobs
    clock: FixedClock
    embedder: FailsOnce
    who: Principal
    docsets: Any = None  # the host's DocsetStore
    doctor: Any = None  # the host's `memlane doctor`, where one runs in the test
    receipts: list[dict] = field(default_factory=list)

    def call(self, method: str, path: str, body: Any = None, docsets: Any = None) -> tuple[int, Any]:
        raw = json.dumps(body).encode() if body is not None else b""
        event = build_event(method, path, "", {"Content-Type": "application/json"}, raw, authorizer_context(self.who))
        result = MemlaneApi(self.svc, docsets=docsets).handle(event, None)
        return int(result["statusCode"]), json.loads(result.get("body") or "null")

    def save_each_kind(self, project_id: str, forget_after: str | None) -> list[str]:
        """An image, a scanned PDF and a large text whose embedding failed halfway."""
        extra = {"project_id": project_id, **({"forget_after": forget_after} if forget_after else {})}
        ids = []
        for content, kind in ((base64.b64encode(png("Receipt 0091")).decode(), "image"),
                              (base64.b64encode(scanned_pdf()).decode(), "pdf"),
                              (large_text(), "text")):
            status, body = self.call("POST", "/v3/memory", {"content": content, "content_type": kind, **extra})
            assert status in (201, 202), body
            ids.append(body["id"])
        # the large text is queued: the worker's first attempt embeds one batch, then fails
        self.embedder.armed, self.embedder.attempts = True, 0
        IngestWorker(self.svc, self.svc.queue).run_once()
        return ids


def _host(svc: Services, embedder: FailsOnce, docsets: Any, doctor: Any = None) -> Host:
    blobs = WatchedBlobs(svc.blobs)
    clock = FixedClock()
    svc = replace(svc, blobs=blobs, clock=clock, ocr=Reader())
    org, _ = ensure_organization(svc.metadata, "acme")
    return Host(svc, blobs, clock, embedder, Principal(organization_id=org.id, key_id="k"), docsets, doctor)


@pytest.fixture(params=["local", "aws"])
def host(request: pytest.FixtureRequest, tmp_path) -> Iterator[Host]:
    embedder = FailsOnce()
    if request.param == "local":
        stack = build_local(Settings(data_dir=tmp_path / "d"), embedder=embedder, summarizer=LocalSummarizer(),
                            media_readers=(Reader(), None))
        from memlane.adapters.local.docset_store import SqliteDocsetStore

        h = _host(stack.services, embedder, SqliteDocsetStore(stack.db),
                  doctor=lambda svc: examine(replace(stack, services=svc)))
        yield h
        stack.close()
        return
    yield from _aws_host(request, embedder)


def _aws_host(request: pytest.FixtureRequest, embedder: FailsOnce) -> Iterator[Host]:
    from memory_stores import MemoryStores
    from moto import mock_aws

    from memlane.adapters.aws._boto import new_client
    from memlane.adapters.aws.blob_store import S3BlobStore
    from memlane.adapters.aws.dynamo_schema import table_definition
    from memlane.adapters.aws.metadata_store import DynamoMetadataStore

    monkeypatch = request.getfixturevalue("monkeypatch")
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        dynamodb, s3 = new_client("dynamodb"), new_client("s3")
        dynamodb.create_table(**table_definition("memlane"))
        s3.create_bucket(Bucket="content")
        s3.put_bucket_versioning(Bucket="content", VersioningConfiguration={"Status": "Enabled"})
        blobs = S3BlobStore("content", client=s3)
        memory = MemoryStores(dimension=embedder.dimension)
        svc = Services(settings=Settings(), metadata=DynamoMetadataStore("memlane", client=dynamodb, blob_store=blobs),
                       blobs=blobs, index=memory.index, embedder=embedder, summarizer=LocalSummarizer(),
                       queue=memory.queue, cache=memory.cache)
        from memlane.adapters.aws.docset_store import DynamoDocsetStore

        h = _host(svc, embedder, DynamoDocsetStore("memlane", client=dynamodb))
        # the DynamoDB store writes large content through the blob store it was given: the watched one
        h.svc.metadata.blob_store = h.blobs  # type: ignore[attr-defined]
        yield h


def remove(host: Host, path: str, project_id: str, ids: list[str]) -> list[dict]:
    """Remove the documents by `path`; the receipts it recorded."""
    if path == "api":
        answers = [host.call("DELETE", f"/v3/documents/{doc_id}") for doc_id in ids]
        assert all(status == 200 and body["deleted"] for status, body in answers), answers
        return [body["receipt"] for _, body in answers]
    if path == "auto-forget":
        host.clock.advance(days=2)
        report = forget_expired(host.svc)
        assert report.forgotten == len(ids)
        return [host.call("GET", f"/v3/deletions/{r}")[1] for r in report.receipts]
    status, body = host.call("DELETE", f"/v3/projects/{project_id}")
    assert status == 200 and body["documents_deleted"] == len(ids), body
    return [body["receipt"]]


@pytest.mark.parametrize("path", REMOVALS)
def test_every_file_a_media_or_large_memory_wrote_is_gone_after_each_removal(host: Host, path: str) -> None:
    # Given an image, a scanned PDF and a large text saved into a project (the text's embedding
    # failed halfway, so its first batch waits as progress)
    project = host.svc.metadata.create_project(Project(organization_id=host.who.organization_id, name="Receipts",
                                                       slug="receipts"))
    forget_after = (host.clock.now() + timedelta(days=1)).isoformat() if path == "auto-forget" else None
    ids = host.save_each_kind(project.id, forget_after)
    written = sorted(host.blobs.written)
    kinds = {key.split("/")[0] for key in written}
    assert {"media", "work"} <= kinds, written  # originals and embedding progress
    if host.doctor is None:
        assert "content" in kinds, written  # DynamoDB keeps the large text in S3
    # When they are removed by this path
    receipts = remove(host, path, project.id, ids)
    # Then no key any of them wrote holds anything, not even an old version
    assert {key: host.blobs.versions(key) for key in written if host.blobs.versions(key)} == {}
    # and each receipt says every store was read back clean
    assert sorted(d for r in receipts for d in r["documents"]) == sorted(ids)
    assert all(r["verified"] for r in receipts), [c for r in receipts for c in r["checks"] if not c["clean"]]
    # and the doctor finds nothing left over
    if host.doctor is not None:
        report = host.doctor(host.svc)
        assert report.blob_orphans == [] and report.total == 0, report.as_dict()


PAGE = "https://docs.example/guide/tides.html"


class Site:
    """A documentation site of one large page."""

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        paragraphs = "".join(f"<p>{p}</p>" for p in large_text().split("\n\n"))
        html = f"<html><head><title>Tides</title></head><body><main><h1>Tides</h1>{paragraphs}</main></body></html>"
        return FetchResult(url, 200, html.encode(), "text/html", '"v1"', None)


def test_a_docset_delete_leaves_no_file_of_its_pages(host: Host) -> None:
    # Given a documentation set whose one page was crawled and indexed
    site = Site()
    crawl = CrawlContext(svc=host.svc, store=host.docsets, fetcher=site, settings=DocsetSettings(),
                         robots=RobotsCache(site))
    project = host.svc.metadata.create_project(Project(organization_id=host.who.organization_id, name="Tide docs",
                                                       slug="docs-tides"))
    docset = Docset(organization_id=host.who.organization_id, project_id=project.id, name="Tide docs",
                    base_url="https://docs.example/guide/", seed_url=PAGE, seed_slug="/guide/", allowed_paths=[],
                    max_pages=10, created_at=0, updated_at=0)
    host.docsets.create_docset(docset)
    host.docsets.add_pages(docset, [PAGE], 0)
    page = host.docsets.claim_page(docset.id, page_id_for(docset.id, PAGE), crawl.clock_ms())
    assert page is not None
    crawl_page(crawl, docset, page)
    written = sorted(host.blobs.written)
    if host.doctor is None:
        assert any(key.startswith("content/") for key in written), written  # the page's text, over 100 KB
    # When the docset is deleted
    status, body = host.call("DELETE", f"/docset/{docset.id}",
                             docsets=DocsetContext(crawl=crawl, policy=NetworkPolicy.public_only()))
    # Then nothing its page wrote is left, and the receipt says so
    assert status == 200 and body["verified"] is True, body
    assert {key: host.blobs.versions(key) for key in written if host.blobs.versions(key)} == {}
    receipt = host.call("GET", f"/v3/deletions/{body['receiptId']}")[1]
    assert receipt["documents"] == [page_id_for(docset.id, PAGE)] and receipt["verified"]
    if host.doctor is not None:
        assert host.doctor(host.svc).total == 0



def test_a_connection_delete_leaves_no_file_of_what_it_brought_in(github_world) -> None:
    from memlane.connections import service

    # Given a connection that brought in a large file, whose first embedding attempt failed halfway
    world = github_world("acme/tides", {"GUIDE.md": large_text().encode()})
    embedder = FailsOnce()
    blobs = WatchedBlobs(world.svc.blobs)
    world.svc = world.stack.services = replace(world.svc, blobs=blobs, embedder=embedder)
    conn = world.connect(world.a, {"repositories": ["acme/tides"]})
    embedder.armed, embedder.fail_at = True, 1  # the write in the sync fails (the document waits for the worker)
    world.sync(conn)
    embedder.armed, embedder.attempts, embedder.fail_at = True, 0, 2  # and so does the worker's first attempt, halfway
    world.drain()
    written = sorted(blobs.written)
    assert any(key.startswith("work/") for key in written), written  # the batch it kept as progress
    # When the connection is deleted with what it brought in
    out, finished = service.delete_connection(world.svc, world.a, conn.id, remove_documents=True)
    # Then nothing any of its documents wrote is left, and the receipts say so
    assert finished and out.documents_removed >= 1 and out.verified, out
    assert {key: blobs.versions(key) for key in written if blobs.versions(key)} == {}
    assert examine(world.stack).total == 0


def test_every_delete_route_is_a_removal_path_tested_here() -> None:
    from security_routes import ROUTES

    deletes = {str(r) for r in ROUTES if r.method == "DELETE"}
    assert deletes == set(REMOVES_DOCUMENTS) | REMOVES_NO_DOCUMENT
    tested = {*REMOVALS, "docset", "connection"}
    assert set(REMOVES_DOCUMENTS.values()) <= tested
