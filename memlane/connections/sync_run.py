"""One run of a connection's sync (or of a webhook delivery), holding the connection's lease: the
items that changed are fetched and written, the ones gone are removed, each batch's cursor is
stored, and the connection record ends with the result (or, when the sync stops, why and when to
try again). The steps are described in memlane.connections.sync.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memlane.connections.errors import ProviderAuthError, ProviderRateLimited
from memlane.connections.items import build_document, remove_item_documents
from memlane.connections.providers import ProviderAdapter
from memlane.connections.session import ProviderSession
from memlane.documents.writer import WriteRequest
from memlane.documents.writing import write_in_request
from memlane.domain.connections import (
    Connection,
    ConnectionItem,
    ConnectionStatus,
    Item,
    ItemRef,
    SyncResult,
)
from memlane.domain.errors import MemlaneError, TransientError
from memlane.domain.models import Document, DocumentStatus
from memlane.ports import ConnectionPorts, Services

log = logging.getLogger(__name__)

DEFAULT_BUDGET_S = 600.0  # then the sync stops, asks for another run, and the next one goes on
WRITE_BATCH = 16  # items embedded together
MANY_ITEMS = 50  # a batch naming more items reads all item records at once instead of one by one
MAX_ITEM_ATTEMPTS = 5
FIRST_BACKOFF = timedelta(minutes=1)
MAX_BACKOFF = timedelta(hours=1)
MAX_ERRORS_KEPT = 50


class _OutOfTime(Exception):  # noqa: N818 - control flow, not an error
    pass


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
        todo = [p for item, record in fetched if (p := self._new_version(item, record, now)) is not None]
        if todo:
            self._write_all(todo)

    def _new_version(self, item: Item, record: ConnectionItem | None, now: datetime) -> _Pending | None:
        """The item's document to write, or None: its text did not change or is written already
        (recorded now), or the extractor refused it (counted as the item's failure)."""
        md, org = self.svc.metadata, self.conn.organization_id
        replaces = record.latest_document_id if record else None
        if replaces is not None and md.get_document(org, replaces) is None:
            replaces = None  # its latest version was deleted by hand: the item starts afresh
        try:
            doc = build_document(self.conn, item, replaces, now)
        except Exception as exc:  # noqa: BLE001 - content the extractor refuses
            self.item_failed(item.external_id, exc)
            return None
        if record is not None and record.content_hash == doc.content_hash and replaces is not None:
            self.record(item, record, None, doc.content_hash)  # same text, newer marker: nothing to write
            return None
        existing = md.get_document(org, doc.id)
        if existing is not None and existing.status == DocumentStatus.READY and existing.content_hash == doc.content_hash:
            self.record(item, record, doc.id, doc.content_hash)  # written before a crash; now recorded
            return None
        return _Pending(item, record, doc)

    def _write_all(self, todo: list[_Pending]) -> None:
        """Stored as `queued`, then written together through the one write path."""
        written: list[_Pending] = []
        for p in todo:
            try:
                self.svc.metadata.put_document(p.document)
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
