"""Run a Lambda entry point in this process: `memlane invoke <function> events/<file>.json`.

The handler runs against whatever AWS the environment points at (credentials, AWS_REGION and the
MEMLANE_* variables the stack sets: MEMLANE_TABLE, MEMLANE_BUCKET, …); the tests call the same
function with moto.
"""

from __future__ import annotations

import importlib
import uuid
from dataclasses import dataclass, field
from typing import Any

STEP_NAMES = ("extract", "transcribed", "prepare", "embed", "write", "mark_failed")


@dataclass
class LocalLambdaContext:
    """What Powertools reads from a Lambda context, for invocations outside Lambda."""

    function_name: str = "memlane-local"
    memory_limit_in_mb: int = 1024
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/memlane-local"
    log_stream_name: str = "local"
    remaining_ms: int = 30_000

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def handler_module(function: str) -> str:
    """`api` → functions.api.handler; `prepare` or `steps.prepare` → functions.steps.prepare."""
    name = function.strip().replace("-", "_").removeprefix("functions.").removesuffix(".handler")
    name = name.removeprefix("steps.")
    if name in STEP_NAMES:
        return f"functions.steps.{name}"
    return f"functions.{name}.handler"


def invoke(function: str, event: Any, context: Any | None = None, **dependencies: Any) -> Any:
    """Call the handler; `dependencies` (its optional arguments: services, store, …) replace
    what it would compose from the environment."""
    module = importlib.import_module(handler_module(function))
    return module.handler(event, context or LocalLambdaContext(function_name=f"memlane-{function}"), **dependencies)
