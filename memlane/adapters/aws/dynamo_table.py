"""The metadata table through the low-level DynamoDB client, shared by every adapter that lives in
it (metadata, docsets, cache): transient failures turned into TransientError, paginated queries,
batches of 25 writes / 100 reads with unprocessed items retried with backoff."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import call, error_code, lazy_client
from memlane.domain.errors import ConflictError, TransientError

BATCH_WRITE_LIMIT = 25  # BatchWriteItem's maximum
BATCH_GET_LIMIT = 100  # BatchGetItem's maximum
UNPROCESSED_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {ks.PK: {"S": pk}, ks.SK: {"S": sk}}


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class DynamoTable:
    """The metadata table through the low-level client, shared by the adapters that live in it
    (metadata, docsets): retries turned into TransientError, paginated queries, batches of 25/100
    with unprocessed items retried. `sleep` is the pause between those retries (injectable)."""

    def __init__(
        self, table_name: str, client: Any | None = None, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.table_name = table_name
        self.client = lazy_client(client, "dynamodb")
        self._sleep = sleep

    # ----------------------------------------------------------------- low level

    def _call(self, operation: str, **kwargs: Any) -> Any:
        """Every DynamoDB call goes through here (transient failures become TransientError)."""
        return call(self.client, operation, "dynamodb", **kwargs)

    def _get(self, pk: str, sk: str, projection: str | None = None) -> dict[str, Any] | None:
        kwargs: dict[str, Any] = {"TableName": self.table_name, "Key": _key(pk, sk), "ConsistentRead": True}
        if projection:
            kwargs["ProjectionExpression"] = projection
        return self._call("get_item", **kwargs).get("Item")

    def _query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        kwargs["TableName"] = self.table_name
        while True:
            page = self._call("query", **kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _scan(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """A paginated Scan: for an operator's listing across organizations only."""
        kwargs["TableName"] = self.table_name
        while True:
            page = self._call("scan", **kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _transact(self, operations: list[dict[str, Any]], conflict: str,
                  error: type[ConflictError] = ConflictError,
                  errors: Mapping[int, tuple[type[ConflictError], str]] | None = None) -> None:
        """TransactWriteItems; a failed condition becomes `error(conflict)`, or, when it is the
        operation at index i of `errors`, that entry's error and message (DynamoDB names each
        operation's reason in order)."""
        try:
            self._call("transact_write_items", TransactItems=operations)
        except ClientError as exc:
            if error_code(exc) != "TransactionCanceledException":
                raise
            reasons = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
            if "ConditionalCheckFailed" in reasons:
                failed = reasons.index("ConditionalCheckFailed")
                kind, message = (errors or {}).get(failed, (error, conflict))
                raise kind(message) from exc
            raise TransientError(f"dynamodb transaction cancelled: {reasons}") from exc

    def _batch_write(self, requests: Sequence[dict[str, Any]]) -> None:
        """BatchWriteItem in groups of 25, retrying UnprocessedItems with backoff."""
        for group in _chunks(requests, BATCH_WRITE_LIMIT):
            pending: dict[str, Any] = {self.table_name: list(group)}
            for delay in (*UNPROCESSED_RETRY_DELAYS, None):
                response = self._call("batch_write_item", RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
                if not pending.get(self.table_name):
                    break
                if delay is None:
                    left = len(pending[self.table_name])
                    raise TransientError(f"dynamodb batch write: {left} items still unprocessed")
                self._sleep(delay)

    def _batch_get(self, keys: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """BatchGetItem in groups of 100 (strongly consistent), retrying UnprocessedKeys."""
        found: list[dict[str, Any]] = []
        unique = list({(k[ks.PK]["S"], k[ks.SK]["S"]): k for k in keys}.values())
        for group in _chunks(unique, BATCH_GET_LIMIT):
            pending: dict[str, Any] = {self.table_name: {"Keys": list(group), "ConsistentRead": True}}
            for delay in (*UNPROCESSED_RETRY_DELAYS, None):
                response = self._call("batch_get_item", RequestItems=pending)
                found.extend(response.get("Responses", {}).get(self.table_name, []))
                pending = response.get("UnprocessedKeys") or {}
                if not pending.get(self.table_name):
                    break
                if delay is None:
                    raise TransientError("dynamodb batch get: keys still unprocessed")
                self._sleep(delay)
        return found
