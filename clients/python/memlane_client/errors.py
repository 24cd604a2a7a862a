"""What a request to memlane can fail with: the server's answer (status and its `error` text),
or no answer at all. Each HTTP status a client acts on has its own class, all of them
`MemlaneError`, so `except MemlaneError` still catches every one."""

from __future__ import annotations

from typing import Any


class MemlaneError(Exception):
    """The server answered with an HTTP error. `error` is the server's `{"error": ...}` text (or
    the start of a body that was not memlane's JSON, e.g. a proxy's page); `body` the decoded
    answer; `headers` the response headers (Retry-After on a 429)."""

    def __init__(self, status: int, error: str, body: Any = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"{status}: {error}" if status else error)
        self.status = status
        self.error = error
        self.body = body
        self.headers = headers or {}


class BadRequest(MemlaneError):
    """400: the request was invalid; `error` names the field (`"limit: must be at most 100"`)."""


class AuthenticationError(MemlaneError):
    """401: no key, or a key the server does not know (revoked, mistyped)."""


class PermissionDenied(MemlaneError):
    """403: the key may not do this (e.g. manage keys), or the browser origin is refused."""


class NotFound(MemlaneError):
    """404: nothing of yours at that id or path."""


class Conflict(MemlaneError):
    """409: a conflict with what is stored (a taken name, a save still in progress)."""


class PayloadTooLarge(MemlaneError):
    """413: the body is over the server's limit (10 MB)."""


class Unprocessable(MemlaneError):
    """422: media nothing on the server can read; `error` says what to configure."""


class RateLimited(MemlaneError):
    """429: over the key's rate limit, after the client's retries. `retry_after` is the server's
    Retry-After in seconds (None when it sent none)."""

    @property
    def retry_after(self) -> float | None:
        return parse_retry_after(self.headers.get("retry-after") or self.headers.get("Retry-After"))


class ServerError(MemlaneError):
    """5xx: the server (or a gateway in front of it) failed, after the client's retries."""


class MemlaneUnreachable(MemlaneError, ConnectionError):
    """No answer: the server could not be reached, or did not answer in time (status 0)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(0, f"cannot reach memlane at {url}: {reason}")
        self.url = url
        self.reason = reason


_BY_STATUS: dict[int, type[MemlaneError]] = {
    400: BadRequest, 401: AuthenticationError, 403: PermissionDenied, 404: NotFound, 409: Conflict,
    413: PayloadTooLarge, 422: Unprocessable, 429: RateLimited,
}


def error_for(status: int, error: str, body: Any = None, headers: dict[str, str] | None = None) -> MemlaneError:
    """The exception for an HTTP error answer: its own class where the status has one."""
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else MemlaneError)
    return cls(status, error, body, headers)


def error_text(status: int, body: Any, text: str) -> str:
    """The server's `error` field, else the start of the raw answer, else `HTTP <status>`."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    return text.strip()[:500] or f"HTTP {status}"


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number of seconds, or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        from datetime import UTC, datetime
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds)
