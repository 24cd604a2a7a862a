"""Bulk saves (POST /v3/memories): up to 100 memories in one request, each answered on its own.

Each item goes through the same steps as a single save (memlane.services.memory.stage_memory:
validation, extraction, dedupe, versions); the items to write in the request are then written
together through the one write path (memlane.documents.writing: each gets its safety-net job before
it is stored, so a crash between two items leaves none stuck), so their chunks share embedding
batches. An item that fails (bad input, a media type nothing here can read) is
that item's error; the others are saved. Items saved earlier in the same request count for
dedupe: the same content twice is saved once, and the second answers as the duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from memlane.domain.errors import MemlaneError
from memlane.domain.principal import Principal
from memlane.domain.requests import BulkMemoriesIn, MemoryIn, MemoryOut
from memlane.ports import Services
from memlane.services.memory import SaveBatch, stage_memory


@dataclass
class ItemOutcome:
    index: int
    saved: MemoryOut | None = None
    error: Exception | None = None


def save_memories(svc: Services, who: Principal, body: BulkMemoriesIn) -> list[ItemOutcome]:
    outcomes = [ItemOutcome(i) for i in range(len(body.items))]
    batch = SaveBatch(svc)
    for i, raw in enumerate(body.items):
        try:
            item = raw if isinstance(raw, MemoryIn) else MemoryIn.model_validate(raw)
            batch.add(i, stage_memory(svc, who, item, protect_write=True))
        except (MemlaneError, ValidationError) as exc:
            outcomes[i].error = exc
    for i, answer in batch.write().items():
        if isinstance(answer, Exception):
            outcomes[i].error = answer
        else:
            outcomes[i].saved = answer
    return outcomes
