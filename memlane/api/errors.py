"""One table from typed errors to HTTP status codes, and the `{"error": "..."}` body (a validation
failure's message: memlane.domain.errors.describe_validation_errors)."""

from __future__ import annotations

import json

from memlane.domain import errors as e
from memlane.domain.errors import describe_validation_errors

STATUS_BY_ERROR: dict[type[e.MemlaneError], int] = {
    e.InvalidInputError: 400,
    e.AuthenticationError: 401,
    e.ForbiddenError: 403,
    e.NotFoundError: 404,
    e.ConflictError: 409,
    e.PayloadTooLargeError: 413,
    e.UnprocessableError: 422,
    e.RateLimitedError: 429,
    e.EmbedderMismatchError: 409,
    e.DependencyUnavailableError: 503,
    e.TransientError: 503,
    e.LLMBudgetSpent: 429,  # the organization's monthly LLM tokens are spent (memlane.conversations.budget)
    e.LLMOutputError: 502,  # the configured LLM answered something unusable
}


def status_for(exc: e.MemlaneError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


def error_body(message: str) -> str:
    return json.dumps({"error": message})


__all__ = ["STATUS_BY_ERROR", "describe_validation_errors", "error_body", "status_for"]
