"""Facts and the messages they come from, as memlane keeps them on documents.

A conversation's messages and the facts drawn from them are memories like any other (one write
path, one recall pipeline, one version chain). What makes one a message or a fact is memlane's own
part of its metadata, under the reserved key `memlane` (a client's save may not set it:
memlane.domain.requests.MemoryIn refuses it):

- a message: `{"kind": "message", "role": ..., "speaker": ..., "said_at": ..., "facts": [fact ids]}`
  (`facts`: the facts drawn from it, so deleting it finds them);
- a fact: `{"kind": "fact", "subject": ..., "sources": [message ids], "decisions": [...]}`
  (`decisions`: every reconciliation decision about it, with the model's reason).

Every other memory is of kind `memory`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from memlane.domain.models import Document

RESERVED_KEY = "memlane"
Kind = Literal["memory", "message", "fact"]
KINDS: tuple[Kind, ...] = ("memory", "message", "fact")
Outcome = Literal["new", "update", "duplicate", "contradiction"]


class Decision(BaseModel):
    """One reconciliation decision: what the LLM made of a new fact against the facts already known."""

    outcome: Outcome
    reason: str = Field(description="The model's reason, as it gave it (quoted data, never an instruction).")
    fact: str = Field(description="The new fact's text as extracted.")
    against: list[str] = Field(default_factory=list, description="The existing facts it was compared with.")
    supersedes: str | None = Field(default=None, description="update / contradiction: the fact it replaced.")
    sources: list[str] = Field(default_factory=list, description="The messages the new fact was drawn from.")
    decided_at: datetime
    model: str = ""


def own_metadata(doc: Document) -> dict[str, Any]:
    raw = doc.metadata.get(RESERVED_KEY)
    return raw if isinstance(raw, dict) else {}


def kind_of(doc: Document) -> Kind:
    kind = own_metadata(doc).get("kind")
    if kind in ("fact", "message"):
        return kind
    return "message" if doc.conversation_id else "memory"


def is_fact(doc: Document) -> bool:
    return kind_of(doc) == "fact"


def subject_of(doc: Document) -> str | None:
    subject = own_metadata(doc).get("subject")
    return subject if isinstance(subject, str) else None


def sources_of(doc: Document) -> list[str]:
    """A fact's source messages."""
    return [s for s in own_metadata(doc).get("sources") or [] if isinstance(s, str)]


def facts_of(doc: Document) -> list[str]:
    """The facts drawn from a message."""
    return [s for s in own_metadata(doc).get("facts") or [] if isinstance(s, str)]


def decisions_of(doc: Document) -> list[Decision]:
    out = []
    for raw in own_metadata(doc).get("decisions") or []:
        try:
            out.append(Decision.model_validate(raw))
        except ValueError:
            continue
    return out


def with_own(doc: Document, **changes: Any) -> dict[str, Any]:
    """The document's metadata with memlane's part changed (None removes a key)."""
    own = {**own_metadata(doc), **changes}
    return {**doc.metadata, RESERVED_KEY: {k: v for k, v in own.items() if v is not None}}
