"""An item's documents: the document an item of a connection becomes (a deterministic id, so a
repeated write lands on the same document), and the removal of every document an item became."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from memlane.documents.receipts import delete_with_receipt
from memlane.domain.client_metadata import describe_metadata_problem
from memlane.domain.connections import Connection, Item
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import Document, DocumentStatus
from memlane.domain.requests import DeletionReceipt
from memlane.ingest.pipeline import prepare
from memlane.ports import ConnectionPorts, Services

_DOCUMENT_NAMESPACE = uuid.UUID("3e0b7f0e-55a4-4c1e-9a3b-636f6e6e6563")


def document_id_for(connection_id: str, external_id: str, replaces: str | None) -> str:
    """The same item replacing the same version is always the same document: a repeated write
    (after a crash, a retry) lands on it instead of adding another."""
    return str(uuid.uuid5(_DOCUMENT_NAMESPACE, f"{connection_id}\x00{external_id}\x00{replaces or ''}"))


def build_document(conn: Connection, item: Item, replaces: str | None, now: datetime) -> Document:
    """The document an item becomes (extraction may refuse it: InvalidInputError)."""
    # A synced item is known by its name in the source (a repository file's path, a Drive file's name)
    prepared = prepare(item.content, item.content_type, item.title, item.source_url, title_is_name=True)
    metadata = dict(item.metadata)
    if prepared.extracted.language:
        metadata.setdefault("language", prepared.extracted.language)
    for key, value in prepared.extracted.metadata.items():
        metadata.setdefault(key, value)
    metadata["connection"] = {"id": conn.id, "provider": conn.provider.value, "item": item.external_id,
                              "version": item.version}
    metadata["tags"] = list(dict.fromkeys([*item.tags, f"connection:{conn.provider.value}"]))
    problem = describe_metadata_problem("metadata", metadata)  # the rules of every write route
    if problem is not None:
        raise InvalidInputError(*problem)
    return Document(
        id=document_id_for(conn.id, item.external_id, replaces),
        organization_id=conn.organization_id,
        project_id=conn.project_id,
        user_id=f"connection:{conn.id}",
        title=prepared.title,
        content=prepared.extracted.text,
        content_type=prepared.extracted.content_type,
        source_url=item.source_url,
        metadata=metadata,
        content_hash=prepared.content_hash,
        updates_memory_id=replaces,
        created_at=now,
        updated_at=now,
        status=DocumentStatus.QUEUED,
    )


@dataclass
class ItemRemoval:
    documents_removed: int
    receipt: DeletionReceipt | None  # None when nothing of the item was left to remove


def remove_item_documents(svc: Services, ports: ConnectionPorts, conn: Connection,
                          external_id: str) -> ItemRemoval | None:
    """Remove every document an item became (through the one removal path, with a verified
    deletion receipt) and forget the item. None when the item was not known."""
    record = ports.store.get_item(conn.id, external_id)
    if record is None:
        return None
    docs = [doc for doc_id in record.document_ids  # oldest first: a newer one never resurfaces an older one
            if (doc := svc.metadata.get_document(conn.organization_id, doc_id)) is not None]
    receipt = None
    if docs:
        receipt = delete_with_receipt(svc, conn.organization_id, docs, "connection",
                                      subject=f"{conn.id}:{external_id}")
    ports.store.delete_item(conn.id, external_id)
    return ItemRemoval(len(docs), receipt)
