"""Hourly auto-forget (EventBridge Scheduler): removes every document whose forget_after has
passed, from metadata, content, both search legs and the cache. Idempotent: a schedule that fires
twice finds nothing the second time; a missed run is caught up by the next (it selects by
forget_after ≤ now, whatever the scheduled time)."""

from __future__ import annotations

from typing import Any

from functions._handler import compose_services, lambda_handler, logger
from functions.schedule import ScheduledJob
from memlane.documents.forget import forget_expired
from memlane.lazy import Lazy
from memlane.ports import Services

_services: Lazy[Services] = Lazy(compose_services, "Services")


@lambda_handler(correlation_id_path="execution_id")
def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> dict[str, Any]:
    services = services or _services.get()
    job = ScheduledJob.model_validate(event)
    report = forget_expired(services)
    logger.info("forget job done", extra={"scheduled_time": job.scheduled_time, **report.as_dict()})
    return {"job": job.job, "scheduled_time": job.scheduled_time, **report.as_dict()}
