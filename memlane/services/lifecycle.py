"""A document's life after it is written (memlane.ingest.writer makes it searchable and hides the
version it replaces): its versions, being deleted or forgotten. Every removal goes through `remove_document`, so metadata, content,
the text index, the vector index and the cache can never disagree about what exists."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from memlane import observability
from memlane.domain.models import Document
from memlane.ports import Services

log = logging.getLogger(__name__)


def project_scope_key(org_id: str, project_id: str) -> str:
    return f"{org_id}:{project_id}"


def invalidate_project(svc: Services, org_id: str, project_id: str) -> None:
    """One write makes every cached recall over this project unreachable."""
    if svc.cache is not None:
        svc.cache.bump_generation(project_scope_key(org_id, project_id))


def raw_key(org_id: str, document_id: str) -> str:
    return f"raw/{org_id}/{document_id}"


def work_prefix(org_id: str, document_id: str) -> str:
    """Where the ingestion workflow stages a document's text, chunks and vectors (one folder per
    execution below it). Finished workflows' files expire by the bucket's lifecycle rule; a
    removed document's go with it."""
    return f"work/{org_id}/{document_id}/"


def remove_document(svc: Services, doc: Document) -> None:
    """Remove a document everywhere. The index goes first: if a later step failed, the document
    would still be listed (and removable again), never a hidden orphan in the index.

    Deleting one version re-links its neighbours, so the chain stays whole and the previous
    version becomes the latest again when the newest is removed."""
    org = doc.organization_id
    # The memories indexed with this one as context (memlane.ingest.context) are rebuilt without
    # it, so its words leave the index with it.
    from memlane.ingest.context import carriers

    carrying = carriers(svc, svc.settings.context, org, [doc.id], svc.clock.now())
    svc.index.delete_document(org, doc.id)
    svc.blobs.delete(raw_key(org, doc.id))
    svc.blobs.delete_prefix(work_prefix(org, doc.id))
    svc.metadata.delete_document(org, doc.id)
    if svc.cache is not None:
        svc.cache.purge_document(doc.id)
    prev = svc.metadata.get_document(org, doc.updates_memory_id) if doc.updates_memory_id else None
    nxt = svc.metadata.get_document(org, doc.superseded_by) if doc.superseded_by else None
    if nxt is not None:
        svc.metadata.put_document(nxt.model_copy(update={"updates_memory_id": prev.id if prev else None}))
    if prev is not None and prev.superseded_by == doc.id:
        svc.metadata.put_document(prev.model_copy(update={"superseded_by": nxt.id if nxt else None}))
        if nxt is None:
            svc.index.set_superseded(org, prev.id, False)
    if carrying:
        from memlane.ingest.writer import DocumentWriter  # the writer imports this module

        try:
            DocumentWriter(svc).rebuild(org, sorted(carrying))
        except Exception:  # noqa: BLE001 - the document is gone; its neighbours are rebuilt on their next write
            log.warning("could not rebuild the context of the memories around %s", doc.id, exc_info=True)
    invalidate_project(svc, org, doc.project_id)


def version_chain(svc: Services, doc: Document) -> list[Document]:
    """All versions of a document, oldest first."""
    org = doc.organization_id
    seen = {doc.id}
    older: list[Document] = []
    cur = doc
    while cur.updates_memory_id and cur.updates_memory_id not in seen:
        prev = svc.metadata.get_document(org, cur.updates_memory_id)
        if prev is None:
            break
        seen.add(prev.id)
        older.append(prev)
        cur = prev
    newer: list[Document] = []
    cur = doc
    while cur.superseded_by and cur.superseded_by not in seen:
        nxt = svc.metadata.get_document(org, cur.superseded_by)
        if nxt is None:
            break
        seen.add(nxt.id)
        newer.append(nxt)
        cur = nxt
    return [*reversed(older), doc, *newer]


def latest_version(svc: Services, doc: Document) -> Document:
    return version_chain(svc, doc)[-1]


@dataclass
class SweepReport:
    forgotten: int = 0
    by_organization: dict[str, int] = field(default_factory=dict)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    receipts: list[str] = field(default_factory=list)  # one deletion receipt per forgotten document
    unverified: list[str] = field(default_factory=list)  # receipts where a store still held something

    def as_dict(self) -> dict:
        return {
            "forgotten": self.forgotten,
            "by_organization": self.by_organization,
            "receipts": len(self.receipts),
            "unverified_receipts": self.unverified,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


def forget_expired(svc: Services, now: datetime | None = None, batch: int = 500) -> SweepReport:
    """The auto-forget sweep (spec §10). Idempotent: a second run (a schedule firing twice) finds
    nothing; a missed run is caught up by the next, since it selects by forget_after ≤ now."""
    from memlane.services.receipts import delete_with_receipt  # receipts builds on this module

    now = now or svc.clock.now()
    report = SweepReport(started_at=svc.clock.now())
    while True:
        expired = svc.metadata.expired_documents(now, batch)
        if not expired:
            break
        for doc in expired:
            receipt = delete_with_receipt(svc, doc.organization_id, [doc], "auto-forget",
                                          forgotten="forget_after reached")
            report.receipts.append(receipt.id)
            if not receipt.verified:
                report.unverified.append(receipt.id)
            report.forgotten += 1
            report.by_organization[doc.organization_id] = (
                report.by_organization.get(doc.organization_id, 0) + 1
            )
        if len(expired) < batch:
            break
    report.finished_at = svc.clock.now()
    svc.metrics.count(observability.FORGET_SWEEPS)
    if report.forgotten:
        svc.metrics.count(observability.DOCUMENTS_FORGOTTEN, report.forgotten)
        log.info("auto-forget removed %d documents", report.forgotten)
    return report


def forgotten_log(svc: Services, org_id: str, limit: int) -> list[dict]:
    """What the sweep forgot for an organization, newest first: ids, when and why, never content."""
    return list(reversed(svc.metadata.list_forgotten(org_id, limit)))
