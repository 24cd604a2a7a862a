"""Filling a search index from the metadata store, the source of truth: `memlane reindex --aws` (after
switching `searchBackend`, or the embedding model, of a live stack) and the doctor's repair of ready
documents missing from the index (memlane.services.doctor).

Each ready document is written again from its chunk records through the one write path
(memlane.documents.writing.write_in_request): the same chunks embedded with the configured embedder
and indexed with their kind, context and version flag, a safety-net job queued first so that a
transient failure (Bedrock throttling, the index unavailable) is retried by the stack's consumer. A
ready document without chunk records is queued to be processed again. Documents that are queued,
processing or failed are left to the paths that own them; deleted ones are not in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memlane.documents.writer import WriteRequest, pieces_of
from memlane.documents.writing import write_in_request
from memlane.domain.models import DocumentStatus, IngestJob
from memlane.ports import Inventory, Services

BATCH = 16  # documents written (and embedded) together


@dataclass
class ReindexReport:
    written: list[str] = field(default_factory=list)  # indexed again from their chunk records
    requeued: list[str] = field(default_factory=list)  # no chunk records: processed again by the workflow
    deferred: list[str] = field(default_factory=list)  # a transient failure: their safety-net job retries
    failed: list[str] = field(default_factory=list)  # refused for good (their status says why)
    skipped: int = 0  # not ready (queued, processing, failed) or empty

    def as_dict(self) -> dict[str, int]:
        return {"written": len(self.written), "requeued": len(self.requeued), "deferred": len(self.deferred),
                "failed": len(self.failed), "skipped": self.skipped}


def reindex(svc: Services, inventory: Inventory, *, only: Iterable[str] | None = None,
            progress: Callable[[int, int], None] | None = None) -> ReindexReport:
    """Write every ready document (or those of `only`) into `svc.index` again. `progress(done, total)`
    is called after each batch."""
    documents = inventory.documents()
    wanted = set(only) if only is not None else None
    ready = sorted((doc.organization_id, doc_id) for doc_id, doc in documents.items()
                   if doc.status == DocumentStatus.READY.value and doc.chunk_count > 0
                   and (wanted is None or doc_id in wanted))
    report = ReindexReport(skipped=len(documents) - len(ready) if wanted is None else 0)
    by_org: dict[str, list[str]] = {}
    for org_id, doc_id in ready:
        by_org.setdefault(org_id, []).append(doc_id)
    done = 0
    for org_id, doc_ids in by_org.items():
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            write_again(svc, org_id, batch, report)
            done += len(batch)
            if progress is not None:
                progress(done, len(ready))
    return report


def write_again(svc: Services, org_id: str, doc_ids: list[str], report: ReindexReport) -> None:
    """One organization's documents written again from their chunk records (or queued when they have
    none), each outcome noted in `report`."""
    requests: list[WriteRequest] = []
    for doc in svc.metadata.get_documents(org_id, doc_ids):
        chunks = svc.metadata.get_chunks(org_id, doc.id)
        if chunks:
            requests.append(WriteRequest(doc, pieces=pieces_of(chunks), summarize=False))
        else:  # nothing to index from: process the document again
            svc.metadata.set_status(org_id, doc.id, DocumentStatus.QUEUED, "re-queued: no chunk records")
            svc.queue.enqueue(IngestJob(document_id=doc.id, organization_id=org_id))
            report.requeued.append(doc.id)
    for outcome in write_in_request(svc, requests) if requests else []:
        if outcome.ok:
            report.written.append(outcome.document_id)
        elif outcome.transient:
            report.deferred.append(outcome.document_id)
        else:
            report.failed.append(outcome.document_id)
