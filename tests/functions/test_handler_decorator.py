"""functions/_handler.py: every Lambda handler carries the one decorator (logger with the
correlation id, metrics flushed at the end of every invocation, tracer), and the metrics a handler
counts are flushed when it returns: the connection-sync function's write counts included."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fn_support import context, load_event

from memlane.adapters.aws.metrics import PowertoolsMetrics
from memlane.observability import WRITES_FAILED

# The handler modules are imported inside the tests, as Lambda would: functions._handler creates the
# process's Metrics() on import, and Powertools reads POWERTOOLS_SERVICE_NAME then (the other
# tests' fixtures set it).
FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"
HANDLER_MARK = "memlane_lambda_handler"


@pytest.fixture(autouse=True)
def _function_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the stack sets on every function, in place when a handler module is first imported."""
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "memlane")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


def handler_modules() -> list[str]:
    """Every module Lambda names as a handler: functions/<name>/handler.py and functions/steps/<step>.py."""
    names = []
    for info in pkgutil.iter_modules([str(FUNCTIONS_DIR)]):
        if info.ispkg and (FUNCTIONS_DIR / info.name / "handler.py").exists():
            names.append(f"functions.{info.name}.handler")
    for info in pkgutil.iter_modules([str(FUNCTIONS_DIR / "steps")]):
        if not info.name.startswith("_"):
            names.append(f"functions.steps.{info.name}")
    return sorted(names)


def test_the_walk_finds_every_function():
    modules = handler_modules()
    assert "functions.api.handler" in modules and "functions.authorizer.handler" in modules
    assert "functions.connection_sync.handler" in modules and "functions.steps.write" in modules
    assert len(modules) >= 15


@pytest.mark.parametrize("module", handler_modules())
def test_every_handler_carries_the_one_decorator(module: str):
    decorator = importlib.import_module("functions._handler")
    assert decorator.HANDLER_MARK == HANDLER_MARK
    handler = importlib.import_module(module).handler
    assert decorator.is_lambda_handler(handler), \
        f"{module}.handler is not decorated with functions._handler.lambda_handler"


def test_no_handler_applies_powertools_decorators_of_its_own():
    """One order everywhere: only functions/_handler.py applies the logger, metrics and tracer."""
    for path in FUNCTIONS_DIR.rglob("*.py"):
        if path.name in ("_handler.py", "_tracing.py"):
            continue
        source = path.read_text()
        for decorator in ("inject_lambda_context", "log_metrics", "capture_lambda_handler"):
            assert f".{decorator}" not in source, f"{path.relative_to(FUNCTIONS_DIR)} applies {decorator} itself"


def test_the_correlation_id_comes_from_the_event_where_the_event_has_one():
    paths = {m: getattr(importlib.import_module(m).handler, HANDLER_MARK).correlation_id_path
             for m in handler_modules()}
    assert paths["functions.forget_job.handler"] == "execution_id"
    assert paths["functions.steps.prepare"] == "execution"
    assert paths["functions.api.handler"] == paths["functions.authorizer.handler"] == "requestContext.requestId"


@pytest.fixture
def no_counts_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """The set every Metrics() shares starts empty (other tests count outside a handler)."""
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    importlib.import_module("functions._handler").metrics.clear_metrics()


def test_an_invocation_that_counted_nothing_prints_nothing(no_counts_yet: None,
                                                           capsys: pytest.CaptureFixture[str]):
    """The authorizer counts nothing: its response is all it returns, and stdout stays empty."""
    decorator = importlib.import_module("functions._handler")

    @decorator.lambda_handler()
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"ok": event["n"]}

    capsys.readouterr()
    assert handler({"n": 1}, context("quiet")) == {"ok": 1}
    assert emf_lines(capsys.readouterr().out) == []


def emf_lines(out: str) -> list[dict[str, Any]]:
    lines = []
    for line in out.splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict) and "_aws" in parsed:
            lines.append(parsed)
    return lines


def test_the_connection_sync_function_flushes_its_write_counts(no_counts_yet: None, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]):
    """WritesFailed carries an alarm: what the sync counted is on stdout as EMF when the
    invocation returns, not left for a later one."""
    sync_handler = importlib.import_module("functions.connection_sync.handler")
    services = SimpleNamespace(metrics=PowertoolsMetrics())

    def sync_connection(svc: Any, organization_id: str, connection_id: str, *, budget_s: float) -> None:
        svc.metrics.count(WRITES_FAILED, 2)

    monkeypatch.setattr(sync_handler, "sync_connection", sync_connection)
    capsys.readouterr()

    answer = sync_handler.handler(load_event("connection_sync_batch.json"), context("connection-sync"),
                                  services=services)

    assert answer == {"batchItemFailures": []}
    flushed = emf_lines(capsys.readouterr().out)
    assert len(flushed) == 1
    assert flushed[0][WRITES_FAILED] in (2.0, [2.0])
    names = [m["Name"] for d in flushed[0]["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]]
    assert names == [WRITES_FAILED]


def test_a_handler_that_raises_still_flushes_what_it_counted(no_counts_yet: None, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]):
    forget = importlib.import_module("functions.forget_job.handler")
    services = SimpleNamespace(metrics=PowertoolsMetrics())

    def forget_expired(svc: Any) -> None:
        svc.metrics.count(WRITES_FAILED)
        raise RuntimeError("store outage")

    monkeypatch.setattr(forget, "forget_expired", forget_expired)
    capsys.readouterr()
    with pytest.raises(RuntimeError, match="store outage"):
        forget.handler(load_event("forget_job_schedule.json"), context("forget-job"), services=services)
    assert [line[WRITES_FAILED] for line in emf_lines(capsys.readouterr().out)] in ([1.0], [[1.0]])
