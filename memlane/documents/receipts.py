"""Deletion receipts: proof, per delete, that nothing of the deleted documents is left.

Every delete path (DELETE /v3/documents/{id}, the auto-forget sweep, a docset delete, a
connection delete) removes documents through memlane's one removal path
(memlane.documents.lifecycle.remove_document) and then calls `delete_with_receipt`'s check: every
store is *read again* after the delete, by the document's id, and the receipt records what each
still holds. A store that still holds something makes the receipt fail (`verified: false`, the
store named with what it holds); the delete is not reported as clean because the code that
removes things ran without an error.

The stores read, for each document:

| store        | what is read                                                                  |
| ------------ | ----------------------------------------------------------------------------- |
| metadata     | the document record, its chunk records, its chunks by id                      |
| content      | every version of its stored text, its original (media) and a queued payload   |
| text index   | entries the BM25 leg can match                                                |
| vector index | vectors the k-NN leg can return                                               |
| cache        | cached recall results that name it                                            |
| staging      | every version of the ingestion workflow's files and embedding progress        |

A receipt holds ids and counts, never content, and is kept by the metadata store under the
organization; `GET /v3/deletions/{id}` reads it back for that organization only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from memlane.documents.derived import facts_drawn_only_from, flag_remaining
from memlane.documents.keys import document_keys
from memlane.documents.lifecycle import remove_document
from memlane.domain.errors import NotFoundError
from memlane.domain.models import Document, chunk_id_for, new_id
from memlane.domain.principal import Principal
from memlane.domain.requests import DeletionReceipt, StoreCheck
from memlane.ports import Services

log = logging.getLogger(__name__)

STORES = ("metadata", "content", "text index", "vector index", "cache", "staging")


def verify_removed(svc: Services, docs: Sequence[Document]) -> list[StoreCheck]:
    """Read every store back for each document and count what it still holds."""
    remaining: dict[str, dict[str, int]] = {store: {} for store in STORES}

    def note(store: str, doc_id: str, count: int) -> None:
        if count:
            remaining[store][doc_id] = remaining[store].get(doc_id, 0) + count

    for doc in docs:
        org = doc.organization_id
        record = svc.metadata.get_document(org, doc.id)
        chunk_ids = [chunk_id_for(doc.id, i) for i in range(max(doc.chunk_count, 1))]
        note("metadata", doc.id, (record is not None) + len(svc.metadata.get_chunks(org, doc.id))
             + len(svc.metadata.get_chunks_by_id(org, chunk_ids)))
        files = document_keys(org, doc.id)  # the list remove_document deleted
        note("content", doc.id, sum(svc.blobs.versions(key) for key in files.keys))
        held = svc.index.holdings(doc.id, org)
        note("text index", doc.id, held.text)
        note("vector index", doc.id, held.vector)
        if svc.cache is not None:
            note("cache", doc.id, svc.cache.entries_naming(doc.id))
        note("staging", doc.id, sum(svc.blobs.versions(prefix) for prefix in files.prefixes))
    reads = {
        "metadata": "document record, chunk records, chunks by id",
        "content": "every version of the stored text, the original media and a queued payload",
        "text index": "entries the keyword (BM25) leg can match",
        "vector index": "vectors the k-NN leg can return",
        "cache": "cached recall results naming the document" if svc.cache is not None else "no cache configured",
        "staging": "every version of workflow files and embedding progress",
    }
    return [
        StoreCheck(store=store, read=reads[store], remaining=sum(remaining[store].values()),
                   holding=sorted(remaining[store]), clean=not remaining[store])
        for store in STORES
    ]


def delete_with_receipt(svc: Services, org_id: str, docs: Sequence[Document], reason: str,
                        subject: str | None = None, *, requested_at: datetime | None = None,
                        forgotten: str | None = None) -> DeletionReceipt:
    """Remove the documents (the one removal path), verify, record and return the receipt.
    `forgotten`: also record each as forgotten with that reason (the auto-forget sweep).

    Facts drawn from the deleted messages alone (memlane.documents.derived) are removed with them
    and listed in the receipt's `facts`; facts other messages still support are flagged."""
    requested = requested_at or svc.clock.now()
    facts = facts_drawn_only_from(svc, org_id, docs)
    for doc in [*docs, *facts]:
        remove_document(svc, doc)
        if forgotten is not None:
            svc.metadata.record_forgotten(doc, svc.clock.now(), forgotten)
    flag_remaining(svc, org_id, docs)
    return record_receipt(svc, org_id, [*docs, *facts], reason, subject, requested, facts=[f.id for f in facts])


def record_receipt(svc: Services, org_id: str, docs: Sequence[Document], reason: str, subject: str | None,
                   requested_at: datetime, *, facts: Sequence[str] = ()) -> DeletionReceipt:
    checks = verify_removed(svc, docs)
    receipt = DeletionReceipt(
        id=new_id(), reason=reason, subject=subject, documents=[d.id for d in docs], facts=list(facts),
        requested_at=requested_at,
        verified_at=svc.clock.now(), verified=all(c.clean for c in checks), checks=checks,
    )
    if not receipt.verified:
        log.error("deletion %s not verified: %s", receipt.id,
                  "; ".join(f"{c.store} holds {c.remaining}" for c in checks if not c.clean))
    svc.metadata.put_receipt(org_id, receipt.id, receipt.model_dump_json(), receipt.verified_at)
    return receipt


def get_receipt(svc: Services, who: Principal, receipt_id: str) -> DeletionReceipt:
    body = svc.metadata.get_receipt(who.organization_id, receipt_id)
    if body is None:
        raise NotFoundError(f"deletion receipt {receipt_id} not found")
    return DeletionReceipt.model_validate_json(body)
