"""The recall cache (memlane.ports.Cache) in the metadata table.

Items, all in the one table (see dynamo_schema.py for the rest of the key design):

| item                             | key                                      | attributes               |
| -------------------------------- | ---------------------------------------- | ------------------------ |
| a cached ranking                 | pk=CACHE#{key}  sk=CACHE                 | value (B), document_ids, |
|                                  |                                          | expires_at (TTL)         |
| "this document is in that entry" | pk=DOCCACHE#{document}  sk=CACHE#{key}   | expires_at (TTL)         |
| a project's generation number    | pk=CACHEGEN#{scope}  sk=CACHEGEN         | generation (N)           |

Why a pointer item per (document, entry) rather than a sparse GSI: `purge_document` must find
every entry naming a document, and a GSI can hold one document id per item, not the list an entry
names. The pointers live in the main table, so a purge is one Query on the table's own key plus a
BatchWriteItem - no index grant is needed by the functions that delete (API, forget job). Both
kinds of item expire through the table's TTL; DynamoDB deletes expired items lazily (within days),
so `get` also compares `expires_at` with the clock.

Generations are never expired: one small item per project, bumped atomically with ADD.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code, is_transient, new_client
from memlane.domain.errors import TransientError

SK_ENTRY = "CACHE"
SK_GENERATION = "CACHEGEN"
BATCH_WRITE_LIMIT = 25
BATCH_GET_LIMIT = 100
UNPROCESSED_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)


def entry_pk(key: str) -> str:
    return f"CACHE#{key}"


def pointer_pk(document_id: str) -> str:
    return f"DOCCACHE#{document_id}"


def pointer_sk(key: str) -> str:
    return f"CACHE#{key}"


def generation_pk(scope_key: str) -> str:
    return f"CACHEGEN#{scope_key}"


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {ks.PK: {"S": pk}, ks.SK: {"S": sk}}


class DynamoCache:
    def __init__(
        self, table_name: str, client: Any | None = None, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.table_name = table_name
        self._client = client
        self._sleep = sleep

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = new_client("dynamodb")
        return self._client

    def _call(self, operation: str, **kwargs: Any) -> Any:
        try:
            return getattr(self.client, operation)(**kwargs)
        except ClientError as exc:
            if is_transient(exc):
                raise TransientError(f"dynamodb {operation}: {error_code(exc)}") from exc
            raise

    # ------------------------------------------------------------------ Cache

    def get(self, key: str, now: datetime) -> bytes | None:
        key_item = _key(entry_pk(key), SK_ENTRY)
        item = self._call("get_item", TableName=self.table_name, Key=key_item).get("Item")
        if item is None or int(item[ks.TTL_ATTRIBUTE]["N"]) <= now.timestamp():
            return None
        return bytes(item["value"]["B"])

    def set(self, key: str, value: bytes, ttl_seconds: int, now: datetime,
            document_ids: Sequence[str] = ()) -> None:
        expires = {"N": str(math.ceil(now.timestamp() + ttl_seconds))}
        documents = list(dict.fromkeys(document_ids))
        entry: dict[str, Any] = {
            **_key(entry_pk(key), SK_ENTRY),
            "entity": {"S": "cache_entry"},
            "value": {"B": value},
            ks.TTL_ATTRIBUTE: expires,
        }
        if documents:
            entry["document_ids"] = {"SS": documents}
        # Pointers first: an entry is never readable without the pointers that let a delete find it.
        pointers = [
            {"PutRequest": {"Item": {**_key(pointer_pk(doc), pointer_sk(key)), ks.TTL_ATTRIBUTE: expires}}}
            for doc in documents
        ]
        self._batch_write(pointers)
        self._call("put_item", TableName=self.table_name, Item=entry)

    def generations(self, scope_keys: Sequence[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(scope_keys))
        found: dict[str, int] = {}
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            keys = [_key(generation_pk(k), SK_GENERATION) for k in wanted[start:start + BATCH_GET_LIMIT]]
            for item in self._batch_get(keys):
                found[item[ks.PK]["S"].removeprefix("CACHEGEN#")] = int(item["generation"]["N"])
        return {k: found.get(k, 0) for k in scope_keys}

    def bump_generation(self, scope_key: str) -> int:
        response = self._call(
            "update_item",
            TableName=self.table_name,
            Key=_key(generation_pk(scope_key), SK_GENERATION),
            UpdateExpression="ADD generation :one SET entity = :entity",
            ExpressionAttributeValues={":one": {"N": "1"}, ":entity": {"S": "cache_generation"}},
            ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["generation"]["N"])

    def purge_document(self, document_id: str) -> int:
        """Deletes every cached entry that names the document, and the pointers to them."""
        keys = [item[ks.SK]["S"].removeprefix("CACHE#") for item in self._pointers(document_id)]
        deletes: list[dict[str, Any]] = []
        for key in keys:
            deletes.append({"DeleteRequest": {"Key": _key(entry_pk(key), SK_ENTRY)}})
            deletes.append({"DeleteRequest": {"Key": _key(pointer_pk(document_id), pointer_sk(key))}})
        self._batch_write(deletes)
        return len(keys)

    # ------------------------------------------------------------------ plumbing

    def _pointers(self, document_id: str) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pointer_pk(document_id)}},
            "ProjectionExpression": "pk, sk",
            "ConsistentRead": True,
        }
        while True:
            page = self._call("query", **kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _batch_write(self, requests: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(requests), BATCH_WRITE_LIMIT):
            pending: dict[str, Any] = {self.table_name: list(requests[start:start + BATCH_WRITE_LIMIT])}
            for delay in (*UNPROCESSED_RETRY_DELAYS, None):
                pending = self._call("batch_write_item", RequestItems=pending).get("UnprocessedItems") or {}
                if not pending.get(self.table_name):
                    break
                if delay is None:
                    raise TransientError(f"dynamodb batch write: {len(pending[self.table_name])} unprocessed")
                self._sleep(delay)

    def _batch_get(self, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        pending: dict[str, Any] = {self.table_name: {"Keys": keys, "ConsistentRead": True}}
        for delay in (*UNPROCESSED_RETRY_DELAYS, None):
            response = self._call("batch_get_item", RequestItems=pending)
            found.extend(response.get("Responses", {}).get(self.table_name, []))
            pending = response.get("UnprocessedKeys") or {}
            if not pending.get(self.table_name):
                return found
            if delay is None:
                raise TransientError("dynamodb batch get: keys still unprocessed")
            self._sleep(delay)
        return found

