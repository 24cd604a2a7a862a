"""Per-key rate limits on AWS (memlane.services.ratelimit.RateLimiter) in the metadata table.

One item per key and minute: pk=RATE#{key_id}#{window_start}, sk=RATE. Each request is one
UpdateItem `ADD count <weight>` (1, or a bulk save's item count) returning the new count, so concurrent Lambdas share the window exactly
(no read-modify-write). Windows are aligned to the minute, like the local limiter, and the item
carries `expires_at` (TTL) two windows ahead so old windows clean themselves up.

The usage plan throttles in front of this (API Gateway counts per key as well); this limiter is
what sends memlane's RateLimit-* headers and the 429 with Retry-After, the same as locally.
When DynamoDB cannot count (throttled or 5xx after botocore's retries) the request is let through
and the failure logged: the usage plan still throttles the key, and a counter outage must not turn
every request into a 5xx.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code, is_transient, lazy_client
from memlane.ports import WINDOW_SECONDS, RateDecision, decide

SK_RATE = "RATE"

log = logging.getLogger(__name__)


def window_pk(key_id: str, window_start: int) -> str:
    return f"RATE#{key_id}#{window_start}"


class DynamoRateLimiter:
    def __init__(self, table_name: str, client: Any | None = None) -> None:
        self.table_name = table_name
        self.client = lazy_client(client, "dynamodb")

    def hit(self, key_id: str, limit: int, now: datetime, weight: int = 1) -> RateDecision:
        ts = now.timestamp()
        start = int(ts - (ts % WINDOW_SECONDS))
        try:
            response = self.client.update_item(
                TableName=self.table_name,
                Key={ks.PK: {"S": window_pk(key_id, start)}, ks.SK: {"S": SK_RATE}},
                UpdateExpression="ADD #count :one SET #ttl = if_not_exists(#ttl, :expires)",
                ExpressionAttributeNames={"#count": "count", "#ttl": ks.TTL_ATTRIBUTE},
                ExpressionAttributeValues={
                    ":one": {"N": str(weight)},
                    ":expires": {"N": str(start + 2 * WINDOW_SECONDS)},
                },
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as exc:
            if not is_transient(exc):
                raise
            log.warning("rate limit not counted for key %s: dynamodb %s", key_id, error_code(exc))
            return decide(0, limit, start, ts)
        count = int(response["Attributes"]["count"]["N"])
        return decide(count, limit, start, ts)
