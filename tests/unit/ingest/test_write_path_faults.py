"""A failure between any two stores of the write path, for every caller of it.

For each caller (a save in the request, a bulk save, the job worker, the Step Functions steps, a docs page,
raged ingest, reindex, import, the doctor's repair and a connection's sync) a clean run first lists the
store calls a write makes; then, for each of them, a fresh store fails at exactly that call. Right after the
failure the document must be either fully searchable (`ready`, its chunks in the index once) or
visibly not ready (`queued`/`processing`) with a retry scheduled by that caller's own mechanism.
After the retry it must be ready and found by recall exactly once.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from fakes import FixedClock, HashEmbedder
from faults import Faults

from memlane.collections.models import IngestIn
from memlane.collections.service import document_id_for
from memlane.collections.service import ingest as raged_ingest
from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.docsets.pages import CrawlContext, RobotsCache, crawl_page
from memlane.documents import workflow as steps
from memlane.domain.docsets import Docset, DocsetPage, PageStatus, page_id_for
from memlane.domain.errors import TransientError
from memlane.domain.models import Document, DocumentStatus, Project
from memlane.domain.principal import Principal
from memlane.domain.requests import BulkMemoriesIn, MemoryIn, RecallIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import LocalStack, build_local
from memlane.local.reindex import requeue_everything
from memlane.local.worker import IngestWorker
from memlane.ports import FetchResult, SearchScope, Services
from memlane.recall.service import recall
from memlane.services import doctor
from memlane.services.bulk import save_memories
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory
from memlane.services.transfer import export_project, import_lines, reminted_id

# Long enough for three chunks, so a rewrite must drop old rows and a retry must not duplicate.
TEXT = "\n\n".join(
    f"Section {i}. The greenhouse heater keeps seedlings at eighteen degrees; vent {i} opens at "
    + " ".join(f"noon{i} humidity{j}" for j in range(140))
    for i in range(3)
)
QUERY = "greenhouse heater seedlings"
SETTINGS = dict(chunk_max_tokens=512, chunk_overlap_tokens=50)


@dataclass
class World:
    stack: LocalStack
    faults: Faults
    svc: Services
    who: Principal
    clock: FixedClock
    project: Project
    extra: dict[str, Any] = field(default_factory=dict)

    def drain(self) -> None:
        """The local job worker's retry: the backoff has passed, every due job runs."""
        self.clock.advance(hours=2)
        IngestWorker(self.svc, self.stack.queue).drain()

    def job_pending(self, doc_id: str) -> bool:
        rows = self.stack.db.connection().execute("SELECT 1 FROM jobs WHERE document_id = ?", (doc_id,))
        return rows.fetchone() is not None


def make_world(tmp_path, name: str) -> World:
    stack = build_local(Settings(data_dir=tmp_path / name, **SETTINGS), embedder=HashEmbedder(),
                        summarizer=LocalSummarizer())
    clock = FixedClock()
    stack.services = replace(stack.services, clock=clock)
    faults = Faults(stack.services)
    org, _ = ensure_organization(stack.metadata, "acme")
    who = Principal(organization_id=org.id, key_id="k")
    project = stack.metadata.list_projects(org.id)[0]
    return World(stack, faults, faults.services, who, clock, project)


def assert_ready_and_found_once(world: World, doc_id: str, chunks: int) -> None:
    md = world.stack.metadata
    doc = md.get_document(world.who.organization_id, doc_id)
    assert doc is not None and doc.status == DocumentStatus.READY, doc and (doc.status, doc.status_reason)
    assert doc.chunk_count == chunks and len(md.get_chunks(world.who.organization_id, doc_id)) == chunks
    scope = SearchScope(organization_id=world.who.organization_id, project_ids=(doc.project_id,),
                        now=world.clock.now())
    legs = world.stack.index.search(scope, "", world.stack.services.embedder.embed_query(QUERY), 1000)
    rows = [c.chunk_id for c in legs.vector if c.document_id == doc_id]
    assert len(rows) == len(set(rows)) == chunks, "every chunk in the index exactly once"
    found = recall(world.stack.services, world.who, RecallIn(query=QUERY, project_id=doc.project_id, limit=20))
    assert [r.document_id for r in found.results].count(doc_id) == 1
    if "first" in world.extra:  # a new version: the one it replaces is hidden
        first = md.get_document(world.who.organization_id, world.extra["first"])
        assert first.superseded_by == doc_id
        assert world.extra["first"] not in [r.document_id for r in found.results]


def assert_settled_or_retrying(world: World, doc_id: str | None, chunks: int, retrying: bool) -> None:
    """Right after the failure: fully searchable, or visibly not ready with a retry scheduled."""
    if doc_id is None:
        return  # nothing was stored: the client was told (an error) and saves again
    doc = world.stack.metadata.get_document(world.who.organization_id, doc_id)
    if doc is None:
        assert retrying, "a document that vanished must be one the caller will write again"
        return
    if doc.status == DocumentStatus.READY:
        assert_ready_and_found_once(world, doc_id, chunks)
        return
    assert doc.status in (DocumentStatus.QUEUED, DocumentStatus.PROCESSING), (doc.status, doc.status_reason)
    assert retrying, f"{doc.status} without a retry scheduled"


# --------------------------------------------------------------------------- the callers


@dataclass
class Caller:
    """How a caller writes (first attempt, with faults possible) and how it retries."""

    name: str
    setup: Callable[[World], None]
    attempt: Callable[[World], str | None]  # the document id (None: nothing stored)
    retrying: Callable[[World, str | None], bool]
    retry: Callable[[World, str | None], str]


def _save(world: World, inline: bool, **extra: Any) -> str | None:
    try:
        out = save_memory(world.svc, world.who, MemoryIn(content=TEXT, title="Greenhouse", **extra), inline=inline)
    except TransientError:
        return None
    return out.id


BULK_COMPANION = "The shed roof needs two new tiles."


def _bulk_save(world: World) -> str | None:
    """POST /v3/memories: the document under test and a small one, written together."""
    outcomes = save_memories(world.svc, world.who, BulkMemoriesIn(items=[
        {"content": TEXT, "title": "Greenhouse"}, {"content": BULK_COMPANION}]))
    first = outcomes[0]
    return first.saved.id if first.saved is not None else None  # an item error: the client sends it again


def _save_retry(world: World, doc_id: str | None) -> str:
    if doc_id is None:  # the client sends the same save again after its 503
        doc_id = world.extra["attempt"](world)
        assert doc_id is not None
    world.drain()
    return doc_id


def _versioned_setup(world: World) -> None:
    """A first version, saved cleanly; the write under test is its new version (same URL)."""
    first = save_memory(world.stack.services, world.who,
                        MemoryIn(content="The greenhouse heater is off for the summer.", title="Greenhouse",
                                 source_url="https://notes.example/greenhouse"), inline=True)
    world.extra["first"] = first.id


def _save_version(world: World) -> str | None:
    return _save(world, inline=True, source_url="https://notes.example/greenhouse")


def _worker_setup(world: World) -> None:
    out = save_memory(world.stack.services, world.who, MemoryIn(content=TEXT, title="Greenhouse"), inline=False)
    world.extra["doc"] = out.id


def _drained(world: World, doc_id: str | None) -> str:
    world.drain()
    return world.extra["doc"]


# Cut into small chunks (the document's own chunking), so it needs two embedding batches.
LONG_TEXT = "\n\n".join(f"Bed {i}. The greenhouse heater keeps the seedlings of tray {i} warm." for i in range(640))


def _long_worker_setup(world: World) -> None:
    body = MemoryIn(content=LONG_TEXT, title="Greenhouse beds",
                    metadata={"chunking": {"max_tokens": 128, "overlap_tokens": 0}})
    out = save_memory(world.stack.services, world.who, body, inline=False)
    world.extra["doc"] = out.id


def _worker_attempt(world: World) -> str | None:
    IngestWorker(world.svc, world.stack.queue).run_once()
    return world.extra["doc"]


# Step Functions: the state machine retries a step that raised a TransientError.
def _run_steps(world: World, svc: Services) -> None:
    """The state machine: each step gets the artifacts of the steps before it; a step that raises
    a TransientError stops the run here and is what a Retry runs again."""
    state = world.extra.setdefault("state", {"document": {"document_id": world.extra["doc"],
                                                          "organization_id": world.who.organization_id},
                                             "artifacts": {}, "execution": "exec-1"})
    for name, fn in steps.STEPS.items():
        if name in state["artifacts"]:
            continue
        try:
            result = fn(svc, steps.StepInput.model_validate({**state, "step": name}))
        except TransientError:
            world.extra["failed_step"] = name
            return
        state["artifacts"][name] = result.model_dump(mode="json", exclude_none=True)
    world.extra.pop("failed_step", None)


def _steps_attempt(world: World) -> str | None:
    _run_steps(world, world.svc)
    return world.extra["doc"]


def _steps_retry(world: World, doc_id: str | None) -> str:
    _run_steps(world, world.stack.services)  # Retry: the failed step again, then the rest
    assert "failed_step" not in world.extra
    return world.extra["doc"]


# A documentation page, crawled by the one crawl-page function.
PAGE_URL = "https://docs.example/guide/heater.html"


class StaticFetcher:
    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        if url == PAGE_URL:
            html = "<html><head><title>Greenhouse heater</title></head><body><main>" + "".join(
                f"<p>{p}</p>" for p in TEXT.split("\n\n")) + "</main></body></html>"
            return FetchResult(url, 200, html.encode(), "text/html", None, None)
        return FetchResult(url, 404, b"", "text/plain", None, None)


def _docs_setup(world: World) -> None:
    from memlane.adapters.local.docset_store import SqliteDocsetStore

    store = SqliteDocsetStore(world.stack.db)
    project = world.stack.metadata.create_project(Project(organization_id=world.who.organization_id,
                                                          name="Docs", slug="docs-x"))
    docset = Docset(organization_id=world.who.organization_id, project_id=project.id, name="Docs",
                    base_url="https://docs.example/guide/", seed_url=PAGE_URL, seed_slug="/guide/",
                    allowed_paths=[], max_pages=10, created_at=0, updated_at=0)
    store.create_docset(docset)
    store.add_pages(docset, [PAGE_URL], 0)
    world.extra.update(store=store, docset=docset, page_id=page_id_for(docset.id, PAGE_URL))


def _crawl(world: World, svc: Services) -> DocsetPage | None:
    store, docset = world.extra["store"], world.extra["docset"]
    ctx = CrawlContext(svc=svc, store=store, fetcher=StaticFetcher(), settings=DocsetSettings(),
                       robots=RobotsCache(StaticFetcher()))
    page = store.claim_page(docset.id, world.extra["page_id"], ctx.clock_ms())
    assert page is not None, "the page is due"
    return crawl_page(ctx, docset, page).page


def _docs_attempt(world: World) -> str | None:
    _crawl(world, world.svc)
    return world.extra["page_id"]  # a page's document has the page's id


def _docs_retrying(world: World, doc_id: str | None) -> bool:
    page = world.extra["store"].get_page(world.extra["docset"].id, world.extra["page_id"])
    return page.status == PageStatus.ERROR and page.retry_at is not None


def _docs_retry(world: World, doc_id: str | None) -> str:
    page = world.extra["store"].get_page(world.extra["docset"].id, world.extra["page_id"])
    if page.status != PageStatus.INDEXED:
        world.clock.advance(minutes=5)
        assert _crawl(world, world.stack.services).status == PageStatus.INDEXED
    return world.extra["page_id"]


def _raged_attempt(world: World) -> str | None:
    body = IngestIn.model_validate({"collection": "notes", "items": [{"id": "greenhouse", "text": TEXT}]})
    with contextlib.suppress(TransientError):  # a 503 for the client; the items stay queued
        raged_ingest(world.svc, world.who, body)
    project = world.stack.metadata.find_project_by_slug(world.who.organization_id, "notes")
    if project is None:
        return None
    doc_id = document_id_for(project.id, "greenhouse")
    return doc_id if world.stack.metadata.get_document(world.who.organization_id, doc_id) else None


def _raged_retry(world: World, doc_id: str | None) -> str:
    if doc_id is None:
        return _raged_attempt(world) or pytest.fail("raged ingest wrote nothing after recovery")
    world.drain()
    return doc_id


def _reindex_setup(world: World) -> None:
    _worker_setup(world)
    IngestWorker(world.stack.services, world.stack.queue).drain()


def _reindex_attempt(world: World) -> str | None:
    try:
        requeue_everything(world.svc, world.stack.metadata, world.stack.index, world.stack.queue)
    except TransientError:
        world.extra["requeue_failed"] = True
        return world.extra["doc"]
    IngestWorker(world.svc, world.stack.queue).run_once()
    return world.extra["doc"]


def _reindex_retrying(world: World, doc_id: str | None) -> bool:
    # A reindex stopped by an outage is run again (the CLI says what is left); its jobs stay queued.
    return world.extra.get("requeue_failed", False) or world.job_pending(doc_id or "")


def _reindex_retry(world: World, doc_id: str | None) -> str:
    if world.extra.get("requeue_failed"):
        requeue_everything(world.stack.services, world.stack.metadata, world.stack.index, world.stack.queue)
    world.drain()
    return world.extra["doc"]


def _import_setup(world: World) -> None:
    source = make_world(world.extra["tmp"], "export-source")
    out = save_memory(source.stack.services, source.who, MemoryIn(content=TEXT, title="Greenhouse"), inline=True)
    world.extra["lines"] = list(export_project(source.stack.services, source.who, source.project))
    # another data directory, another organization: the document takes an id of its own (issue 34)
    world.extra["doc"] = reminted_id(world.who.organization_id, out.id)
    source.stack.close()


def _import_attempt(world: World) -> str | None:
    try:
        import_lines(world.svc, world.who, world.extra["lines"])
    except TransientError:
        return None if world.stack.metadata.get_document(world.who.organization_id, world.extra["doc"]) is None \
            else world.extra["doc"]
    return world.extra["doc"]


def _import_retry(world: World, doc_id: str | None) -> str:
    import_lines(world.stack.services, world.who, world.extra["lines"])  # idempotent: a re-run resumes
    world.drain()
    return world.extra["doc"]


def _doctor_setup(world: World) -> None:
    _reindex_setup(world)
    world.clock.advance(minutes=1)  # the repair comes later than the write it repairs
    world.stack.index.delete_document(world.who.organization_id, world.extra["doc"])  # lost from the index


def _doctor_attempt(world: World) -> str | None:
    from memlane.local.doctor import LocalInventory

    try:
        doctor.examine(world.svc, LocalInventory(world.stack), repair=True)
    except TransientError:
        world.extra["doctor_failed"] = True
    return world.extra["doc"]


def _doctor_retrying(world: World, doc_id: str | None) -> bool:
    # The repair queued the document for the job worker (or, stopped before it got there, the
    # next `memlane doctor --repair` finds it missing again).
    return world.job_pending(doc_id or "") or world.extra.get("doctor_failed", False)


def _doctor_retry(world: World, doc_id: str | None) -> str:
    from memlane.local.doctor import LocalInventory

    world.drain()
    doctor.examine(world.stack.services, LocalInventory(world.stack), repair=True)
    return world.extra["doc"]


# A connection's sync: one item at a (test-only) provider becomes a document; the connection's
# next sync is its retry, the job queue the write path's own safety net.
NOTE_ID = "note:greenhouse"


class OneNoteProvider:
    """A provider holding one note (memlane.connections.providers.base.ProviderAdapter)."""

    name = "git"
    oauth = None
    api_url = "file:///"
    relists_everything = False

    def __init__(self, text: str, version: str) -> None:
        self.text, self.version = text, version

    def session_headers(self) -> dict:
        return {}

    def classify(self, response, now):
        return None

    def auth_failed(self, response) -> bool:
        return False

    def scan(self, session, conn):
        from memlane.connections.providers.base import Batch
        from memlane.domain.connections import ItemRef

        yield Batch(upserts=[ItemRef(external_id=NOTE_ID, version=self.version)], cursor={"seen": self.version})

    def fetch(self, session, conn, ref):
        from memlane.domain.connections import Item
        from memlane.domain.models import ContentType

        return Item(external_id=NOTE_ID, version=self.version, title="Greenhouse", content=self.text,
                    content_type=ContentType.TEXT, source_url="https://notes.example/greenhouse")


def _connection_setup(world: World) -> None:
    from memlane.domain.connections import Connection, ConnectionStatus, Provider

    conn = Connection(organization_id=world.who.organization_id, provider=Provider.GIT, project_id=world.project.id,
                      name="notes", status=ConnectionStatus.ACTIVE)
    world.stack.services.connections.store.put_connection(conn)
    world.extra.update(conn=conn, provider=OneNoteProvider(TEXT, "v2"))


def _connection_versioned_setup(world: World) -> None:
    _connection_setup(world)
    from memlane.connections.sync import sync_connection

    first = OneNoteProvider("The greenhouse heater is off for the summer.", "v1")
    sync_connection(world.stack.services, world.who.organization_id, world.extra["conn"].id, adapter=first)
    record = world.stack.services.connections.store.get_item(world.extra["conn"].id, NOTE_ID)
    world.extra["first"] = record.latest_document_id


def _connection_doc(world: World) -> str | None:
    from memlane.connections.sync import document_id_for

    doc_id = document_id_for(world.extra["conn"].id, NOTE_ID, world.extra.get("first"))
    return doc_id if world.stack.metadata.get_document(world.who.organization_id, doc_id) else None


def _connection_attempt(world: World) -> str | None:
    from memlane.connections.sync import sync_connection

    sync_connection(world.svc, world.who.organization_id, world.extra["conn"].id, adapter=world.extra["provider"])
    return _connection_doc(world)


def _connection_retrying(world: World, doc_id: str | None) -> bool:
    conn = world.stack.services.connections.store.get_connection(world.who.organization_id, world.extra["conn"].id)
    return world.job_pending(doc_id or "") or NOTE_ID in conn.pending_items


def _connection_retry(world: World, doc_id: str | None) -> str:
    """The worker runs due jobs, then the connection's next sync (15 minutes later) runs."""
    from memlane.connections.sync import sync_connection

    world.drain()
    result = sync_connection(world.stack.services, world.who.organization_id, world.extra["conn"].id,
                             adapter=world.extra["provider"])
    assert result is not None and result.errors == [], result
    doc_id = _connection_doc(world)
    assert doc_id is not None
    return doc_id


def _connection_restart(world: World) -> None:
    from memlane.connections.sync import LEASE

    _restart(world)
    world.clock.advance(seconds=LEASE.total_seconds())  # the dead sync's lease has expired
    _connection_retry(world, None)


CALLERS = [
    Caller("save", lambda w: None, lambda w: _save(w, inline=True),
           lambda w, d: w.job_pending(d or ""), _save_retry),
    Caller("bulk-save", lambda w: None, _bulk_save, lambda w, d: w.job_pending(d or ""), _save_retry),
    Caller("save-new-version", _versioned_setup, _save_version,
           lambda w, d: w.job_pending(d or ""), _save_retry),
    Caller("worker", _worker_setup, _worker_attempt, lambda w, d: w.job_pending(d or ""), _drained),
    Caller("worker-long-document", _long_worker_setup, _worker_attempt, lambda w, d: w.job_pending(d or ""),
           _drained),
    Caller("step-functions", _worker_setup, _steps_attempt, lambda w, d: "failed_step" in w.extra,
           _steps_retry),
    Caller("docs-page", _docs_setup, _docs_attempt, _docs_retrying, _docs_retry),
    Caller("raged-ingest", lambda w: None, _raged_attempt, lambda w, d: w.job_pending(d or ""), _raged_retry),
    Caller("reindex", _reindex_setup, _reindex_attempt, _reindex_retrying, _reindex_retry),
    Caller("import", _import_setup, _import_attempt, lambda w, d: w.job_pending(d or ""), _import_retry),
    Caller("doctor-repair", _doctor_setup, _doctor_attempt, _doctor_retrying, _doctor_retry),
    Caller("connection-sync", _connection_setup, _connection_attempt, _connection_retrying, _connection_retry),
    Caller("connection-sync-new-version", _connection_versioned_setup, _connection_attempt, _connection_retrying,
           _connection_retry),
]


def _clean_run(tmp_path, caller: Caller) -> tuple[list[str], int]:
    world = make_world(tmp_path, f"clean-{caller.name}")
    world.extra["tmp"] = tmp_path
    caller.setup(world)
    world.faults.record()
    doc_id = caller.attempt(world)
    assert doc_id is not None
    doc = world.stack.metadata.get_document(world.who.organization_id, doc_id)
    assert doc.status == DocumentStatus.READY, (caller.name, doc.status_reason)
    calls = list(world.faults.calls)
    world.stack.close()
    return calls, doc.chunk_count


@pytest.mark.parametrize("caller", CALLERS, ids=[c.name for c in CALLERS])
def test_a_failure_between_any_two_stores_leaves_the_document_searchable_or_visibly_retried(tmp_path, caller):
    # Given the store calls a clean write makes for this caller
    calls, chunks = _clean_run(tmp_path, caller)
    assert chunks >= 3 and "index.upsert" in calls and "metadata.put_chunks" in calls
    for position, call in enumerate(calls):
        # When exactly that call fails (a fresh store each time)
        world = make_world(tmp_path, f"{caller.name}-{position}")
        world.extra.update(tmp=tmp_path, attempt=caller.attempt)
        caller.setup(world)
        world.faults.fail_call(position)
        doc_id = caller.attempt(world)
        world.faults.recover()
        assert world.faults.injected == [call], f"{caller.name}: the failure hit {call} at {position}"
        # Then the document is searchable, or visibly not ready with a retry on its way
        assert_settled_or_retrying(world, doc_id, chunks, caller.retrying(world, doc_id))
        # and after the retry it is ready and found exactly once
        doc_id = caller.retry(world, doc_id)
        assert_ready_and_found_once(world, doc_id, chunks)
        world.stack.close()


@pytest.mark.parametrize("caller", [c for c in CALLERS if c.name in ("save", "worker", "raged-ingest",
                                                                      "docs-page", "step-functions",
                                                                      "connection-sync")],
                         ids=lambda c: c.name)
@pytest.mark.parametrize("method", ["embedder.embed_documents", "index.upsert", "metadata.put_chunks"])
def test_a_store_down_for_the_whole_attempt_leaves_the_document_visibly_queued(tmp_path, caller, method):
    # Given one store down for the whole first attempt
    _, chunks = _clean_run(tmp_path, caller)
    world = make_world(tmp_path, f"down-{caller.name}-{method}")
    world.extra.update(tmp=tmp_path, attempt=caller.attempt)
    caller.setup(world)
    world.faults.fail_method(method)
    doc_id = caller.attempt(world)
    world.faults.recover()
    # Then nothing says ready that cannot be found, and the caller retries
    assert doc_id is not None
    doc = world.stack.metadata.get_document(world.who.organization_id, doc_id)
    assert doc.status in (DocumentStatus.QUEUED, DocumentStatus.PROCESSING)
    assert doc.status_reason and "unavailable" in doc.status_reason
    assert caller.retrying(world, doc_id)
    # and once it is back the document is ready and found once
    assert_ready_and_found_once(world, caller.retry(world, doc_id), chunks)
    world.stack.close()


def test_the_faults_harness_reaches_every_store_of_a_versioned_save(tmp_path):
    # The clean run of a new version touches every store the write path owns, in this order
    calls, _ = _clean_run(tmp_path, next(c for c in CALLERS if c.name == "save-new-version"))
    firsts = list(dict.fromkeys(calls))
    assert firsts == ["metadata.add_document", "embedder.embed_documents", "metadata.put_chunks",
                      "index.upsert", "metadata.put_document", "index.set_superseded", "cache.bump_generation"], \
        json.dumps(calls)
    # and a document needing several embedding batches keeps and then clears its progress
    calls, _ = _clean_run(tmp_path, next(c for c in CALLERS if c.name == "worker-long-document"))
    assert "blobs.put" in calls and calls[-1] == "blobs.delete_prefix"


# --------------------------------------------------------------------------- the process dies


def _stored(world: World) -> list[Document]:
    md = world.stack.metadata
    return [d for p in md.list_projects(world.who.organization_id)
            for d in md.list_documents(world.who.organization_id, p.id)
            if d.id != world.extra.get("first") and not d.content.startswith(BULK_COMPANION)]


def _restart(world: World) -> None:
    """What the next start does: leases of the dead worker are void, due jobs run (every job
    queued as a safety net is due once its time has passed)."""
    world.stack.queue.release_leases()
    world.drain()


def _recover_docs(world: World) -> None:
    # The page stayed `processing`: past the stuck timer, the next worker reclaims it.
    world.clock.advance(minutes=10)
    store, docset = world.extra["store"], world.extra["docset"]
    now = int(world.clock.now().timestamp() * 1000)
    page = store.claim_page(docset.id, world.extra["page_id"], now,
                            stuck_before=now - DocsetSettings().stuck_after_s * 1000)
    if page is not None:
        ctx = CrawlContext(svc=world.stack.services, store=store, fetcher=StaticFetcher(), settings=DocsetSettings(),
                           robots=RobotsCache(StaticFetcher()))
        assert crawl_page(ctx, docset, page).page.status == PageStatus.INDEXED


CRASH_RECOVERY: dict[str, Callable[[World], None]] = {
    "save": _restart,
    "save-new-version": _restart,
    "bulk-save": _restart,
    "worker": _restart,
    "worker-long-document": _restart,
    "step-functions": lambda w: _run_steps(w, w.stack.services),  # the Lambda's error is retried
    "docs-page": _recover_docs,
    "raged-ingest": _restart,
    "reindex": lambda w: (requeue_everything(w.stack.services, w.stack.metadata, w.stack.index, w.stack.queue)
                          if w.extra.get("crashed_in_requeue") else None, _restart(w)),
    "import": _restart,
    "doctor-repair": _restart,
    "connection-sync": _connection_restart,
    "connection-sync-new-version": _connection_restart,
}


@pytest.mark.parametrize("caller", CALLERS, ids=[c.name for c in CALLERS])
def test_a_process_dying_between_any_two_stores_leaves_nothing_stuck(tmp_path, caller):
    from faults import Crash

    calls, chunks = _clean_run(tmp_path, caller)
    for position, call in enumerate(calls):
        # Given the process dies at exactly this call (nothing after it runs, no handler)
        world = make_world(tmp_path, f"crash-{caller.name}-{position}")
        world.extra.update(tmp=tmp_path, attempt=caller.attempt)
        caller.setup(world)
        world.faults.crash_at(position)
        try:
            caller.attempt(world)
        except Crash:
            world.extra["crashed_in_requeue"] = caller.name == "reindex" and call == "metadata.set_status" \
                and not world.job_pending(world.extra["doc"])
        world.faults.recover()
        assert world.faults.injected == [call]
        # When it restarts (or the platform retries)
        CRASH_RECOVERY[caller.name](world)
        # Then the document is written exactly once, or (killed before anything was stored) absent
        stored = _stored(world)
        if not stored:
            assert position == 0 and caller.name in ("save", "bulk-save", "save-new-version", "raged-ingest",
                                                     "import"), \
                f"{caller.name}: the document vanished after a crash at {call}"
            continue
        (doc,) = stored
        assert_ready_and_found_once(world, doc.id, chunks)
        world.stack.close()
