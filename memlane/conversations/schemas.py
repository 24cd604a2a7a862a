"""POST /v3/conversations and GET /v3/extractions/{id}: requests, answers and the extraction record."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memlane.domain.facts import Decision
from memlane.domain.fields import (
    MAX_SAFE_INT,
    Instant,
    NonBlankStr,
    OptionalTrimmedNonBlankStr,
    TrimmedNonBlankStr,
)
from memlane.domain.models import DocumentStatus
from memlane.domain.requests import MAX_CONTENT_CHARS, MAX_CONVERSATION_ID_CHARS, UUIDStr

MAX_MESSAGES = 100
MAX_MESSAGE_CHARS = 50_000


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageIn(_Request):
    content: NonBlankStr = Field(min_length=1, max_length=min(MAX_MESSAGE_CHARS, MAX_CONTENT_CHARS))
    role: Literal["user", "assistant", "system", "tool"] | None = Field(
        default=None, description="Who sent it, as chat APIs say it. Give role, speaker or both.")
    speaker: OptionalTrimmedNonBlankStr = Field(default=None, min_length=1, max_length=200,
                                                description="The speaker's name (\"Caroline\").")
    time: Instant | None = Field(default=None, description="When it was said (ISO 8601).")
    message_index: int | None = Field(
        default=None, ge=0, le=MAX_SAFE_INT, description="Its position in the conversation; default after the previous one. At a "
                                        "stored position: the same text is a duplicate, other text a new version.")

    @field_validator("time")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @model_validator(mode="after")
    def _who(self) -> MessageIn:
        if self.role is None and self.speaker is None:
            raise ValueError("role: give role or speaker (who said it)")
        return self


class ConversationIn(_Request):
    conversation_id: TrimmedNonBlankStr = Field(min_length=1, max_length=MAX_CONVERSATION_ID_CHARS)
    messages: list[MessageIn] = Field(
        min_length=1, max_length=MAX_MESSAGES,
        description=f"In the order they were said, at most {MAX_MESSAGES} a request. A chat client may send the "
                    "whole history each turn: messages that repeat the conversation's stored ones from its first, "
                    "in order (same role, speaker and text), are answered as duplicates and only the rest is stored.")
    project_id: UUIDStr | None = Field(default=None, description="Default: the organization's default project.")
    subject: OptionalTrimmedNonBlankStr = Field(
        default=None, min_length=1, max_length=200,
        description="The person the facts are about (an end user of yours; not the API key's user). Default: "
                    "the person each fact names.")
    extract: bool = Field(default=True, description="Draw facts from the messages when an LLM is configured.")

    @field_validator("messages")
    @classmethod
    def _order(cls, v: list[MessageIn]) -> list[MessageIn]:
        given = [m.message_index for m in v if m.message_index is not None]
        if given and len(given) != len(v):
            raise ValueError("give message_index on every message or on none")
        if given and any(b <= a for a, b in zip(given, given[1:], strict=False)):
            raise ValueError("message_index must increase in the order the messages are listed")
        return v


class SavedMessage(BaseModel):
    id: str
    message_index: int | None
    status: DocumentStatus
    duplicate: bool = Field(default=False, description="Already saved (the conversation's history sent again, "
                                                       "or the same text at its message_index): that memory "
                                                       "stands for it and nothing new is stored.")


ExtractionStatus = Literal["off", "refused", "queued", "running", "done", "failed"]


class ExtractionState(BaseModel):
    status: ExtractionStatus = Field(description="off: no LLM, extract=false, or no new message; refused: the "
                                                 "monthly token budget is spent; queued, running, done, failed: the "
                                                 "extraction job.")
    id: str | None = Field(default=None, description="GET /v3/extractions/{id} follows the job.")
    reason: str | None = Field(default=None, description="Why it is off, refused or failed.")


class ConversationOut(BaseModel):
    conversation_id: str
    project_id: str
    messages: list[SavedMessage]
    saved: int
    duplicates: int
    extraction: ExtractionState


class FactResult(BaseModel):
    text: str | None = Field(default=None, description="The fact's text, read from the fact while it exists: the "
                                                       "record itself keeps no text once the extraction ends.")
    outcome: Literal["new", "update", "duplicate", "contradiction", "refused"]
    fact_id: str | None = Field(default=None, description="The fact stored or confirmed (null when refused).")
    sources: list[str] = Field(default_factory=list, description="The messages it was drawn from.")
    decided_at: datetime | None = None
    decision: Decision | None = Field(default=None, description="The decision with the model's reason, read from "
                                                                 "the fact while it exists.")
    error: str | None = None


class ExtractionOut(BaseModel):
    """An extraction job and what it did. The record is kept beside the messages; once the job ends it
    holds ids, outcomes and counts, never text (a fact's text and reason are read from the fact, so
    they go when it goes)."""

    id: str
    conversation_id: str
    project_id: str
    subject: str | None = None
    status: ExtractionStatus
    attempts: int = 0
    error: str | None = None
    messages: list[str]
    facts: list[FactResult] = Field(default_factory=list)
    extracted: list[dict] | None = Field(default=None, description="The facts the LLM extracted (checked), "
                                                                  "kept so a retry continues where it stopped.")
    tokens: int = 0
    created_at: datetime
    finished_at: datetime | None = None
    user_id: str = "api"


class ConversationMessageOut(BaseModel):
    id: str
    message_index: int | None
    kind: Literal["memory", "message", "fact"] = Field(
        description="message: saved by POST /v3/conversations; memory: saved by POST /v3/memory with this "
                    "conversation_id.")
    role: str | None = None
    speaker: str | None = None
    time: datetime | None = Field(default=None, description="When it was said, as the save gave it.")
    content: str
    created_at: datetime


class ConversationMessagesOut(BaseModel):
    conversation_id: str
    project_id: str
    messages: list[ConversationMessageOut] = Field(description="In conversation order (message_index).")
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` for the next page; null on the last.")
