"""What a request costs against its key's rate limit (memlane.api.app counts it before the route
runs, so a refused request does no work).

A request counts once, except on the bulk routes, which count by weight: the larger of their items
and their bytes, so that one body cannot carry a minute's worth of work as a single request
(before, `/ingest` with 1,000 items and `/v3/conversations` with 100 messages of 50,000 characters
each counted once):

| route | items | bytes |
| --- | --- | --- |
| POST /v3/memories | each item (as documented since it was added) | one per 100 KB of body |
| POST /ingest | one per 25 items | one per 100 KB of body |
| POST /v3/conversations | one per 25 messages | one per 100 KB of body |

The allowance (25 items, 100 KB) is what keeps today's clients where they were: a raged client
indexing a repository sends batches of files of a few KB (100 files of 3 KB weigh 4, so 2,000
files a minute stay under the default 100), a chat client saves a turn or two a request (weight 1).
Connection syncs write inside the server and never pass the rate limiter; asking for one is one
request. A request never weighs more than the key's whole limit, so any body a key may send can go
through once its minute resets.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from memlane.domain.errors import InvalidInputError
from memlane.domain.json_input import parse_json

BYTES_PER_REQUEST = 100 * 1024
ITEMS_PER_REQUEST = 25


def _items(body: Any, key: str) -> int:
    items = body.get(key) if isinstance(body, dict) else None
    return len(items) if isinstance(items, list) else 0


def _each_item(key: str) -> Callable[[Any], int]:
    return lambda body: _items(body, key)


def _per_allowance(key: str) -> Callable[[Any], int]:
    return lambda body: math.ceil(_items(body, key) / ITEMS_PER_REQUEST)


# (method, path) → the weight of a body by its items; every bulk route also weighs its bytes.
BULK_ROUTES: dict[tuple[str, str], Callable[[Any], int]] = {
    ("POST", "/v3/memories"): _each_item("items"),
    ("POST", "/ingest"): _per_allowance("items"),
    ("POST", "/v3/conversations"): _per_allowance("messages"),
}


def request_weight(event: dict[str, Any], limit: int) -> int:
    """How many requests this one counts as: 1, or a bulk body's weight (at most `limit`)."""
    by_items = BULK_ROUTES.get((str(event.get("httpMethod", "")).upper(), str(event.get("path", ""))))
    if by_items is None:
        return 1
    raw = event.get("body") or ""
    size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
    try:
        items = by_items(parse_json(raw or "null"))
    except InvalidInputError:
        items = 0  # not JSON: the route answers 400, and its bytes still count
    return max(1, min(limit, max(items, math.ceil(size / BYTES_PER_REQUEST))))
