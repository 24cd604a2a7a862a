"""How long an execution of a state machine can take at worst, from its definition (Amazon States
Language): the state machine's own timeout is this plus a margin, so a retry can never outlast
the execution (reliability.md #33). An execution that times out fails with States.Timeout, which no
Catch sees: the document would stay `queued`, its queue message already gone.

Per Task state, the worst case is every retrier used to the end:

    attempts = 1 + Σ MaxAttempts            each attempt may last the Task's TimeoutSeconds
    waits    = Σ Σ_k min(IntervalSeconds × BackoffRate^k, MaxDelaySeconds)

(Step Functions counts each retrier's attempts separately, so the sum is reachable.) A Wait state
costs its Seconds, except inside a cycle (a poll loop such as Wait ⇄ GetTranscriptionJob), which has
no bound of its own: it costs `loop_allowance`. Choice branches and Catch edges are followed, and
the longest path from StartAt counts. A Task without TimeoutSeconds has no bound and is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

# Amazon States Language defaults for a Retrier.
DEFAULT_INTERVAL_S = 1
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_RATE = 2.0


class UnboundedState(ValueError):
    """A state whose worst case cannot be known from the definition."""


def retry_seconds(retrier: Mapping[str, Any]) -> tuple[int, float]:
    """(attempts after the first, seconds spent waiting between them) for one retrier."""
    attempts = int(retrier.get("MaxAttempts", DEFAULT_MAX_ATTEMPTS))
    interval = float(retrier.get("IntervalSeconds", DEFAULT_INTERVAL_S))
    rate = float(retrier.get("BackoffRate", DEFAULT_BACKOFF_RATE))
    cap = float(retrier.get("MaxDelaySeconds", float("inf")))
    return attempts, sum(min(interval * rate**k, cap) for k in range(attempts))


def task_seconds(name: str, state: Mapping[str, Any]) -> float:
    if "TimeoutSeconds" not in state:
        raise UnboundedState(f"Task {name} has no TimeoutSeconds: its worst case has no bound")
    retries = [retry_seconds(r) for r in state.get("Retry", [])]
    attempts = 1 + sum(a for a, _ in retries)
    return attempts * float(state["TimeoutSeconds"]) + sum(w for _, w in retries)


def _next_states(state: Mapping[str, Any]) -> list[str]:
    found = [state["Next"]] if "Next" in state else []
    found += [choice["Next"] for choice in state.get("Choices", [])]
    found += [state["Default"]] if "Default" in state else []
    found += [catcher["Next"] for catcher in state.get("Catch", [])]
    return found


def _in_cycle(states: Mapping[str, Any], start: str) -> bool:
    seen: set[str] = set()
    frontier = list(_next_states(states[start]))
    while frontier:
        name = frontier.pop()
        if name == start:
            return True
        if name not in seen:
            seen.add(name)
            frontier.extend(_next_states(states[name]))
    return False


def state_seconds(states: Mapping[str, Any], name: str, loop_allowance: float) -> float:
    state = states[name]
    kind = state["Type"]
    if kind == "Task":
        return task_seconds(name, state)
    if kind == "Wait":
        if _in_cycle(states, name):
            return loop_allowance
        if "Seconds" not in state:
            raise UnboundedState(f"Wait {name} waits for a time read from the input: no bound")
        return float(state["Seconds"])
    if kind in ("Pass", "Choice", "Succeed", "Fail"):
        return 0.0
    raise UnboundedState(f"{kind} state {name}: not measured here")


def worst_case_seconds(definition: Mapping[str, Any], *, loop_allowance: float) -> float:
    """The longest path from StartAt, each state at its worst; a cycle is walked once (its Wait
    counts `loop_allowance`, which stands for every turn of the loop)."""
    states = definition["States"]

    @cache
    def longest(name: str, visiting: frozenset[str]) -> float:
        here = state_seconds(states, name, loop_allowance)
        onward = [longest(n, visiting | {name}) for n in _next_states(states[name]) if n not in visiting | {name}]
        return here + max(onward, default=0.0)

    return longest(definition["StartAt"], frozenset())
