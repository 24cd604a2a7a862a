"""Where a document's files live in the blob store (S3 on AWS, SQLite locally), and the one list of
them: `document_keys`. The removal path (memlane.documents.lifecycle) deletes exactly that list and
a deletion receipt (memlane.documents.receipts) reads exactly that list back, so a kind of file
added to a document's life is added here, once, and is then both deleted and verified. The doctor
(memlane.services.doctor) reads these kinds back from a key (memlane.ports.inventory.stored_blob)."""

from __future__ import annotations

from dataclasses import dataclass


def content_key(org_id: str, document_id: str) -> str:
    """Its cleaned text, when too large for the metadata record (DynamoDB items stop at 400 KB)."""
    return f"content/{org_id}/{document_id}.txt"


def media_key(org_id: str, document_id: str) -> str:
    """Where a document's original is kept (an image, a scanned PDF, a recording)."""
    return f"media/{org_id}/{document_id}"


def raw_key(org_id: str, document_id: str) -> str:
    """A queued save's payload (kept by older deployments; removed with the document)."""
    return f"raw/{org_id}/{document_id}"


def work_prefix(org_id: str, document_id: str) -> str:
    """Where the ingestion workflow stages a document's text, chunks and vectors (one folder per
    execution below it) and where embedding progress waits between attempts. Finished workflows'
    files expire by the bucket's lifecycle rule; a removed document's go with it."""
    return f"work/{org_id}/{document_id}/"


@dataclass(frozen=True)
class DocumentKeys:
    """Every blob a document's life may write: single keys and whole folders."""

    keys: tuple[str, ...]
    prefixes: tuple[str, ...]


def document_keys(org_id: str, document_id: str) -> DocumentKeys:
    """The one list: what removal deletes and what a receipt verifies."""
    return DocumentKeys(
        keys=(content_key(org_id, document_id), media_key(org_id, document_id), raw_key(org_id, document_id)),
        prefixes=(work_prefix(org_id, document_id),),
    )
