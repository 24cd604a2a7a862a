"""What every ingestion step function shares: the task input model, the decorators in memlane's
order, and the one call into memlane.documents.workflow. The state machine stores the returned dict at
$.artifacts.<step> (infra/constructs/ingestion.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from pydantic import BaseModel

from functions._tracing import lambda_tracer
from memlane.documents.workflow import StepInput
from memlane.observability import metrics_namespace
from memlane.ports import Services

logger = Logger()
metrics = Metrics(namespace=metrics_namespace())  # flushed as CloudWatch EMF after each invocation
tracer = lambda_tracer()

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def step_handler(step: Callable[[Services, StepInput], BaseModel]) -> Handler:
    """The Lambda handler of one step. Errors propagate with their class names, which the state
    machine's Retry (TransientError, DependencyUnavailableError) and Catch (everything) match."""

    @logger.inject_lambda_context(correlation_id_path="execution")
    @metrics.log_metrics
    @tracer.capture_lambda_handler
    def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> dict[str, Any]:
        if services is None:
            from memlane.adapters.aws.compose import build_aws_services

            services = build_aws_services()
        inp = StepInput.model_validate(event)
        logger.append_keys(document_id=inp.document.document_id, step=inp.step)
        result = step(services, inp)
        logger.info("step done", extra={"result": result.model_dump(mode="json", exclude_none=True)})
        return result.model_dump(mode="json", exclude_none=True)

    return handler
