"""What `memlane doctor` reads of a deployment (memlane.services.doctor): everything its stores hold,
listed in full by an Inventory (memlane.local.doctor, memlane.adapters.aws.doctor)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class StoredDocument:
    organization_id: str
    status: str
    chunk_count: int


@dataclass(frozen=True)
class StoredBlob:
    key: str
    document_id: str
    kind: str  # "content" | "work" | "raw" | "media"
    organization_id: str = ""  # the organization the key names


BLOB_KINDS = ("content", "work", "raw", "media")


def stored_blob(key: str) -> StoredBlob | None:
    """What a blob key says about its document: content/{org}/{doc}.txt, work/{org}/{doc}/…,
    raw/{org}/{doc}, media/{org}/{doc}. None for keys of no document."""
    parts = key.split("/")
    if len(parts) < 3 or parts[0] not in BLOB_KINDS:
        return None
    doc_id = parts[2].removesuffix(".txt") if parts[0] == "content" else parts[2]
    return StoredBlob(key=key, document_id=doc_id, kind=parts[0], organization_id=parts[1])


class Inventory(Protocol):
    """Everything one deployment's stores hold, listed in full (an operator's tool, not a request
    path: full scans are expected here)."""

    def organizations(self) -> list[str]: ...
    def documents(self) -> dict[str, StoredDocument]: ...
    def indexed_documents(self, org_id: str | None) -> set[str]: ...
    def record_documents(self) -> set[str]: ...
    def blobs(self) -> Iterable[StoredBlob]: ...
    def cached_documents(self) -> set[str]: ...
    def delete_records(self, document_ids: Iterable[str]) -> None: ...
