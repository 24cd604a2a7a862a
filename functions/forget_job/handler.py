"""Hourly auto-forget (EventBridge Scheduler): removes every document whose forget_after has
passed, from metadata, content, both search legs and the cache. Idempotent: a schedule that fires
twice finds nothing the second time; a missed run is caught up by the next (it selects by
forget_after ≤ now, whatever the scheduled time)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics

from functions._tracing import lambda_tracer
from functions.schedule import ScheduledJob
from memlane.documents.forget import forget_expired
from memlane.observability import metrics_namespace
from memlane.ports import Services

logger = Logger()
metrics = Metrics(namespace=metrics_namespace())  # flushed as CloudWatch EMF after each invocation
tracer = lambda_tracer()


@logger.inject_lambda_context(correlation_id_path="execution_id")
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> dict[str, Any]:
    if services is None:
        from memlane.adapters.aws.compose import build_aws_services

        services = build_aws_services()
    job = ScheduledJob.model_validate(event)
    report = forget_expired(services)
    logger.info("forget job done", extra={"scheduled_time": job.scheduled_time, **report.as_dict()})
    return {"job": job.job, "scheduled_time": job.scheduled_time, **report.as_dict()}
