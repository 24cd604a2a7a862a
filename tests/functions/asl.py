"""A small interpreter for the ingestion state machine as synthesized by infra (the states and
fields it uses: Pass with Parameters or Result, Task with Parameters / ResultSelector / ResultPath /
Retry / Catch, Choice with StringEquals, Wait, Fail). AWS SDK integration tasks
("arn:aws:states:::aws-sdk:<service>:<action>") are handed to `invoke` as "aws-sdk:<service>:<action>";
an error raised there is named by its `sfn_error` attribute ("Transcribe.ConflictException"), as
Step Functions names SDK errors.

moto's Step Functions cannot run our Lambda code (it would need Docker), so the test feeds each
step handler exactly the payload Step Functions would build from the definition and stores the
result exactly where the definition's ResultPath puts it. A handler error is reported the way
Lambda reports it: error name = exception class name, cause = the Lambda error JSON.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
INFRA_TESTS = REPO_ROOT / "tests" / "infra"
if str(INFRA_TESTS) not in sys.path:
    sys.path.insert(0, str(INFRA_TESTS))

from infra_helpers import join_to_text  # noqa: E402

Invoke = Callable[[str, dict[str, Any]], Any]  # (handler string, payload) -> result


@dataclass
class Synthesized:
    definition: dict[str, Any]
    handlers: dict[str, str]  # Task state name -> Lambda handler string (from the template)


def synthesize(tmp_dir: Path) -> Synthesized:
    """The default deployment synthesized offline with a stand-in layer (as tests/infra does)."""
    from infra.app import build_app

    layer = tmp_dir / "layer"
    (layer / "python").mkdir(parents=True)
    webapp = tmp_dir / "webapp"  # stands in for the built web app (web/dist)
    webapp.mkdir()
    (webapp / "index.html").write_text("<!doctype html>\n")
    app, stack = build_app({"layer_asset": str(layer), "webapp_asset": str(webapp)}, outdir=str(tmp_dir / "cdk.out"),
                           code_staging_dir=tmp_dir / "lambda-src")
    assembly = app.synth()
    template = json.loads(Path(assembly.get_stack_by_name(stack.stack_name).template_full_path).read_text())
    resources = template["Resources"]
    (machine,) = [r for r in resources.values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    text = join_to_text(machine["Properties"]["DefinitionString"])
    # Task resources are "<LogicalId.Arn>"; keep the logical id so the state maps to its function.
    text = re.sub(r"<([A-Za-z0-9]+)\.Arn>", r"\1", text)
    definition = json.loads(text)
    handlers = {}
    for name, state in definition["States"].items():
        if state["Type"] == "Task":
            sdk = re.search(r":states:::(aws-sdk:[\w-]+:\w+)$", state["Resource"])
            handlers[name] = sdk.group(1) if sdk else resources[state["Resource"]]["Properties"]["Handler"]
    return Synthesized(definition=definition, handlers=handlers)


def read_path(data: Any, path: str, context: dict[str, Any]) -> Any:
    root, rest = (context, path[2:]) if path.startswith("$$") else (data, path[1:])
    value = root
    for part in [p for p in rest.split(".") if p]:
        value = value[part]
    return copy.deepcopy(value)


_FORMAT_ARG = re.compile(r"\s*(?:'((?:[^'\\]|\\.)*)'|(\$[\w.$]*))\s*(?:,|$)")


def intrinsic(expression: str, data: Any, context: dict[str, Any]) -> Any:
    """States.Format('…{}…', 'literal' | $.path, …): the one intrinsic memlane's workflow uses."""
    match = re.fullmatch(r"States\.Format\((.*)\)", expression.strip(), re.DOTALL)
    if match is None:
        return read_path(data, expression, context)
    args = [m.group(1) if m.group(1) is not None else str(read_path(data, m.group(2), context))
            for m in _FORMAT_ARG.finditer(match.group(1)) if m.group(0).strip()]
    template, values = args[0], iter(args[1:])
    return re.sub(r"\{\}", lambda _: next(values), template)


def build_parameters(template: Any, data: Any, context: dict[str, Any]) -> Any:
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = intrinsic(value, data, context)
            else:
                out[key] = build_parameters(value, data, context)
        return out
    if isinstance(template, list):
        return [build_parameters(v, data, context) for v in template]
    return template


def write_result(data: Any, result_path: str | None, result: Any) -> Any:
    if result_path is None:  # "ResultPath": null keeps the input as it was
        return data
    if result_path == "$":
        return copy.deepcopy(result)
    data = copy.deepcopy(data)
    parts = result_path[2:].split(".")
    target = data
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = copy.deepcopy(result)
    return data


@dataclass
class Run:
    status: str = "RUNNING"
    output: Any = None
    error: str | None = None
    cause: str | None = None
    visited: list[str] = field(default_factory=list)
    payloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    waits: int = 0


def _matches(rule: dict[str, Any], data: Any, context: dict[str, Any]) -> bool:
    if "StringEquals" in rule:
        try:
            return read_path(data, rule["Variable"], context) == rule["StringEquals"]
        except (KeyError, TypeError):
            return False
    raise AssertionError(f"choice rule {rule} is not used by memlane's workflow")


def execute(synth: Synthesized, execution_input: dict[str, Any], execution_name: str, invoke: Invoke) -> Run:
    definition = synth.definition
    context = {"Execution": {"Name": execution_name, "Input": execution_input}}
    data: Any = copy.deepcopy(execution_input)
    run = Run()
    state_name = definition["StartAt"]
    while True:
        state = definition["States"][state_name]
        run.visited.append(state_name)
        kind = state["Type"]
        if kind == "Pass":
            if "Result" in state:
                result = copy.deepcopy(state["Result"])
            else:
                result = build_parameters(state["Parameters"], data, context) if "Parameters" in state else data
            data = write_result(data, state.get("ResultPath", "$"), result)
        elif kind == "Choice":
            state_name = next((rule["Next"] for rule in state["Choices"] if _matches(rule, data, context)),
                              state.get("Default"))
            assert state_name is not None, f"no choice matched and {run.visited[-1]} has no Default"
            continue
        elif kind == "Wait":
            run.waits += 1
            assert run.waits < 1000, "a Wait loop that never ends"
        elif kind == "Task":
            payload = build_parameters(state["Parameters"], data, context)
            run.payloads[state_name] = payload
            handler = synth.handlers[state_name]
            outcome = _invoke_with_retries(state, handler, payload, invoke, run, state_name)
            if not isinstance(outcome, _Failure) and "ResultSelector" in state:
                outcome = build_parameters(state["ResultSelector"], outcome, context)
            if isinstance(outcome, _Failure):
                catchers = state.get("Catch", [])
                names = ("States.ALL", outcome.error)
                catcher = next((c for c in catchers if any(n in c["ErrorEquals"] for n in names)), None)
                if catcher is None:
                    run.status, run.error, run.cause = "FAILED", outcome.error, outcome.cause
                    return run
                data = write_result(data, catcher.get("ResultPath", "$"),
                                    {"Error": outcome.error, "Cause": outcome.cause})
                state_name = catcher["Next"]
                continue
            data = write_result(data, state.get("ResultPath", "$"), outcome)
        elif kind == "Fail":
            run.status = "FAILED"
            run.error = (read_path(data, state["ErrorPath"], context) if "ErrorPath" in state
                         else state.get("Error"))
            run.cause = (read_path(data, state["CausePath"], context) if "CausePath" in state
                         else state.get("Cause"))
            return run
        elif kind == "Succeed":
            run.status, run.output = "SUCCEEDED", data
            return run
        else:
            raise AssertionError(f"state type {kind} is not used by memlane's workflow")
        if state.get("End"):
            run.status, run.output = "SUCCEEDED", data
            return run
        state_name = state["Next"]


@dataclass
class _Failure:
    error: str
    cause: str


def _invoke_with_retries(state: dict[str, Any], handler: str, payload: dict[str, Any], invoke: Invoke,
                         run: Run, state_name: str) -> Any:
    retries = {r_i: 0 for r_i in range(len(state.get("Retry", [])))}
    while True:
        run.attempts[state_name] = run.attempts.get(state_name, 0) + 1
        try:
            return json.loads(json.dumps(invoke(handler, copy.deepcopy(payload))))  # what Lambda returns
        except Exception as exc:  # noqa: BLE001 - reported like Lambda does
            error = getattr(exc, "sfn_error", type(exc).__name__)
            cause = json.dumps({"errorMessage": str(exc), "errorType": error, "stackTrace": []})
        rules = state.get("Retry", [])
        matching = next((i for i, rule in enumerate(rules)
                         if error in rule["ErrorEquals"] or "States.ALL" in rule["ErrorEquals"]), None)
        if matching is None or retries[matching] >= rules[matching].get("MaxAttempts", 3):
            return _Failure(error, cause)
        retries[matching] += 1  # Step Functions would wait IntervalSeconds * BackoffRate^n here
