"""How big one answer that lists stored records may get: raged's /query (up to 100 chunks, each
with its item's metadata in the payload) and Vidurai's search_memories (up to 100 memories with
their metadata).

Each result repeats what was stored with it, so an answer was as large as topK × (text +
metadata): one item with 1 MB of metadata made a 96 MB /query answer and +265 MB of server memory.
Metadata is now at most 64 KB per memory (memlane.domain.client_metadata), but 100 chunks of one
such item still echo 6.4 MB, and a chunk of text written in escapes (emoji are 12 bytes of JSON
each) is several times its length. So an answer is fitted to MAX_ANSWER_BYTES of JSON:

1. every result keeps its own fields (text, source, ids, the seed's documented payload);
2. results then get back their full metadata in rank order while the budget allows; the others
   say `metadata omitted` in their own words (raged: `payload.metadataOmitted`, Vidurai:
   `metadata.metadata_omitted`), so a client can fetch the document when it needs the rest;
3. only if the results' own fields alone pass the budget (text of pathological escapes) are the
   lowest-ranked results left out.

Ordinary answers never meet the budget: 100 chunks of 1,800 characters with a few hundred bytes of
metadata each are well under 1 MB.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

MAX_ANSWER_BYTES = 4 * 1024 * 1024  # the results of one answer as JSON; the envelope fits in the 5 MB target

R = TypeVar("R")


def json_bytes(value: Any) -> int:
    """Bytes of `value` as the API sends it (compact JSON, non-ASCII escaped)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=True, default=str))


@dataclass
class FittedAnswer(Generic[R]):
    results: list[R] = field(default_factory=list)
    metadata_omitted: int = 0  # results sent without their full metadata
    left_out: int = 0  # results not sent at all


def fit_answer(results: Sequence[R], without_metadata: Callable[[R], R], size: Callable[[R], int],
               budget: int = MAX_ANSWER_BYTES) -> FittedAnswer[R]:
    """`results` (best first) within `budget` bytes: `without_metadata(r)` is r with only its own
    fields and a note that its metadata was omitted; `size(r)` its bytes as JSON."""
    full = [size(r) for r in results]
    if sum(full) <= budget:
        return FittedAnswer(list(results))
    lean = [without_metadata(r) for r in results]
    lean_sizes = [size(r) for r in lean]
    kept, used = 0, 0
    for s in lean_sizes:
        if used + s > budget and kept:
            break
        kept, used = kept + 1, used + s
    out: list[R] = []
    omitted = 0
    for i in range(kept):
        extra = full[i] - lean_sizes[i]
        if used + extra <= budget:
            out.append(results[i])
            used += extra
        else:
            out.append(lean[i])
            omitted += 1
    return FittedAnswer(out, metadata_omitted=omitted, left_out=len(results) - kept)
