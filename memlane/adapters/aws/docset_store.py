"""DynamoDB implementation of DocsetStore, in the metadata table (keys in dynamo_schema.py).

| record        | key                                         | read by                              |
| ------------- | ------------------------------------------- | ------------------------------------ |
| docset        | pk=ORG#{org}  sk=DOCSET#{docset}            | GetItem (tenant in the key), Query   |
|               | GSI1 gsi1pk=DOCSETS                         | list_docsets() across organizations  |
| page          | pk=DOCSET#{docset}  sk=PAGE#{page}          | GetItem, Query of the docset         |
|               | GSI2 PAGEDUE#{shard} / PAGECLAIMED#{shard}  | claim_pages, next_due, release_stuck |
| session       | pk=ORG#{org}  sk=DOCSESSION#{session}       | GetItem, Query                       |

What the AWS path uses: the API (create, status, list pages, refresh, delete, sessions, the seed
crawl of waitForSeed), the page worker (claim_page, the page's own writes, add_pages for its
links) and the refresh job (list_docsets across organizations, requeue_docset). All of them are
GetItem, conditional writes or one Query of a docset's partition, which add_pages bounds to the
docset's page cap. claim_pages, next_due and release_stuck serve the embedded runner's loop; here
they read GSI2's sharded queues, never a Scan.

A claim is one conditional UpdateItem (pending or retryable error → processing), so a page is
handed to exactly one worker however many messages name it. Timestamps are epoch milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code
from memlane.adapters.aws.dynamo_codec import (
    deserialize,
    model_attributes,
    model_from_item,
    serialize,
)
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.docsets import ClientSession, Docset, DocsetPage, PageCounts, PageStatus, new_page

# Conditional updates of a refresh run side by side (DynamoDB has no batch update).
REQUEUE_WORKERS = 8
STUCK_MESSAGE = "retried after being stuck in processing"
_CLAIMABLE = (PageStatus.PENDING.value, PageStatus.ERROR.value)
_QUEUE_KEYS = (ks.GSI2_PK, ks.GSI2_SK)


def _n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _conditional_failed(exc: ClientError) -> bool:
    return error_code(exc) == "ConditionalCheckFailedException"


def _due_keys(page_id: str, retry_at: int, created_at: int) -> dict[str, str]:
    return {
        ks.GSI2_PK: ks.page_due_gsi_pk(ks.page_shard(page_id)),
        ks.GSI2_SK: f"{ks.epoch_ms_key(retry_at)}#{ks.epoch_ms_key(created_at)}",
    }


def _claimed_keys(page_id: str, claimed_at: int) -> dict[str, str]:
    return {
        ks.GSI2_PK: ks.page_claimed_gsi_pk(ks.page_shard(page_id)),
        ks.GSI2_SK: ks.epoch_ms_key(claimed_at),
    }


def queue_keys(page: DocsetPage) -> dict[str, str]:
    """The GSI2 keys a page carries in its state: due, claimed, or none (done, final error)."""
    if page.status.value in _CLAIMABLE and page.retry_at is not None:
        return _due_keys(page.id, page.retry_at, page.created_at)
    if page.status == PageStatus.PROCESSING and page.claimed_at is not None:
        return _claimed_keys(page.id, page.claimed_at)
    return {}


def page_from_item(item: dict[str, Any]) -> DocsetPage:
    """An absent attribute is None: `retry_at` defaults to 0 (due) in the model, absent means not due."""
    data = deserialize(item)
    return DocsetPage.model_validate({name: data.get(name) for name in DocsetPage.model_fields})


def page_item(page: DocsetPage) -> dict[str, Any]:
    return {
        ks.PK: ks.docset_pages_pk(page.docset_id),
        ks.SK: ks.page_sk(page.id),
        "entity": "docset_page",
        **model_attributes(page),
        **queue_keys(page),
    }


def docset_item(docset: Docset) -> dict[str, Any]:
    return {
        ks.PK: ks.org_pk(docset.organization_id),
        ks.SK: ks.docset_sk(docset.id),
        "entity": "docset",
        ks.GSI1_PK: ks.ALL_DOCSETS_GSI_PK,
        ks.GSI1_SK: f"{ks.epoch_ms_key(docset.created_at)}#{docset.id}",
        **model_attributes(docset),
    }


class DynamoDocsetStore(DynamoTable):
    """DocsetStore on the metadata table. `client` and `sleep` as for DynamoMetadataStore."""

    # ------------------------------------------------------------------ docsets

    def create_docset(self, docset: Docset) -> Docset:
        self._call(
            "put_item",
            TableName=self.table_name,
            Item=serialize(docset_item(docset)),
            ConditionExpression="attribute_not_exists(pk)",
        )
        return docset

    def update_docset(self, docset: Docset) -> None:
        """Name and refresh times, as the SQLite store updates them; a deleted docset stays deleted."""
        values: dict[str, Any] = {":name": _s(docset.name), ":updated": _n(docset.updated_at)}
        expression = "SET #name = :name, updated_at = :updated"
        if docset.last_refreshed_at is None:
            expression += " REMOVE last_refreshed_at"
        else:
            expression += ", last_refreshed_at = :refreshed"
            values[":refreshed"] = _n(docset.last_refreshed_at)
        self._update_if_exists(
            _key(ks.org_pk(docset.organization_id), ks.docset_sk(docset.id)),
            UpdateExpression=expression,
            ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues=values,
        )

    def get_docset(self, org_id: str, docset_id: str) -> Docset | None:
        item = self._get(ks.org_pk(org_id), ks.docset_sk(docset_id))
        return model_from_item(Docset, item) if item else None

    def list_docsets(self, org_id: str | None = None) -> list[Docset]:
        if org_id is None:
            # Every organization's docsets (the daily refresh): GSI1's DOCSETS partition, in
            # creation order. Eventually consistent; a docset created this second waits a day.
            items: Iterable[dict[str, Any]] = self._query(
                IndexName=ks.GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                ExpressionAttributeValues={":pk": _s(ks.ALL_DOCSETS_GSI_PK)},
            )
        else:
            items = self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": _s(ks.org_pk(org_id)), ":prefix": _s(ks.DOCSET_SK_PREFIX)},
                ConsistentRead=True,
            )
        docsets = [model_from_item(Docset, item) for item in items]
        return sorted(docsets, key=lambda d: (d.created_at, d.id))

    def delete_docset(self, org_id: str, docset_id: str) -> bool:
        """Removes the docset's page records, then the docset and the project created for it (with
        its slug) in one transaction: a delete that stops halfway still finds the docset and is
        finished by a retry. The project's documents are removed by the caller first."""
        item = self._get(ks.org_pk(org_id), ks.docset_sk(docset_id), projection="project_id")
        if item is None:
            return False
        project_id = item["project_id"]["S"]
        self._batch_write(
            [
                {"DeleteRequest": {"Key": _key(p[ks.PK]["S"], p[ks.SK]["S"])}}
                for p in self._page_items(docset_id, "pk, sk")
            ]
        )
        operations = [
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": _key(ks.org_pk(org_id), ks.docset_sk(docset_id)),
                }
            },
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": _key(ks.org_pk(org_id), ks.project_sk(project_id)),
                }
            },
        ]
        project = self._get(ks.org_pk(org_id), ks.project_sk(project_id), projection="slug")
        if project is not None:
            slug = project["slug"]["S"]
            operations.append(
                {
                    "Delete": {
                        "TableName": self.table_name,
                        "Key": _key(ks.org_pk(org_id), ks.project_slug_sk(slug)),
                    }
                }
            )
        self._transact(operations, conflict=f"docset {docset_id} could not be deleted")
        return True

    # ------------------------------------------------------------------ pages

    def _page_items(
        self, docset_id: str, projection: str | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Every page record of a docset (one paginated Query of its partition)."""
        if projection:
            kwargs["ProjectionExpression"] = projection
        return list(
            self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={
                    ":pk": _s(ks.docset_pages_pk(docset_id)),
                    ":prefix": _s(ks.PAGE_SK_PREFIX),
                    **kwargs.pop("ExpressionAttributeValues", {}),
                },
                ConsistentRead=True,
                **kwargs,
            )
        )

    def _page_count(self, docset_id: str) -> int:
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {
                ":pk": _s(ks.docset_pages_pk(docset_id)),
                ":prefix": _s(ks.PAGE_SK_PREFIX),
            },
            "Select": "COUNT",
            "ConsistentRead": True,
        }
        total = 0
        while True:
            response = self._call("query", **kwargs)
            total += int(response.get("Count", 0))
            if "LastEvaluatedKey" not in response:
                return total
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def add_pages(self, docset: Docset, urls: Sequence[str], now: int) -> list[str]:
        """Queue URLs not yet known to the docset, up to its page cap: one BatchGetItem to find the
        known ones, BatchWriteItem for the rest. Two workers adding the same new link at the same
        moment both write the same pending record (and both send a message, one of which finds
        the page claimed); the cap may be passed by one such batch."""
        unique = list(dict.fromkeys(urls))
        if not unique:
            return []
        room = docset.max_pages - self._page_count(docset.id)
        if room <= 0:
            return []
        pages = [new_page(docset, url, now) for url in unique]
        pk = ks.docset_pages_pk(docset.id)
        known = {item[ks.SK]["S"] for item in self._batch_get([_key(pk, ks.page_sk(p.id)) for p in pages])}
        added = [p for p in pages if ks.page_sk(p.id) not in known][:room]
        self._batch_write([{"PutRequest": {"Item": serialize(page_item(p))}} for p in added])
        return [p.url for p in added]

    def insert_page(self, page: DocsetPage) -> bool:
        """Insert `page` as given unless the docset already has its URL. True when inserted."""
        return self._put_page_if(page, "attribute_not_exists(pk)")

    def save_page(self, page: DocsetPage) -> None:
        """Replaces the page's record; a page removed meanwhile (its docset deleted) stays removed."""
        self._put_page_if(page, "attribute_exists(pk)")

    def _put_page_if(self, page: DocsetPage, condition: str) -> bool:
        """PutItem under a condition; False when the condition did not hold."""
        try:
            self._call(
                "put_item",
                TableName=self.table_name,
                Item=serialize(page_item(page)),
                ConditionExpression=condition,
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise
        return True

    def get_page(self, docset_id: str, page_id: str) -> DocsetPage | None:
        item = self._get(ks.docset_pages_pk(docset_id), ks.page_sk(page_id))
        return page_from_item(item) if item else None

    def delete_page(self, docset_id: str, page_id: str) -> None:
        self._call(
            "delete_item",
            TableName=self.table_name,
            Key=_key(ks.docset_pages_pk(docset_id), ks.page_sk(page_id)),
        )

    def _claim(
        self,
        docset_id: str,
        page_id: str,
        now: int,
        due_by: int | None = None,
        stuck_before: int | None = None,
    ) -> DocsetPage | None:
        """One conditional UpdateItem: only a pending or retryable page (or, with `stuck_before`, one
        claimed before then) becomes `processing`, so of concurrent claims exactly one succeeds."""
        condition = "attribute_exists(retry_at) AND #status IN (:pending, :error)"
        values: dict[str, Any] = {
            ":processing": _s(PageStatus.PROCESSING.value),
            ":pending": _s(PageStatus.PENDING.value),
            ":error": _s(PageStatus.ERROR.value),
            ":now": _n(now),
            ":one": _n(1),
            ":qpk": _s(ks.page_claimed_gsi_pk(ks.page_shard(page_id))),
            ":qsk": _s(ks.epoch_ms_key(now)),
        }
        if due_by is not None:
            condition += " AND retry_at <= :due"
            values[":due"] = _n(due_by)
        if stuck_before is not None:
            condition = f"({condition}) OR (#status = :processing AND claimed_at < :stuck)"
            values[":stuck"] = _n(stuck_before)
        try:
            response = self._call(
                "update_item",
                TableName=self.table_name,
                Key=_key(ks.docset_pages_pk(docset_id), ks.page_sk(page_id)),
                UpdateExpression=(
                    "SET #status = :processing, claimed_at = :now, updated_at = :now,"
                    " attempts = attempts + :one, gsi2pk = :qpk, gsi2sk = :qsk REMOVE retry_at"
                ),
                ConditionExpression=f"attribute_exists(pk) AND ({condition})",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return None
            raise
        return page_from_item(response["Attributes"])

    def claim_page(
        self, docset_id: str, page_id: str, now: int, stuck_before: int | None = None
    ) -> DocsetPage | None:
        """Claim one page if it is pending or a retryable error (a page worker's message, waitForSeed);
        with `stuck_before`, also if a worker claimed it before then and never finished."""
        return self._claim(docset_id, page_id, now, stuck_before=stuck_before)

    def _queue(
        self,
        partition: str,
        upper: str | None = None,
        limit: int | None = None,
        exclude_pks: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """Keys from one GSI2 queue partition, oldest first, those with gsi2sk < `upper`."""
        kwargs: dict[str, Any] = {
            "IndexName": ks.GSI2,
            "KeyConditionExpression": "gsi2pk = :q" + (" AND gsi2sk < :upper" if upper else ""),
            "ExpressionAttributeValues": {":q": _s(partition), **({":upper": _s(upper)} if upper else {})},
        }
        if limit is not None and not exclude_pks:
            kwargs["Limit"] = limit
        if exclude_pks:
            names = [f":x{i}" for i in range(len(exclude_pks))]
            kwargs["FilterExpression"] = f"NOT pk IN ({', '.join(names)})"
            kwargs["ExpressionAttributeValues"].update(
                {n: _s(pk) for n, pk in zip(names, exclude_pks, strict=True)}
            )
        found: list[dict[str, Any]] = []
        for item in self._query(**kwargs):
            found.append(item)
            if limit is not None and len(found) >= limit:
                break
        return found

    def claim_pages(self, now: int, limit: int, exclude_docsets: Sequence[str] = ()) -> list[DocsetPage]:
        """Claim up to `limit` due pages, oldest first: the first `limit` due keys of every shard
        of the PAGEDUE queue, merged, each claimed conditionally (a page claimed by someone else
        since the index was written is passed over)."""
        if limit <= 0:
            return []
        upper = ks.epoch_ms_key(now + 1)
        exclude = [ks.docset_pages_pk(d) for d in exclude_docsets]
        candidates = [
            item
            for shard in range(ks.PAGE_SHARDS)
            for item in self._queue(ks.page_due_gsi_pk(shard), upper, limit, exclude)
        ]
        candidates.sort(key=lambda item: item[ks.GSI2_SK]["S"])
        claimed: list[DocsetPage] = []
        for item in candidates:
            docset_id = item[ks.PK]["S"].removeprefix(ks.DOCSET_PAGES_PK_PREFIX)
            page = self._claim(docset_id, item[ks.SK]["S"].removeprefix(ks.PAGE_SK_PREFIX), now, due_by=now)
            if page is not None:
                claimed.append(page)
                if len(claimed) >= limit:
                    break
        return claimed

    def next_due(self) -> int | None:
        """The earliest retry_at of any claimable page: the head of each PAGEDUE shard."""
        heads = [
            int(items[0][ks.GSI2_SK]["S"].split("#", 1)[0])
            for shard in range(ks.PAGE_SHARDS)
            if (items := self._queue(ks.page_due_gsi_pk(shard), limit=1))
        ]
        return min(heads, default=None)

    def list_pages(
        self, docset_id: str, status: PageStatus | None = None, limit: int = 100, offset: int = 0
    ) -> tuple[list[DocsetPage], int]:
        """One Query of the docset (filtered by status on the server), ordered like the SQLite
        store (created_at, url); DynamoDB has no offset, so the slice is taken here."""
        kwargs: dict[str, Any] = {}
        if status is not None:
            kwargs = {
                "FilterExpression": "#status = :status",
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {":status": _s(status.value)},
            }
        pages = [page_from_item(item) for item in self._page_items(docset_id, **kwargs)]
        pages.sort(key=lambda p: (p.created_at, p.url))
        return pages[offset : offset + limit], len(pages)

    def page_counts(self, docset_id: str, stuck_before: int) -> PageCounts:
        projection = "#status, chunk_count, claimed_at, attempts, retry_at, updated_at"
        rows = [
            deserialize(item)
            for item in self._page_items(
                docset_id, projection, ExpressionAttributeNames={"#status": "status"}
            )
        ]
        status = [r["status"] for r in rows]
        return PageCounts(
            total=len(rows),
            indexed=status.count(PageStatus.INDEXED.value),
            pending=sum(s in (PageStatus.PENDING.value, PageStatus.PROCESSING.value) for s in status),
            error=status.count(PageStatus.ERROR.value),
            skipped=status.count(PageStatus.SKIPPED.value),
            chunks=sum(r.get("chunk_count", 0) for r in rows if r["status"] == PageStatus.INDEXED.value),
            stuck=sum(
                r["status"] == PageStatus.PROCESSING.value
                and r.get("claimed_at", stuck_before) < stuck_before
                for r in rows
            ),
            retried=sum(r.get("attempts", 0) > 1 for r in rows),
            retrying=sum(r["status"] == PageStatus.ERROR.value and "retry_at" in r for r in rows),
            last_update=max((r["updated_at"] for r in rows), default=None),
        )

    def stuck_pages(self, docset_id: str, stuck_before: int, limit: int = 100) -> list[DocsetPage]:
        items = self._page_items(
            docset_id,
            FilterExpression="#status = :processing AND claimed_at < :before",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":processing": _s(PageStatus.PROCESSING.value),
                ":before": _n(stuck_before),
            },
        )
        pages = sorted((page_from_item(item) for item in items), key=lambda p: p.claimed_at or 0)
        return pages[:limit]

    def release_stuck(self, stuck_before: int, now: int) -> int:
        """Pages claimed before `stuck_before` and never finished go back to the queue: found in
        the PAGECLAIMED shards, each released by a conditional update (still processing, still
        claimed that long ago), so a page finished meanwhile is left alone."""
        released = 0
        upper = ks.epoch_ms_key(stuck_before)
        for shard in range(ks.PAGE_SHARDS):
            for key in self._queue(ks.page_claimed_gsi_pk(shard), upper):
                page_item_ = self._get(key[ks.PK]["S"], key[ks.SK]["S"], projection="id, created_at")
                if page_item_ is None:
                    continue
                row = deserialize(page_item_)
                due = _due_keys(row["id"], now, row["created_at"])
                try:
                    self._call(
                        "update_item",
                        TableName=self.table_name,
                        Key=_key(key[ks.PK]["S"], key[ks.SK]["S"]),
                        UpdateExpression=(
                            "SET #status = :pending, retry_at = :now, updated_at = :now,"
                            " #error = if_not_exists(#error, :message), gsi2pk = :qpk, gsi2sk = :qsk"
                        ),
                        ConditionExpression="#status = :processing AND claimed_at < :before",
                        ExpressionAttributeNames={"#status": "status", "#error": "error"},
                        ExpressionAttributeValues={
                            ":pending": _s(PageStatus.PENDING.value),
                            ":processing": _s(PageStatus.PROCESSING.value),
                            ":now": _n(now),
                            ":before": _n(stuck_before),
                            ":message": _s(STUCK_MESSAGE),
                            ":qpk": _s(due[ks.GSI2_PK]),
                            ":qsk": _s(due[ks.GSI2_SK]),
                        },
                    )
                except ClientError as exc:
                    if not _conditional_failed(exc):
                        raise
                    continue
                released += 1
        return released

    def requeue_docset(self, docset_id: str, now: int, clear_hashes: bool) -> tuple[int, int, int]:
        """Queue every page of the docset again (a refresh), pages in processing excepted. Indexed
        pages keep their ETag, Last-Modified and content hash (unchanged pages are not re-embedded)
        unless `clear_hashes`; the others' validators are cleared. One conditional update per page
        (never over a page claimed meanwhile), run side by side.
        Returns (pages queued, hashes preserved, hashes cleared)."""
        rows = [
            deserialize(item)
            for item in self._page_items(
                docset_id,
                "id, #status, content_hash, created_at",
                ExpressionAttributeNames={"#status": "status"},
            )
        ]
        rows = [r for r in rows if r["status"] != PageStatus.PROCESSING.value]
        keep = {
            r["id"]
            for r in rows
            if not clear_hashes and r["status"] == PageStatus.INDEXED.value and r.get("content_hash")
        }

        def requeue(row: dict[str, Any]) -> bool:
            due = _due_keys(row["id"], now, row["created_at"])
            expression = (
                "SET #status = :pending, retry_at = :now, attempts = :zero, updated_at = :now,"
                " gsi2pk = :qpk, gsi2sk = :qsk REMOVE #error"
            )
            if row["id"] not in keep:
                expression += ", etag, last_modified, content_hash"
            try:
                self._call(
                    "update_item",
                    TableName=self.table_name,
                    Key=_key(ks.docset_pages_pk(docset_id), ks.page_sk(row["id"])),
                    UpdateExpression=expression,
                    ConditionExpression="attribute_exists(pk) AND #status <> :processing",
                    ExpressionAttributeNames={"#status": "status", "#error": "error"},
                    ExpressionAttributeValues={
                        ":pending": _s(PageStatus.PENDING.value),
                        ":processing": _s(PageStatus.PROCESSING.value),
                        ":now": _n(now),
                        ":zero": _n(0),
                        ":qpk": _s(due[ks.GSI2_PK]),
                        ":qsk": _s(due[ks.GSI2_SK]),
                    },
                )
            except ClientError as exc:
                if _conditional_failed(exc):
                    return False
                raise
            return True

        with ThreadPoolExecutor(max_workers=REQUEUE_WORKERS) as pool:
            done = [row for row, ok in zip(rows, pool.map(requeue, rows), strict=True) if ok]
        preserved = sum(r["id"] in keep for r in done)
        return len(done), preserved, len(done) - preserved

    def page_ids(self, docset_id: str) -> list[tuple[str, str | None]]:
        rows = [deserialize(item) for item in self._page_items(docset_id, "id, document_id")]
        return [(r["id"], r.get("document_id")) for r in rows]

    # ------------------------------------------------------------------ sessions

    def put_session(self, session: ClientSession) -> None:
        """Registering again is a heartbeat: connected_at keeps its first value."""
        values: dict[str, Any] = {
            ":id": _s(session.id),
            ":org": _s(session.organization_id),
            ":connected": _n(session.connected_at),
            ":heartbeat": _n(session.last_heartbeat),
            ":entity": _s("docset_session"),
        }
        expression = (
            "SET #id = :id, organization_id = :org, entity = :entity, last_heartbeat = :heartbeat,"
            " connected_at = if_not_exists(connected_at, :connected)"
        )
        if session.client_type is None:
            expression += " REMOVE client_type"
        else:
            expression += ", client_type = :client"
            values[":client"] = _s(session.client_type)
        self._call(
            "update_item",
            TableName=self.table_name,
            Key=_key(ks.org_pk(session.organization_id), ks.docset_session_sk(session.id)),
            UpdateExpression=expression,
            ExpressionAttributeNames={"#id": "id"},
            ExpressionAttributeValues=values,
        )

    def get_session(self, org_id: str, session_id: str) -> ClientSession | None:
        item = self._get(ks.org_pk(org_id), ks.docset_session_sk(session_id))
        return model_from_item(ClientSession, item) if item else None

    def delete_session(self, org_id: str, session_id: str) -> bool:
        response = self._call(
            "delete_item",
            TableName=self.table_name,
            Key=_key(ks.org_pk(org_id), ks.docset_session_sk(session_id)),
            ReturnValues="ALL_OLD",
        )
        return bool(response.get("Attributes"))

    def list_sessions(self, org_id: str) -> list[ClientSession]:
        items = self._query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": _s(ks.org_pk(org_id)),
                ":prefix": _s(ks.DOCSET_SESSION_SK_PREFIX),
            },
            ConsistentRead=True,
        )
        sessions = [model_from_item(ClientSession, item) for item in items]
        return sorted(sessions, key=lambda x: (x.connected_at, x.id))

    # ------------------------------------------------------------------ helpers

    def _update_if_exists(self, key: dict[str, Any], **kwargs: Any) -> None:
        try:
            self._call(
                "update_item",
                TableName=self.table_name,
                Key=key,
                ConditionExpression="attribute_exists(pk)",
                **kwargs,
            )
        except ClientError as exc:
            if not _conditional_failed(exc):
                raise
