"""Retry with backoff for calls to external services (spec §12.2).

Only transient failures (timeouts, 5xx, 429, connection errors) are retried; anything else is the
caller's problem and is raised at once. `sleep` is injectable so tests don't wait.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from memlane.domain.errors import TransientError

T = TypeVar("T")

DEFAULT_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0)

logger = logging.getLogger(__name__)


def is_transient_error(exc: BaseException) -> bool:
    """The default classification: our own TransientError and the OS-level network failures."""
    return isinstance(exc, TransientError | TimeoutError | ConnectionError)


def call_with_retries(
    fn: Callable[[], T],
    *,
    delays: Sequence[float] = DEFAULT_DELAYS,
    is_transient: Callable[[BaseException], bool] = is_transient_error,
    sleep: Callable[[float], None] = time.sleep,
    operation: str = "dependency call",
) -> T:
    """Call `fn`; after a transient failure wait `delays[0]`, retry, wait `delays[1]`, ... so there are
    `len(delays) + 1` attempts in all. When the last attempt fails transiently, raise
    `TransientError` chained to it; a non-transient error propagates unchanged at once."""
    attempts = len(delays) + 1
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except Exception as exc:
            if not is_transient(exc):
                raise
            if attempt == attempts:
                if isinstance(exc, TransientError):
                    raise  # already says what it is (e.g. DependencyUnavailableError)
                raise TransientError(f"{operation} failed after {attempts} attempts: {exc}") from exc
            delay = delays[attempt - 1]
            logger.warning(
                "%s failed (attempt %d of %d), retrying in %.1fs: %s",
                operation,
                attempt,
                attempts,
                delay,
                exc,
            )
            sleep(delay)
    raise AssertionError("unreachable")  # the loop always returns or raises
