"""What a memory's metadata may hold when it comes from outside memlane, the same on every write
route (POST /v3/memory and /v3/memories, which Vidurai's clients use too; raged's /ingest; a
connection's synced items; `memlane import`).

Two rules:

- **At most MAX_METADATA_BYTES (64 KB), serialized as the API echoes it** (compact JSON with
  non-ASCII characters escaped, which is what GET /v3/documents, raged's /query payload and
  Vidurai's search_memories send back). Metadata was bounded only by the 10 MB body, and every
  answer that echoes it multiplied it: one item with 1 MB of metadata made a 96 MB /query answer.
  64 KB is hundreds of times what any client sends (ids, paths, a language, tags, a salience),
  and 100 results of it still fit an answer's budget (memlane.domain.answer_budget).
- **The `memlane` key is memlane's own** (memlane.domain.facts: a message's and a fact's links).
  A client that sets it could forge a fact that the profile and `kind: ["fact"]` recall present as
  extracted, so it is refused wherever a client writes metadata. `memlane import` is the one
  writer that keeps it: the file is memlane's own export, and its messages and facts carry it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memlane.domain.facts import RESERVED_KEY

MAX_METADATA_BYTES = 64 * 1024


def metadata_bytes(metadata: Mapping[str, Any]) -> int:
    """The size of `metadata` as an answer carries it: compact JSON, non-ASCII escaped (\\uXXXX)."""
    return len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=True, default=str))


def metadata_problem(metadata: Mapping[str, Any], *, reserved_allowed: bool = False) -> tuple[str, str] | None:
    """(the key at fault, or "" for the whole, what is wrong) when `metadata` breaks a rule; None
    when it may be stored."""
    if not reserved_allowed and RESERVED_KEY in metadata:
        return RESERVED_KEY, "is set by memlane (a message's or a fact's links), not by a client"
    size = metadata_bytes(metadata)
    if size > MAX_METADATA_BYTES:
        return "", (f"is {size:,} bytes as JSON; at most {MAX_METADATA_BYTES:,} (64 KB) are kept per memory "
                    "(keep large data in the content)")
    return None


def check_client_metadata(metadata: Mapping[str, Any], *, reserved_allowed: bool = False) -> None:
    """For a pydantic validator: ValueError("metadata.memlane: …" or "metadata: …"), which the
    model's 400 reports at the field's place (`items[3].metadata: …`)."""
    problem = metadata_problem(metadata, reserved_allowed=reserved_allowed)
    if problem is not None:
        key, what = problem
        raise ValueError(f"metadata.{key}: {what}" if key else f"metadata: {what}")


def describe_metadata_problem(field: str, metadata: Mapping[str, Any], *,
                              reserved_allowed: bool = False) -> tuple[str, str] | None:
    """(field name, message) for InvalidInputError outside a model (a synced item, an import line)."""
    problem = metadata_problem(metadata, reserved_allowed=reserved_allowed)
    if problem is None:
        return None
    key, what = problem
    return (f"{field}.{key}" if key else field), what
