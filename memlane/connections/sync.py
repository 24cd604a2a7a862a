"""The sync (spec §11.3): what changed at the provider since the cursor becomes memlane documents
through the one write path, what was deleted there is deleted here completely.

    claim      the connection's lease (a conditional write), so a schedule firing twice, "sync
               now" and a webhook never run one connection's sync at the same time
    retry      items whose last attempt failed (`pending_items`)
    scan       the provider's batches; for each: fetch what changed (by version marker), write it,
               delete what is gone, then store the batch's cursor
    finish     last_synced_at, the SyncResult, a backoff after a 429 or 5xx; the lease released

Writing an item: a document with a deterministic id (connection, item, the version it replaces),
so a sync that died between writing and recording is repeated onto the same document, never a
second one. A changed item becomes a new version (`updates_memory_id`), as a save of the same
`source_url` does; unchanged text (same hash) writes nothing. Documents are written by
memlane.documents.writing.write_in_request (the writer, with the job queue as safety net) and
removed by memlane.documents.lifecycle.remove_document (every version of the item), with a verified
deletion receipt (memlane.documents.receipts) for each item removed.

Failures: a 429 or 5xx stops the sync where it is; the cursor stays at the last batch applied and
the next sync waits for Retry-After (or an exponential backoff). One item that cannot be read or
written is reported in `errors` and retried by the next syncs (MAX_ITEM_ATTEMPTS); the others go
on. A refused token that a refresh cannot fix puts the connection in `error` until the user
connects again.

Modules: `provider_access` (tokens and the provider session), `items` (an item's documents),
`sync_run` (one run, holding the lease); this module decides what is due and runs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memlane.connections.items import ItemRemoval, build_document, document_id_for, remove_item_documents
from memlane.connections.provider_access import (
    HTTP_TIMEOUT,
    http_client,
    open_session,
    open_tokens,
    sealed,
    vault_context,
)
from memlane.connections.providers import ProviderAdapter, adapter_for
from memlane.connections.sync_run import DEFAULT_BUDGET_S, SyncRun
from memlane.domain.connections import Connection, ConnectionStatus, ItemRef, SyncResult
from memlane.domain.errors import MemlaneError
from memlane.domain.requests import DeletionReceipt
from memlane.ports import ConnectionPorts, Services

__all__ = [
    "DEFAULT_BUDGET_S",
    "HTTP_TIMEOUT",
    "LEASE",
    "SYNC_EVERY",
    "ItemRemoval",
    "PurgeOutcome",
    "SyncRun",
    "apply_changes",
    "build_document",
    "document_id_for",
    "due_connections",
    "http_client",
    "is_due",
    "open_session",
    "open_tokens",
    "purge_connection",
    "remove_item_documents",
    "run_due",
    "sealed",
    "sync_connection",
    "vault_context",
]

log = logging.getLogger(__name__)

SYNC_EVERY = timedelta(minutes=15)
LEASE = timedelta(minutes=20)  # longer than any sync's time budget; a dead sync's lease expires


def is_due(conn: Connection, now: datetime) -> bool:
    if conn.status == ConnectionStatus.DELETING:
        return True
    if conn.status != ConnectionStatus.ACTIVE:
        return False
    if conn.lease_until is not None and conn.lease_until > now:
        return False
    if conn.next_sync_at is not None and conn.next_sync_at > now:
        return False
    return conn.sync_requested or conn.last_synced_at is None or conn.last_synced_at + SYNC_EVERY <= now


def sync_connection(svc: Services, org_id: str, connection_id: str, *, budget_s: float | None = None,
                    adapter: ProviderAdapter | None = None) -> SyncResult | None:
    """Sync one connection now. None when it is not active or another sync holds its lease."""
    ports = _ports(svc)
    now = svc.clock.now()
    conn = ports.store.claim(org_id, connection_id, now, now + LEASE)
    if conn is None:
        return None
    if conn.status == ConnectionStatus.DELETING:
        if not purge_connection(svc, conn, budget_s=budget_s).finished and ports.dispatcher is not None:
            ports.dispatcher.request_sync(org_id, connection_id)
        return None
    if conn.status != ConnectionStatus.ACTIVE:
        ports.store.release(org_id, connection_id)
        return None
    adapter = adapter or adapter_for(conn.provider)
    with http_client(ports) as client:
        try:
            session = open_session(svc, ports, conn, adapter, client)
        except BaseException:
            ports.store.release(org_id, connection_id)
            raise
        return SyncRun(svc, ports, conn, adapter, session, budget_s).run()


def apply_changes(svc: Services, conn: Connection, refs: Sequence[ItemRef], deletes: Sequence[str]) -> SyncResult | None:
    """Write and delete the named items of one connection now (a webhook). None when a sync holds
    the lease: the connection is then asked to sync again, which picks the changes up."""
    ports = _ports(svc)
    now = svc.clock.now()
    claimed = ports.store.claim(conn.organization_id, conn.id, now, now + LEASE)
    if claimed is None:
        current = ports.store.get_connection(conn.organization_id, conn.id)
        if current is not None:
            ports.store.put_connection(current.model_copy(update={"sync_requested": True}))
        return None
    adapter = adapter_for(claimed.provider)
    with http_client(ports) as client:
        try:
            session = open_session(svc, ports, claimed, adapter, client)
        except BaseException:
            ports.store.release(claimed.organization_id, claimed.id)
            raise
        return SyncRun(svc, ports, claimed, adapter, session).apply(refs, deletes)


@dataclass
class PurgeOutcome:
    documents_removed: int
    finished: bool
    receipts: list[DeletionReceipt] = field(default_factory=list)  # one per item removed in this run


def purge_connection(svc: Services, conn: Connection, *, budget_s: float | None = None) -> PurgeOutcome:
    """Delete a connection (status DELETING, lease held): what it brought in when asked, its item
    records, then the connection itself. Stops at the budget and goes on at the next run."""
    ports = _ports(svc)
    deadline = time.monotonic() + (budget_s if budget_s is not None else DEFAULT_BUDGET_S)
    removed = 0
    receipts: list[DeletionReceipt] = []
    for record in ports.store.list_items(conn.id):
        if time.monotonic() > deadline:
            ports.store.release(conn.organization_id, conn.id)
            return PurgeOutcome(removed, False, receipts)
        if conn.remove_documents:
            removal = remove_item_documents(svc, ports, conn, record.external_id)
            if removal is not None:
                removed += removal.documents_removed
                receipts += [removal.receipt] if removal.receipt else []
        else:
            ports.store.delete_item(conn.id, record.external_id)
    ports.store.delete_connection(conn.organization_id, conn.id)
    return PurgeOutcome(removed, True, receipts)


def due_connections(svc: Services, now: datetime | None = None) -> list[Connection]:
    now = now or svc.clock.now()
    return [c for c in _ports(svc).store.all_connections() if is_due(c, now)]


def run_due(svc: Services, *, budget_s: float | None = None) -> dict[str, SyncResult | None]:
    """Every connection that is due, one after the other (the local runner; on AWS the schedule
    sends each to the sync queue instead)."""
    results: dict[str, SyncResult | None] = {}
    for conn in due_connections(svc):
        try:
            results[conn.id] = sync_connection(svc, conn.organization_id, conn.id, budget_s=budget_s)
        except Exception:  # noqa: BLE001 - one connection's failure is its own
            log.exception("connection %s: sync failed", conn.id)
            results[conn.id] = None
    return results


def _ports(svc: Services) -> ConnectionPorts:
    ports = getattr(svc, "connections", None)
    if ports is None:
        raise MemlaneError("connections are not configured in this deployment")
    return ports
