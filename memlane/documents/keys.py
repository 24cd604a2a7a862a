"""Where a document's files live in the blob store (S3 on AWS, SQLite locally). The doctor
(memlane.services.doctor) reads these kinds back from a key; a deletion receipt reads each again."""

from __future__ import annotations


def content_key(org_id: str, document_id: str) -> str:
    """Its cleaned text, when too large for the metadata record (DynamoDB items stop at 400 KB)."""
    return f"content/{org_id}/{document_id}.txt"


def media_key(org_id: str, document_id: str) -> str:
    """Where a document's original is kept (memlane.services.doctor knows the `media/` kind)."""
    return f"media/{org_id}/{document_id}"




def raw_key(org_id: str, document_id: str) -> str:
    return f"raw/{org_id}/{document_id}"




def work_prefix(org_id: str, document_id: str) -> str:
    """Where the ingestion workflow stages a document's text, chunks and vectors (one folder per
    execution below it). Finished workflows' files expire by the bucket's lifecycle rule; a
    removed document's go with it."""
    return f"work/{org_id}/{document_id}/"


