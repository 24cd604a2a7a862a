"""Every Lambda handler's one decorator: `@lambda_handler(correlation_id_path=...)`.

It applies Powertools' three decorators in one order, outermost first:

1. `logger.inject_lambda_context(correlation_id_path=...)`: the invocation's context (request id,
   cold start, function name) on every log line, and the correlation id taken from the event
   (API Gateway's request id, a workflow's execution name, a schedule's execution id; the batch
   handlers set one per SQS record themselves);
2. `metrics.log_metrics`: whatever memlane counted during the invocation (PowertoolsMetrics adds to
   the set every `Metrics()` shares) is flushed as CloudWatch EMF at its end, also when it raises;
   an invocation that counted nothing prints nothing (and Powertools' warning about it is
   silenced), so the authorizer's response is untouched;
3. the tracer (`functions._tracing.lambda_tracer()`): Powertools' `Tracer` where the function is
   deployed with the X-Ray SDK, else the handler itself.

The logger, the metrics and the tracer are one per process, here; handler modules log through
`functions._handler.logger`. The decorated handler carries `HANDLER_MARK` (a `HandlerSpec`), which
tests/functions/test_handler_decorator.py looks for on every handler module.

Handlers keep their dependencies as optional keyword arguments (tests hand in fakes) and compose
the deployed ones in one style: a module-level `memlane.lazy.Lazy` built on first use.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aws_lambda_powertools import Logger, Metrics

from functions._tracing import lambda_tracer
from memlane.config.aws import FunctionSettings

if TYPE_CHECKING:
    from memlane.ports import Services

function_settings = FunctionSettings.from_env()  # when the handler module is first imported
logger = Logger()
metrics = Metrics(namespace=function_settings.metrics_namespace)  # flushed as CloudWatch EMF after each invocation
tracer = lambda_tracer(function_settings.xray_sdk)
# Powertools warns on every flush of an empty set; most invocations of the authorizer, the keys
# function and the schedules count nothing, and that is not worth a log line each.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)

HANDLER_MARK = "memlane_lambda_handler"

H = TypeVar("H", bound=Callable[..., Any])


@dataclass(frozen=True)
class HandlerSpec:
    """What `lambda_handler` applied, readable on the handler as `HANDLER_MARK`."""

    correlation_id_path: str | None


def lambda_handler(*, correlation_id_path: str | None = None) -> Callable[[H], H]:
    """Logger with the correlation id, metrics flushed at the end, tracer: in that order."""

    def decorate(handler: H) -> H:
        traced = tracer.capture_lambda_handler(handler)
        flushed = metrics.log_metrics(traced)
        wrapped = logger.inject_lambda_context(flushed, correlation_id_path=correlation_id_path)
        setattr(wrapped, HANDLER_MARK, HandlerSpec(correlation_id_path=correlation_id_path))
        return cast(H, wrapped)

    return decorate


def is_lambda_handler(handler: object) -> bool:
    return isinstance(getattr(handler, HANDLER_MARK, None), HandlerSpec)


def compose_services() -> Services:
    """The deployed Services (memlane.adapters.aws.compose), for a handler's `Lazy`: the AWS
    composition is imported on first use, not on import."""
    from memlane.adapters.aws.compose import build_aws_services

    return build_aws_services()
