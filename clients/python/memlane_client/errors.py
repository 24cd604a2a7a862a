"""What a request to memlane can fail with: the server's answer (status and its `error` text),
or no answer at all."""

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


class MemlaneUnreachable(MemlaneError, ConnectionError):
    """No answer: the server could not be reached, or did not answer in time (status 0)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(0, f"cannot reach memlane at {url}: {reason}")
        self.url = url
        self.reason = reason


def error_text(status: int, body: Any, text: str) -> str:
    """The server's `error` field, else the start of the raw answer, else `HTTP <status>`."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    return text.strip()[:500] or f"HTTP {status}"
