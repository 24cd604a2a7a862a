"""`memlane doctor`: compare a deployment's stores and report (or repair) what disagrees.

The metadata store is the source of truth; the search index (text and vectors), per-document
records (chunks, dedupe entries), stored content and the cache are projections of it. After a
delete or a forget nothing of the document may remain in any of them, and a ready document must be
searchable. Expected: zero of every kind.

The comparison and the repairs are the same for every backend; what differs is how a backend lists
everything it holds, which is an `Inventory` (memlane.ports.inventory; memlane.local.doctor for the embedded default,
memlane.adapters.aws.doctor for DynamoDB + OpenSearch + S3). Repairs go through the ports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlane.domain.models import DocumentStatus
from memlane.ports import Inventory, Services, StoredDocument
from memlane.services.doctor_resends import ResentCopy, find_resent_copies, remove_resent_copies
from memlane.services.reindex import reindex

# Workflow staging (work/…) and queued payloads (raw/…) outlive nothing: once the document is
# ready or failed they are leftovers. Stored content (content/…) and originals (media/…: an image,
# a scan, a recording) belong to a document while it exists.
_TRANSIENT_KINDS = frozenset({"work", "raw"})
_FINISHED = frozenset({DocumentStatus.READY.value, DocumentStatus.FAILED.value})


@dataclass
class DoctorReport:
    index_orphans: list[str] = field(default_factory=list)  # indexed, but no document
    missing_from_index: list[str] = field(default_factory=list)  # ready, but not searchable
    chunk_orphans: list[str] = field(default_factory=list)  # chunk/dedupe records without a document
    blob_orphans: list[str] = field(default_factory=list)  # content of deleted documents, stale staging
    cache_orphans: list[str] = field(default_factory=list)  # cached results naming deleted documents
    unrepairable: list[str] = field(default_factory=list)  # index orphans of an unknown organization
    wrong_modes: list[str] = field(default_factory=list)  # data-directory paths others may read (local)
    # messages stored again when a chat client re-sent their conversation (memlane.services.doctor_resends)
    conversation_duplicates: list[str] = field(default_factory=list)
    damaged_snapshot: list[str] = field(default_factory=list)  # the saved vector index fails its checks (local)
    search_snapshot: str | None = None  # the line about the saved vector index (local)
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
                self.wrong_modes,
                self.conversation_duplicates,
                self.damaged_snapshot,
            )
        )

    def as_dict(self) -> dict:
        out: dict = {
            "index_orphans": len(self.index_orphans),
            "missing_from_index": len(self.missing_from_index),
            "chunk_orphans": len(self.chunk_orphans),
            "blob_orphans": len(self.blob_orphans),
            "cache_orphans": len(self.cache_orphans),
            "wrong_modes": len(self.wrong_modes),
            "conversation_duplicates": len(self.conversation_duplicates),
        }
        if self.search_snapshot is not None:
            out["search_snapshot"] = self.search_snapshot
        return {**out, "total": self.total, "repaired": self.repaired}


@dataclass
class _Findings:
    report: DoctorReport
    docs: dict[str, StoredDocument]
    index_orphan_orgs: dict[str, str]  # orphan document id → the organization it is indexed under
    resent: list[ResentCopy] = field(default_factory=list)


def examine(svc: Services, inventory: Inventory, repair: bool = False) -> DoctorReport:
    """Compare the stores; with `repair`, fix what was found and report what was found."""
    found = _compare(inventory)
    found.resent = find_resent_copies(svc, inventory.organizations())
    found.report.conversation_duplicates = [c.copy.id for c in found.resent]
    if repair and found.report.total:
        _repair(svc, inventory, found)
        found.report.repaired = True
    return found.report


def _compare(inventory: Inventory) -> _Findings:
    docs = inventory.documents()
    report = DoctorReport()
    orphan_orgs: dict[str, str] = {}
    indexed: set[str] = set()
    for org_id in inventory.organizations():
        ids = inventory.indexed_documents(org_id)
        indexed |= ids
        orphan_orgs.update({doc_id: org_id for doc_id in ids - docs.keys()})
    # Anything indexed under an organization the metadata store does not know.
    strays = inventory.indexed_documents(None) - indexed - docs.keys()
    indexed |= strays
    report.index_orphans = sorted(orphan_orgs.keys() | strays)
    report.unrepairable = sorted(strays)
    report.missing_from_index = sorted(
        doc_id
        for doc_id, doc in docs.items()
        if doc.status == DocumentStatus.READY.value and doc.chunk_count > 0 and doc_id not in indexed
    )
    report.chunk_orphans = sorted(inventory.record_documents() - docs.keys())
    report.blob_orphans = sorted(
        blob.key
        for blob in inventory.blobs()
        if blob.document_id not in docs
        or docs[blob.document_id].organization_id != blob.organization_id  # a key of no document of its own
        or (blob.kind in _TRANSIENT_KINDS and docs[blob.document_id].status in _FINISHED)
    )
    report.cache_orphans = sorted(inventory.cached_documents() - docs.keys())
    return _Findings(report, docs, orphan_orgs)


def _repair(svc: Services, inventory: Inventory, found: _Findings) -> None:
    report = found.report
    remove_resent_copies(svc, found.resent)  # first: what the checks below found of them is gone with them
    for doc_id, org_id in found.index_orphan_orgs.items():
        svc.index.delete_document(org_id, doc_id)
    # Written again from their chunk records (the same chunks, embedded and indexed), or queued
    # when they have none: what `memlane reindex --aws` does for every ready document.
    reindex(svc, inventory, only=report.missing_from_index)
    inventory.delete_records(report.chunk_orphans)
    for key in report.blob_orphans:
        svc.blobs.delete(key)
    if svc.cache is not None:
        for doc_id in report.cache_orphans:
            svc.cache.purge_document(doc_id)
