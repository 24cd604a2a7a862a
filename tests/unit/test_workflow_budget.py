"""infra/workflow_budget.py: the worst case of a state machine's execution, from which its timeout
is computed (reliability.md #33)."""

from __future__ import annotations

import pytest

from infra.workflow_budget import UnboundedState, retry_seconds, worst_case_seconds


def test_a_retrier_waits_its_interval_times_the_backoff_capped_by_its_maximum_delay():
    assert retry_seconds({"IntervalSeconds": 2, "BackoffRate": 2.0, "MaxAttempts": 3}) == (3, 2 + 4 + 8)
    assert retry_seconds({"IntervalSeconds": 2, "BackoffRate": 2.0, "MaxAttempts": 4, "MaxDelaySeconds": 5}) == (4, 2 + 4 + 5 + 5)
    assert retry_seconds({}) == (3, 1 + 2 + 4)  # the language's defaults


def test_the_longest_path_counts_every_retrier_and_catch():
    definition = {"StartAt": "A", "States": {
        "A": {"Type": "Task", "TimeoutSeconds": 10, "Next": "B", "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Fail"}],
              "Retry": [{"ErrorEquals": ["X"], "IntervalSeconds": 60, "BackoffRate": 1.0, "MaxAttempts": 2},
                        {"ErrorEquals": ["Y"], "IntervalSeconds": 1, "BackoffRate": 2.0, "MaxAttempts": 1}]},
        "B": {"Type": "Task", "TimeoutSeconds": 5, "End": True},
        "Fail": {"Type": "Task", "TimeoutSeconds": 100, "End": True}}}
    # A: 4 attempts of 10 s + 120 s + 1 s of waits; then the Catch's branch (100 s) is longer than B (5 s)
    assert worst_case_seconds(definition, loop_allowance=0) == 4 * 10 + 121 + 100


def test_a_poll_loop_costs_its_allowance_once():
    definition = {"StartAt": "Start", "States": {
        "Start": {"Type": "Task", "TimeoutSeconds": 1, "Next": "Wait"},
        "Wait": {"Type": "Wait", "Seconds": 20, "Next": "Poll"},
        "Poll": {"Type": "Task", "TimeoutSeconds": 1, "Next": "Done"},
        "Done": {"Type": "Choice", "Choices": [{"Variable": "$.s", "StringEquals": "ok", "Next": "End"}],
                 "Default": "Wait"},
        "End": {"Type": "Succeed"}}}
    assert worst_case_seconds(definition, loop_allowance=3600) == 1 + 3600 + 1


def test_a_task_without_a_timeout_has_no_bound():
    with pytest.raises(UnboundedState, match="no TimeoutSeconds"):
        worst_case_seconds({"StartAt": "A", "States": {"A": {"Type": "Task", "End": True}}}, loop_allowance=0)
