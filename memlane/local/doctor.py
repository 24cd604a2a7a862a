"""The embedded default's inventory for `memlane doctor` (memlane.services.doctor compares and
repairs): documents, chunk records and blobs from the SQLite database, the indexed documents from
the search index, cached document ids from the cache."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from memlane.adapters.local.private_files import repair_modes, wrong_modes
from memlane.local.compose import LocalStack
from memlane.ports import BLOB_KINDS, StoredBlob, StoredDocument, stored_blob
from memlane.services import doctor
from memlane.services.doctor import DoctorReport

__all__ = ["DoctorReport", "LocalInventory", "examine"]


class LocalInventory:
    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack

    def organizations(self) -> list[str]:
        return [r["id"] for r in self.stack.db.connection().execute("SELECT id FROM organizations")]

    def documents(self) -> dict[str, StoredDocument]:
        rows = self.stack.db.connection().execute(
            "SELECT id, organization_id, status, chunk_count FROM documents"
        )
        return {r["id"]: StoredDocument(r["organization_id"], r["status"], r["chunk_count"]) for r in rows}

    def indexed_documents(self, org_id: str | None) -> set[str]:
        return self.stack.services.index.document_ids(org_id)

    def record_documents(self) -> set[str]:
        rows = self.stack.db.connection().execute("SELECT DISTINCT document_id FROM chunks")
        return {r["document_id"] for r in rows}

    def blobs(self) -> Iterator[StoredBlob]:
        # Every kind a document's life writes (memlane.documents.keys): work/{org}/{doc}/… (embedding
        # progress, and the workflow's staging when the Step Functions steps run here through
        # `memlane invoke`), media/{org}/{doc} (the originals of images, scans and recordings), and
        # raw/ and content/, which the embedded default does not write but would still be orphans.
        for kind in BLOB_KINDS:
            for key in self.stack.services.blobs.keys(f"{kind}/"):
                if (blob := stored_blob(key)) is not None:
                    yield blob

    def cached_documents(self) -> set[str]:
        return self.stack.cache.document_ids()

    def delete_records(self, document_ids: Iterable[str]) -> None:
        with self.stack.db.transaction() as conn:
            conn.executemany("DELETE FROM chunks WHERE document_id = ?", [(d,) for d in document_ids])


def examine(stack: LocalStack, repair: bool = False) -> DoctorReport:
    report = doctor.examine(stack.services, LocalInventory(stack), repair=repair)
    # The data directory holds every organization's memories in plain text: 0700, files 0600.
    data_dir = stack.services.settings.data_dir
    report.wrong_modes = wrong_modes(data_dir)
    if repair and report.wrong_modes:
        repair_modes(data_dir)
        report.repaired = True
    # The saved vector index, checked as a start checks it (a damaged one is rebuilt from SQLite).
    snapshot = stack.index.snapshot_status()
    report.search_snapshot = snapshot.line
    report.damaged_snapshot = [snapshot.damaged] if snapshot.damaged else []
    if repair and snapshot.damaged:
        stack.index.discard_snapshot()
        report.repaired = True
    return report
