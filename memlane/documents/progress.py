"""Embedding progress kept between attempts (spec §13 Error Recovery 3, reliability row 5): when
3 of 5 batches embed and the 4th fails, the 3 are saved and the retry embeds only the rest.

Vectors are kept in the blob store (SQLite locally, S3 on AWS) under the document's work folder,
`work/{org}/{document}/embedded/{batch}.json`, one file per successful batch, keyed by a hash of the
embedder id and the exact text embedded, so a retry that chunks differently or runs with another
embedder simply finds nothing to reuse. Nothing is written when a document's chunks fit in one
batch (there is nothing to resume), so the common case costs one prefix listing. The folder is
cleared once the document is indexed, and goes with the document if it is deleted first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from memlane.documents.keys import work_prefix
from memlane.ports import BlobStore


def embedding_key(embedder_id: str, text: str) -> str:
    return hashlib.sha256(f"{embedder_id}\n{text}".encode()).hexdigest()


def progress_prefix(org_id: str, document_id: str) -> str:
    return f"{work_prefix(org_id, document_id)}embedded/"


class EmbeddingProgress:
    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs

    def load(self, org_id: str, document_id: str) -> dict[str, list[float]]:
        """Vectors saved by earlier attempts for this document, by embedding key."""
        found: dict[str, list[float]] = {}
        for key in self.blobs.keys(progress_prefix(org_id, document_id)):
            data = self.blobs.get(key)
            if data:
                found.update(json.loads(data))
        return found

    def save(self, org_id: str, document_id: str, vectors: Mapping[str, Sequence[float]]) -> None:
        if not vectors:
            return
        prefix = progress_prefix(org_id, document_id)
        name = hashlib.sha256("".join(sorted(vectors)).encode()).hexdigest()[:24]
        self.blobs.put(f"{prefix}{name}.json", json.dumps({k: list(v) for k, v in vectors.items()}).encode())

    def clear(self, org_id: str, document_id: str) -> None:
        self.blobs.delete_prefix(progress_prefix(org_id, document_id))
