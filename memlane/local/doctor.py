"""`memlane doctor`: compare the embedded default's stores and report (or repair) orphans.

The metadata store is the source of truth; the search index, chunk records, queued raw
payloads and the cache are projections of it. Expected: zero of every kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlane.domain.models import DocumentStatus
from memlane.ingest.pipeline import IngestPipeline
from memlane.local.compose import LocalStack


@dataclass
class DoctorReport:
    index_orphans: list[str] = field(default_factory=list)  # indexed, but no document
    missing_from_index: list[str] = field(default_factory=list)  # ready, but not searchable
    chunk_orphans: list[str] = field(default_factory=list)  # chunk records without a document
    blob_orphans: list[str] = field(default_factory=list)  # raw payloads of finished/deleted documents
    cache_orphans: list[str] = field(default_factory=list)  # cached results naming deleted documents
    repaired: bool = False

    @property
    def total(self) -> int:
        return sum(
            len(v)
            for v in (
                self.index_orphans,
                self.missing_from_index,
                self.chunk_orphans,
                self.blob_orphans,
                self.cache_orphans,
            )
        )

    def as_dict(self) -> dict:
        return {
            "index_orphans": len(self.index_orphans),
            "missing_from_index": len(self.missing_from_index),
            "chunk_orphans": len(self.chunk_orphans),
            "blob_orphans": len(self.blob_orphans),
            "cache_orphans": len(self.cache_orphans),
            "total": self.total,
            "repaired": self.repaired,
        }


def examine(stack: LocalStack, repair: bool = False) -> DoctorReport:
    conn = stack.db.connection()
    docs = {
        r["id"]: (r["organization_id"], r["status"], r["chunk_count"])
        for r in conn.execute("SELECT id, organization_id, status, chunk_count FROM documents")
    }
    report = DoctorReport()
    indexed = {
        r["document_id"]: r["organization_id"]
        for r in conn.execute("SELECT DISTINCT document_id, organization_id FROM search_rows")
    }
    report.index_orphans = sorted(set(indexed) - set(docs))
    report.missing_from_index = sorted(
        d
        for d, (_, status, count) in docs.items()
        if status == DocumentStatus.READY.value and count > 0 and d not in indexed
    )
    report.chunk_orphans = sorted(
        {r["document_id"] for r in conn.execute("SELECT DISTINCT document_id FROM chunks")} - set(docs)
    )
    report.blob_orphans = sorted(
        key
        for key in stack.services.blobs.keys("raw/")
        if key.rsplit("/", 1)[-1] not in docs or docs[key.rsplit("/", 1)[-1]][1] == DocumentStatus.READY.value
    )
    report.cache_orphans = sorted(stack.services.cache.document_ids() - set(docs))
    if repair and report.total:
        _repair(stack, report, indexed, docs)
        report.repaired = True
    return report


def _repair(stack: LocalStack, report: DoctorReport, indexed: dict, docs: dict) -> None:
    svc = stack.services
    for doc_id in report.index_orphans:
        svc.index.delete_document(indexed[doc_id], doc_id)
    pipeline = IngestPipeline(svc)
    for doc_id in report.missing_from_index:
        org = docs[doc_id][0]
        chunks = svc.metadata.get_chunks(org, doc_id)
        if chunks:
            pipeline.index(chunks, pipeline.embed(chunks))
        else:
            svc.metadata.set_status(
                org, doc_id, DocumentStatus.QUEUED, "re-queued by doctor: no chunk records"
            )
            from memlane.domain.models import IngestJob

            svc.queue.enqueue(IngestJob(document_id=doc_id, organization_id=org))
    with stack.db.transaction() as conn:
        for doc_id in report.chunk_orphans:
            conn.execute("DELETE FROM chunks WHERE document_id = ?", (doc_id,))
    for key in report.blob_orphans:
        svc.blobs.delete(key)
    for doc_id in report.cache_orphans:
        svc.cache.purge_document(doc_id)
