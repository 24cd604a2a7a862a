from __future__ import annotations

import pytest

from memlane.domain.errors import DependencyUnavailableError, TransientError
from memlane.retry import call_with_retries


class Flaky:
    """Fails with the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_success_needs_no_sleep():
    sleeps: list[float] = []
    assert call_with_retries(lambda: 42, sleep=sleeps.append) == 42
    assert sleeps == []


def test_transient_failures_are_retried_with_the_delays_in_turn():
    sleeps: list[float] = []
    fn = Flaky(TimeoutError("slow"), ConnectionError("reset"))
    assert call_with_retries(fn, sleep=sleeps.append) == "ok"
    assert fn.calls == 3
    assert sleeps == [1.0, 2.0]


def test_gives_up_after_len_delays_plus_one_attempts_with_a_transient_error():
    sleeps: list[float] = []
    last = TimeoutError("still slow")
    fn = Flaky(TimeoutError("1"), TimeoutError("2"), TimeoutError("3"), last)
    with pytest.raises(TransientError) as info:
        call_with_retries(fn, sleep=sleeps.append, operation="embedding")
    assert fn.calls == 4
    assert sleeps == [1.0, 2.0, 4.0]
    assert info.value.__cause__ is last
    assert info.value.message == "embedding failed after 4 attempts: still slow"


def test_non_transient_errors_are_raised_at_once():
    sleeps: list[float] = []
    fn = Flaky(ValueError("bad input"))
    with pytest.raises(ValueError, match="bad input"):
        call_with_retries(fn, sleep=sleeps.append)
    assert fn.calls == 1
    assert sleeps == []


def test_custom_classification_and_delays():
    sleeps: list[float] = []
    fn = Flaky(KeyError("a"), KeyError("b"))
    result = call_with_retries(
        fn, delays=(0.5, 0.25), is_transient=lambda exc: isinstance(exc, KeyError), sleep=sleeps.append
    )
    assert result == "ok"
    assert sleeps == [0.5, 0.25]


def test_no_delays_means_one_attempt():
    fn = Flaky(TimeoutError("x"))
    with pytest.raises(TransientError):
        call_with_retries(fn, delays=(), sleep=lambda _: None)
    assert fn.calls == 1


def test_a_transient_memlane_error_keeps_its_own_type():
    unavailable = DependencyUnavailableError("index down")
    fn = Flaky(unavailable, unavailable)
    with pytest.raises(DependencyUnavailableError) as info:
        call_with_retries(fn, delays=(1.0,), sleep=lambda _: None)
    assert info.value is unavailable
    assert fn.calls == 2
