"""One table from typed errors to HTTP status codes, and the `{"error": "..."}` body."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memlane.domain import errors as e

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
}


def status_for(exc: e.MemlaneError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


def error_body(message: str) -> str:
    return json.dumps({"error": message})


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
