"""A docset's pages in the metadata table: their records, the page cap, the conditional claim
that hands a page to exactly one worker, and the sharded GSI2 queues (due, claimed) that the
embedded runner's loop and the stuck-page release read instead of a Scan."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code
from memlane.adapters.aws.docset_records import (
    conditional_failed,
    due_keys,
    n_value,
    page_from_item,
    page_item,
    s_value,
)
from memlane.adapters.aws.dynamo_codec import deserialize, serialize
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.docsets import Docset, DocsetPage, PageCounts, PageStatus, new_page

# Conditional updates of a refresh run side by side (DynamoDB has no batch update).
REQUEUE_WORKERS = 8
STUCK_MESSAGE = "retried after being stuck in processing"


class DynamoDocsetPages(DynamoTable):
    """The page half of DynamoDocsetStore (pages, claims, queues, refresh)."""

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
                    ":pk": s_value(ks.docset_pages_pk(docset_id)),
                    ":prefix": s_value(ks.PAGE_SK_PREFIX),
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
                ":pk": s_value(ks.docset_pages_pk(docset_id)),
                ":prefix": s_value(ks.PAGE_SK_PREFIX),
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
            if conditional_failed(exc):
                return False
            raise
        return True

    def text_version(self, docset_id: str) -> int:
        item = self._get(ks.docset_pages_pk(docset_id), ks.SK_DOCSET_TEXTS, projection="text_version")
        return int(item["text_version"]["N"]) if item and "text_version" in item else 0

    def register_text(self, docset_id: str, page_id: str, sketch: list[int], expected_version: int) -> bool:
        """One TransactWriteItems: the version item's conditional update (absent counts as 0) and
        the page's sketch (a page removed meanwhile stays removed)."""
        pk = ks.docset_pages_pk(docset_id)
        condition = "#v = :expected" if expected_version else "attribute_not_exists(#v) OR #v = :expected"
        operations = [
            {"Update": {
                "TableName": self.table_name,
                "Key": _key(pk, ks.SK_DOCSET_TEXTS),
                "UpdateExpression": "SET #v = :next, entity = :entity",
                "ConditionExpression": condition,
                "ExpressionAttributeNames": {"#v": "text_version"},
                "ExpressionAttributeValues": {":expected": n_value(expected_version),
                                              ":next": n_value(expected_version + 1),
                                              ":entity": s_value("docset_texts")},
            }},
            {"Update": {
                "TableName": self.table_name,
                "Key": _key(pk, ks.page_sk(page_id)),
                "UpdateExpression": "SET sketch = :sketch",
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": {":sketch": serialize({"s": sketch})["s"]},
            }},
        ]
        try:
            self._call("transact_write_items", TransactItems=operations)
        except ClientError as exc:
            reasons = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
            if error_code(exc) != "TransactionCanceledException" or "ConditionalCheckFailed" not in reasons:
                raise
            # The version's condition: another text joined first. Only the page's: the page is gone
            # (its docset deleted), nothing to register, as on SQLite.
            return reasons[0] != "ConditionalCheckFailed"
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
            ":processing": s_value(PageStatus.PROCESSING.value),
            ":pending": s_value(PageStatus.PENDING.value),
            ":error": s_value(PageStatus.ERROR.value),
            ":now": n_value(now),
            ":one": n_value(1),
            ":qpk": s_value(ks.page_claimed_gsi_pk(ks.page_shard(page_id))),
            ":qsk": s_value(ks.epoch_ms_key(now)),
        }
        if due_by is not None:
            condition += " AND retry_at <= :due"
            values[":due"] = n_value(due_by)
        if stuck_before is not None:
            condition = f"({condition}) OR (#status = :processing AND claimed_at < :stuck)"
            values[":stuck"] = n_value(stuck_before)
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
            if conditional_failed(exc):
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
            "ExpressionAttributeValues": {":q": s_value(partition), **({":upper": s_value(upper)} if upper else {})},
        }
        if limit is not None and not exclude_pks:
            kwargs["Limit"] = limit
        if exclude_pks:
            names = [f":x{i}" for i in range(len(exclude_pks))]
            kwargs["FilterExpression"] = f"NOT pk IN ({', '.join(names)})"
            kwargs["ExpressionAttributeValues"].update(
                {n: s_value(pk) for n, pk in zip(names, exclude_pks, strict=True)}
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
                "ExpressionAttributeValues": {":status": s_value(status.value)},
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
                ":processing": s_value(PageStatus.PROCESSING.value),
                ":before": n_value(stuck_before),
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
                due = due_keys(row["id"], now, row["created_at"])
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
                            ":pending": s_value(PageStatus.PENDING.value),
                            ":processing": s_value(PageStatus.PROCESSING.value),
                            ":now": n_value(now),
                            ":before": n_value(stuck_before),
                            ":message": s_value(STUCK_MESSAGE),
                            ":qpk": s_value(due[ks.GSI2_PK]),
                            ":qsk": s_value(due[ks.GSI2_SK]),
                        },
                    )
                except ClientError as exc:
                    if not conditional_failed(exc):
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
            due = due_keys(row["id"], now, row["created_at"])
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
                        ":pending": s_value(PageStatus.PENDING.value),
                        ":processing": s_value(PageStatus.PROCESSING.value),
                        ":now": n_value(now),
                        ":zero": n_value(0),
                        ":qpk": s_value(due[ks.GSI2_PK]),
                        ":qsk": s_value(due[ks.GSI2_SK]),
                    },
                )
            except ClientError as exc:
                if conditional_failed(exc):
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
