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
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import httpx

from memlane.connections.errors import (
    ProviderAuthError,
    ProviderRateLimited,
)
from memlane.connections.providers import ProviderAdapter, adapter_for
from memlane.connections.session import ProviderSession
from memlane.documents.receipts import delete_with_receipt
from memlane.documents.writer import WriteRequest
from memlane.documents.writing import write_in_request
from memlane.domain.connections import (
    Connection,
    ConnectionItem,
    ConnectionStatus,
    Item,
    ItemRef,
    SyncResult,
    TokenSet,
)
from memlane.domain.errors import MemlaneError, TransientError
from memlane.domain.models import Document, DocumentStatus
from memlane.domain.requests import DeletionReceipt
from memlane.ingest.pipeline import prepare
from memlane.ports import ConnectionPorts, Services

log = logging.getLogger(__name__)

SYNC_EVERY = timedelta(minutes=15)
LEASE = timedelta(minutes=20)  # longer than any sync's time budget; a dead sync's lease expires
DEFAULT_BUDGET_S = 600.0  # then the sync stops, asks for another run, and the next one goes on
WRITE_BATCH = 16  # items embedded together
MANY_ITEMS = 50  # a batch naming more items reads all item records at once instead of one by one
MAX_ITEM_ATTEMPTS = 5
FIRST_BACKOFF = timedelta(minutes=1)
MAX_BACKOFF = timedelta(hours=1)
MAX_ERRORS_KEPT = 50
HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)

_DOCUMENT_NAMESPACE = uuid.UUID("3e0b7f0e-55a4-4c1e-9a3b-636f6e6e6563")


class _OutOfTime(Exception):  # noqa: N818 - control flow, not an error
    pass


def document_id_for(connection_id: str, external_id: str, replaces: str | None) -> str:
    """The same item replacing the same version is always the same document: a repeated write
    (after a crash, a retry) lands on it instead of adding another."""
    return str(uuid.uuid5(_DOCUMENT_NAMESPACE, f"{connection_id}\x00{external_id}\x00{replaces or ''}"))


def vault_context(conn: Connection) -> dict[str, str]:
    return {"organization_id": conn.organization_id, "connection_id": conn.id}


def open_tokens(ports: ConnectionPorts, conn: Connection) -> TokenSet | None:
    if not conn.sealed_tokens:
        return None
    return TokenSet.model_validate_json(ports.vault.open(vault_context(conn), conn.sealed_tokens))


def sealed(ports: ConnectionPorts, conn: Connection, tokens: TokenSet) -> dict[str, object]:
    """The connection fields that store these tokens."""
    return {"sealed_tokens": ports.vault.seal(vault_context(conn), tokens.model_dump_json().encode()),
            "token_expires_at": tokens.expires_at}


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


def http_client(ports: ConnectionPorts) -> httpx.Client:
    return httpx.Client(transport=ports.transport, timeout=HTTP_TIMEOUT, follow_redirects=True)


def open_session(svc: Services, ports: ConnectionPorts, conn: Connection, adapter: ProviderAdapter,
                 client: httpx.Client) -> ProviderSession:
    app = ports.apps.app(conn.provider.value) if adapter.oauth is not None else None

    def keep(tokens: TokenSet) -> None:
        # A rotated refresh token is stored the moment it is issued: the old one no longer works.
        current = ports.store.get_connection(conn.organization_id, conn.id)
        if current is not None:
            ports.store.put_connection(current.model_copy(update={**sealed(ports, current, tokens),
                                                                  "updated_at": svc.clock.now()}))

    return ProviderSession(
        provider=conn.provider.value, client=client, clock=svc.clock,
        base_url=(app.api_url if app and app.api_url else adapter.api_url),
        tokens=open_tokens(ports, conn), spec=adapter.oauth, app=app, on_tokens=keep,
        headers=adapter.session_headers(), classify=adapter.classify, auth_failed=adapter.auth_failed)


# --------------------------------------------------------------------------- items → documents


def build_document(conn: Connection, item: Item, replaces: str | None, now: datetime) -> Document:
    """The document an item becomes (extraction may refuse it: InvalidInputError)."""
    prepared = prepare(item.content, item.content_type, item.title, item.source_url)
    metadata = dict(item.metadata)
    if prepared.extracted.language:
        metadata.setdefault("language", prepared.extracted.language)
    for key, value in prepared.extracted.metadata.items():
        metadata.setdefault(key, value)
    metadata["connection"] = {"id": conn.id, "provider": conn.provider.value, "item": item.external_id,
                              "version": item.version}
    metadata["tags"] = list(dict.fromkeys([*item.tags, f"connection:{conn.provider.value}"]))
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
class _Pending:
    item: Item
    record: ConnectionItem | None
    document: Document


class SyncRun:
    """One sync (or one webhook delivery) of one connection, holding its lease."""

    def __init__(self, svc: Services, ports: ConnectionPorts, conn: Connection, adapter: ProviderAdapter,
                 session: ProviderSession, budget_s: float | None = None) -> None:
        self.svc = svc
        self.ports = ports
        self.store = ports.store
        self.conn = conn
        self.adapter = adapter
        self.session = session
        self.deadline = time.monotonic() + (budget_s if budget_s is not None else DEFAULT_BUDGET_S)
        self.result = SyncResult(started_at=svc.clock.now())
        self.pending = dict(conn.pending_items)
        self._known: dict[str, ConnectionItem] | None = None  # every item record, read once when many are needed

    # ------------------------------------------------------------------ the whole sync

    def run(self) -> SyncResult:
        try:
            self.retry_pending()
            for batch in self.adapter.scan(self.session, self.conn):
                self.result.errors.extend(batch.errors)
                self.upsert(batch.upserts)
                self.delete_many(batch.deletes)
                if batch.reconcile is not None:
                    prefix, present = batch.reconcile
                    gone = [r.external_id for r in self.store.list_items(self.conn.id)
                            if r.external_id.startswith(prefix) and r.external_id not in present]
                    self.delete_many(gone)
                if batch.cursor is not None:
                    self.checkpoint(batch.cursor)
        except _OutOfTime:
            self.result.complete = False
            self.finish(sync_requested=True)
            self.continue_later()
            return self.result
        except BaseException as exc:
            self.stopped(exc)
            if not isinstance(exc, Exception):
                raise
            return self.result
        self.finish()
        return self.result

    def apply(self, refs: Sequence[ItemRef], deletes: Sequence[str]) -> SyncResult:
        """A webhook's changes: written and deleted now, no listing."""
        try:
            self.upsert(refs)
            self.delete_many(deletes)
        except _OutOfTime:
            self.result.complete = False
            self.finish(sync_requested=True, synced=False)
            self.continue_later()
            return self.result
        except BaseException as exc:
            self.stopped(exc, synced=False)
            if not isinstance(exc, Exception):
                raise
            return self.result
        self.finish(synced=False)
        return self.result

    def continue_later(self) -> None:
        """Out of time: the next run (the local runner's next pass, another SQS message) goes on."""
        if self.ports.dispatcher is not None:
            self.ports.dispatcher.request_sync(self.conn.organization_id, self.conn.id)

    # ------------------------------------------------------------------ items

    def retry_pending(self) -> None:
        if self.pending:
            self.upsert([ItemRef(external_id=ext_id) for ext_id in list(self.pending)])

    def _record_of(self, external_id: str, many: bool) -> ConnectionItem | None:
        """One item's record: from one listing of them all when a batch names many items (a
        repository's tree), by a single read otherwise (a webhook's few)."""
        if many and self._known is None:
            self._known = {r.external_id: r for r in self.store.list_items(self.conn.id)}
        if self._known is not None:
            return self._known.get(external_id)
        return self.store.get_item(self.conn.id, external_id)

    def upsert(self, refs: Iterable[ItemRef]) -> None:
        refs = list(refs)
        many = len(refs) > MANY_ITEMS
        todo: list[tuple[ItemRef, ConnectionItem | None]] = []
        seen: set[str] = set()
        for ref in refs:
            if ref.external_id in seen:
                continue
            seen.add(ref.external_id)
            record = self._record_of(ref.external_id, many)
            unchanged = (record is not None and ref.version is not None and record.version == ref.version
                         and not ref.hint.get("recheck") and ref.external_id not in self.pending)
            if not unchanged:
                todo.append((ref, record))
        for start in range(0, len(todo), WRITE_BATCH):
            if time.monotonic() > self.deadline:
                raise _OutOfTime
            fetched: list[tuple[Item, ConnectionItem | None]] = []
            for ref, record in todo[start : start + WRITE_BATCH]:
                try:
                    item = self.adapter.fetch(self.session, self.conn, ref)
                except (ProviderRateLimited, ProviderAuthError, TransientError):
                    raise  # the provider itself is the problem: the whole sync stops
                except Exception as exc:  # noqa: BLE001 - one item's failure is its own
                    self.item_failed(ref.external_id, exc)
                    continue
                if item is None:
                    self.delete(ref.external_id)
                    self.pending.pop(ref.external_id, None)
                else:
                    fetched.append((item, record))
            self.write(fetched)

    def write(self, fetched: Sequence[tuple[Item, ConnectionItem | None]]) -> None:
        now = self.svc.clock.now()
        md = self.svc.metadata
        org = self.conn.organization_id
        todo: list[_Pending] = []
        for item, record in fetched:
            replaces = record.latest_document_id if record else None
            if replaces is not None and md.get_document(org, replaces) is None:
                replaces = None  # its latest version was deleted by hand: the item starts afresh
            try:
                doc = build_document(self.conn, item, replaces, now)
            except Exception as exc:  # noqa: BLE001 - content the extractor refuses
                self.item_failed(item.external_id, exc)
                continue
            if record is not None and record.content_hash == doc.content_hash and replaces is not None:
                self.record(item, record, None, doc.content_hash)  # same text, newer marker: nothing to write
                continue
            existing = md.get_document(org, doc.id)
            if existing is not None and existing.status == DocumentStatus.READY \
                    and existing.content_hash == doc.content_hash:
                self.record(item, record, doc.id, doc.content_hash)  # written before a crash; now recorded
                continue
            todo.append(_Pending(item, record, doc))
        if not todo:
            return
        written: list[_Pending] = []
        for p in todo:
            try:
                md.put_document(p.document)
                written.append(p)
            except Exception as exc:  # noqa: BLE001 - the store refused this one; the next sync retries
                self.item_failed(p.item.external_id, exc)
        outcomes = write_in_request(self.svc, [WriteRequest(p.document, summarize=p.item.summarize)
                                               for p in written])
        for p, outcome in zip(written, outcomes, strict=True):
            if outcome.ok or outcome.transient:
                # Written, or kept `queued` with a job that writes it once the outage is over.
                self.record(p.item, p.record, p.document.id, p.document.content_hash)
            else:
                self.item_failed(p.item.external_id, outcome.error or MemlaneError("write failed"))

    def record(self, item: Item, record: ConnectionItem | None, document_id: str | None, content_hash: str) -> None:
        ids = list(record.document_ids) if record else []
        if document_id is not None and document_id not in ids:
            ids.append(document_id)
            if record is None or not record.document_ids:
                self.result.added += 1
            else:
                self.result.updated += 1
        stored = ConnectionItem(
            connection_id=self.conn.id, organization_id=self.conn.organization_id, external_id=item.external_id,
            document_ids=ids, version=item.version, content_hash=content_hash, updated_at=self.svc.clock.now())
        self.store.put_item(stored)
        if self._known is not None:
            self._known[item.external_id] = stored
        self.pending.pop(item.external_id, None)

    def delete_many(self, external_ids: Iterable[str]) -> None:
        for ext_id in external_ids:
            if time.monotonic() > self.deadline:
                raise _OutOfTime
            self.delete(ext_id)
            self.pending.pop(ext_id, None)

    def delete(self, external_id: str) -> int:
        """Every version of the item, oldest first (a newer one never resurfaces an older one)."""
        removal = remove_item_documents(self.svc, self.ports, self.conn, external_id)
        if self._known is not None:
            self._known.pop(external_id, None)
        if removal is None:
            return 0
        self.result.deleted += 1
        return removal.documents_removed

    def item_failed(self, external_id: str, exc: BaseException) -> None:
        message = exc.message if isinstance(exc, MemlaneError) else f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, MemlaneError):
            log.warning("connection %s: item %s failed", self.conn.id, external_id, exc_info=exc)
        attempts = self.pending.get(external_id, 0) + 1
        if self.adapter.relists_everything:
            self.add_error(f"{external_id}: {message}")
        elif attempts >= MAX_ITEM_ATTEMPTS:
            self.pending.pop(external_id, None)
            self.add_error(f"{external_id}: {message} (gave up after {attempts} attempts)")
        else:
            self.pending[external_id] = attempts
            self.add_error(f"{external_id}: {message} (will retry)")

    def add_error(self, message: str) -> None:
        if len(self.result.errors) < MAX_ERRORS_KEPT:
            self.result.errors.append(message[:500])

    # ------------------------------------------------------------------ the connection record

    def _save(self, **fields: object) -> None:
        current = self.store.get_connection(self.conn.organization_id, self.conn.id)
        if current is None:
            return  # deleted while syncing
        self.conn = current.model_copy(update={**fields, "updated_at": self.svc.clock.now()})
        self.store.put_connection(self.conn)

    def checkpoint(self, cursor: dict[str, object]) -> None:
        current = self.store.get_connection(self.conn.organization_id, self.conn.id)
        merged = {**(current.cursor if current else self.conn.cursor), **cursor}
        self._save(cursor=merged, pending_items=dict(self.pending))

    def finish(self, *, sync_requested: bool = False, synced: bool = True) -> None:
        now = self.svc.clock.now()
        self.result.finished_at = now
        fields: dict[str, object] = {"pending_items": dict(self.pending), "last_result": self.result}
        if synced:
            fields.update(last_synced_at=now, next_sync_at=None, consecutive_failures=0,
                          sync_requested=sync_requested)
        elif sync_requested:
            fields["sync_requested"] = True
        self._save(**fields)
        self.store.release(self.conn.organization_id, self.conn.id)

    def stopped(self, exc: BaseException, *, synced: bool = True) -> None:
        """The sync cannot go on: record why, keep the cursor, plan the next attempt."""
        now = self.svc.clock.now()
        self.result.complete = False
        self.result.finished_at = now
        fields: dict[str, object] = {"pending_items": dict(self.pending), "last_result": self.result}
        if synced:
            fields["last_synced_at"] = now
        if isinstance(exc, ProviderRateLimited):
            self.add_error(f"{exc.message}; retrying after {round(exc.retry_after_s)} s")
            fields["next_sync_at"] = now + timedelta(seconds=max(exc.retry_after_s, 1.0))
        elif isinstance(exc, ProviderAuthError):
            self.add_error(exc.message)
            fields.update(status=ConnectionStatus.ERROR, status_reason=exc.message)
        else:
            if isinstance(exc, MemlaneError):
                self.add_error(exc.message)
            else:
                log.error("connection %s: sync failed", self.conn.id, exc_info=exc)
                self.add_error(f"{type(exc).__name__}: {exc}")
            failures = self.conn.consecutive_failures + 1
            backoff = min(FIRST_BACKOFF * (2 ** (failures - 1)), MAX_BACKOFF)
            fields.update(next_sync_at=now + backoff, consecutive_failures=failures)
        if not isinstance(exc, Exception):
            return  # the process is going down: leave the lease to expire, write nothing more
        try:
            self._save(**fields)
            self.store.release(self.conn.organization_id, self.conn.id)
        except Exception:  # noqa: BLE001 - the lease expires by itself
            log.warning("connection %s: could not record the stopped sync", self.conn.id, exc_info=True)


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


# --------------------------------------------------------------------------- entry points


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

