"""Typed errors raised by the core and adapters. The API maps each to a status code in one table
(memlane.api.errors); nothing matches on message text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class MemlaneError(Exception):
    """Base class. `message` is safe to show to the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputError(MemlaneError):
    """The client sent something wrong (400). The message names the field."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field


class UnprocessableError(MemlaneError):
    """422: the request is well formed but cannot be done here, e.g. media with no engine configured
    to read it. The message says what to configure."""


class PayloadTooLargeError(MemlaneError):
    """413: the body as a whole is too big."""


class AuthenticationError(MemlaneError):
    """401: no key, or a key that is unknown or revoked."""


class ForbiddenError(MemlaneError):
    """403: e.g. a browser origin not on the allow-list."""


class NotFoundError(MemlaneError):
    """404. Also used for another tenant's objects, so their existence never leaks."""


class ConflictError(MemlaneError):
    """409: e.g. an Idempotency-Key reused with another body, a duplicate project slug."""


class IdTakenError(ConflictError):
    """409: a write named a document or chunk id that another organization holds. Stores refuse it
    (the holder's record stays as it was); memlane's own writes never name such an id (ids are
    minted, or derived from the organization's own records; an import re-mints what it brings in)."""


class RateLimitedError(MemlaneError):
    """429 with Retry-After."""

    def __init__(self, message: str, *, retry_after_s: int, limit: int, reset_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.limit = limit
        self.reset_s = reset_s


class EmbedderMismatchError(MemlaneError):
    """A store built with one embedder was handed vectors from another."""


class TransientError(MemlaneError):
    """A dependency failed in a way worth retrying (5xx, 429, timeout, unavailable)."""


class MediaBudgetDeferred(MemlaneError):
    """The organization has spent today's budget for reading media (OCR pages, transcription
    minutes): the work waits for the next day instead of failing (the AWS workflow retries its
    Extract step on this error every hour; memlane.documents.media_budget)."""


class LLMOutputError(MemlaneError):
    """An LLM answered something memlane cannot use: not JSON, or JSON that does not match the
    prompt's schema. Its answer is dropped (never stored, never acted on); the caller may ask once
    more. `tokens`: what the unusable answer cost (it still counts against the budget)."""

    def __init__(self, message: str, tokens: int = 0) -> None:
        super().__init__(message)
        self.tokens = tokens


class LLMBudgetSpent(MemlaneError):
    """The organization's monthly LLM token budget is spent: LLM work is refused (messages are
    still saved) until the next month starts. The message says the budget and when it resets."""


class DependencyUnavailableError(TransientError):
    """A dependency (embedder, search index) is down; the work is queued for later (503 if the
    client must wait for it)."""


# --------------------------------------------------------------------------- validation messages


def _field_path(loc: Sequence[Any]) -> str:
    # Only the first element names the request location: a body field may itself be called "query".
    parts = [str(p) for i, p in enumerate(loc) if i > 0 or p not in ("body", "query", "path", "header")]
    # pydantic puts the validator's type in the path for unions/annotated types; drop those
    parts = [p for p in parts if not p.startswith(("function-", "constrained-"))]
    return ".".join(parts)


def describe_validation_errors(errors: Sequence[dict[str, Any]]) -> str:
    """`field: what is wrong` for each error, e.g. `content: must not be empty`."""
    messages = []
    for err in errors:
        kind = err.get("type", "")
        field = _field_path(err.get("loc", ()))
        msg = str(err.get("msg", "is invalid"))
        if kind == "json_invalid":
            detail = (err.get("ctx") or {}).get("error", "")
            messages.append(f"body: malformed JSON ({detail})" if detail else "body: malformed JSON")
            continue
        if kind == "missing":
            msg = "is required"
        elif kind == "extra_forbidden":
            msg = "is not a recognised field (server-owned or unknown)"
        elif kind == "value_error" and (err.get("ctx") or {}).get("error") is not None:
            msg = str(err["ctx"]["error"])  # the validator's own words, without pydantic's "Value error, "
        messages.append(f"{field}: {msg}" if field else msg)
    return "; ".join(dict.fromkeys(messages)) or "invalid request"


class ConfigurationError(MemlaneError, ValueError):
    """The host's configuration is wrong: an environment variable with a value memlane cannot use.
    Raised once, at startup (memlane.config.Settings.from_env), never for a client's request; the
    message names the variable."""

    def __init__(self, variable: str, message: str) -> None:
        super().__init__(message)
        self.variable = variable


class DamagedStoreError(MemlaneError):
    """The local data store cannot be used as it is found (not a database, cut short, emptied).
    Raised at start, before anything is read or written; the message names the file, what is
    wrong with it and how to recover. Never a client's request: the host stops with the message."""
