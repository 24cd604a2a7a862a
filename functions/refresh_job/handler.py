"""Daily docset refresh (EventBridge Scheduler): every docset older than the default max age is
re-queued (incremental: unchanged pages keep their hashes and are not re-embedded) and its pages
are sent to the page queue. Idempotent: a second run finds everything fresh; a missed run is
caught up by the next."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from functions._tracing import lambda_tracer
from functions.schedule import ScheduledJob
from memlane.docsets.service import DocsetContext, refresh_stale_docsets

logger = Logger()
tracer = lambda_tracer()


@logger.inject_lambda_context(correlation_id_path="execution_id")
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, docsets: DocsetContext | None = None) -> dict[str, Any]:
    if docsets is None:
        from memlane.adapters.aws.compose import build_docset_context

        docsets = build_docset_context()
    job = ScheduledJob.model_validate(event)
    outcome = refresh_stale_docsets(docsets)
    logger.info("refresh job done", extra={"scheduled_time": job.scheduled_time, "total": outcome.total,
                                           "refreshed": outcome.refreshed})
    return {"job": job.job, "scheduled_time": job.scheduled_time, **outcome.model_dump(mode="json")}
