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
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.dynamo_table import DynamoTable, _key

SK_ENTRY = "CACHE"
SK_GENERATION = "CACHEGEN"


def entry_pk(key: str) -> str:
    return f"CACHE#{key}"


def pointer_pk(document_id: str) -> str:
    return f"DOCCACHE#{document_id}"


def pointer_sk(key: str) -> str:
    return f"CACHE#{key}"


def generation_pk(scope_key: str) -> str:
    return f"CACHEGEN#{scope_key}"


class DynamoCache(DynamoTable):
    # ------------------------------------------------------------------ Cache

    def get(self, key: str, now: datetime) -> bytes | None:
        key_item = _key(entry_pk(key), SK_ENTRY)
        item = self._call("get_item", TableName=self.table_name, Key=key_item).get("Item")
        if item is None or int(item[ks.TTL_ATTRIBUTE]["N"]) <= now.timestamp():
            return None
        return bytes(item["value"]["B"])

    def set(
        self, key: str, value: bytes, ttl_seconds: int, now: datetime, document_ids: Sequence[str] = ()
    ) -> None:
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
        items = self._batch_get([_key(generation_pk(k), SK_GENERATION) for k in scope_keys])
        found = {item[ks.PK]["S"].removeprefix("CACHEGEN#"): int(item["generation"]["N"]) for item in items}
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
        pointers = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pointer_pk(document_id)}},
            ProjectionExpression="pk, sk",
            ConsistentRead=True,
        )
        keys = [item[ks.SK]["S"].removeprefix("CACHE#") for item in pointers]
        deletes: list[dict[str, Any]] = []
        for key in keys:
            deletes.append({"DeleteRequest": {"Key": _key(entry_pk(key), SK_ENTRY)}})
            deletes.append({"DeleteRequest": {"Key": _key(pointer_pk(document_id), pointer_sk(key))}})
        self._batch_write(deletes)
        return len(keys)

    def entries_naming(self, document_id: str) -> int:
        """Cached entries that still exist and name the document, read consistently: its pointers
        lead to the entries (a pointer can outlive its entry when another document's purge
        dropped that entry; such a pointer holds nothing)."""
        pointers = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pointer_pk(document_id)}},
            ProjectionExpression="pk, sk",
            ConsistentRead=True,
        )
        keys = [_key(entry_pk(item[ks.SK]["S"].removeprefix("CACHE#")), SK_ENTRY) for item in pointers]
        return len(self._batch_get(keys)) if keys else 0
