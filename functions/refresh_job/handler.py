"""Daily docset refresh (EventBridge Scheduler): every docset older than the default max age is
re-queued (incremental: unchanged pages keep their hashes and are not re-embedded) and its pages
are sent to the page queue. Idempotent: a second run finds everything fresh; a missed run is
caught up by the next."""

from __future__ import annotations

from typing import Any

from functions._handler import lambda_handler, logger
from functions.schedule import ScheduledJob
from memlane.docsets.service import DocsetContext, refresh_stale_docsets
from memlane.lazy import Lazy


def _compose() -> DocsetContext:
    from memlane.aws.compose import build_docset_context

    return build_docset_context()


_docsets: Lazy[DocsetContext] = Lazy(_compose, "DocsetContext")


@lambda_handler(correlation_id_path="execution_id")
def handler(event: dict[str, Any], context: Any, docsets: DocsetContext | None = None) -> dict[str, Any]:
    docsets = docsets or _docsets.get()
    job = ScheduledJob.model_validate(event)
    outcome = refresh_stale_docsets(docsets)
    logger.info("refresh job done", extra={"scheduled_time": job.scheduled_time, "total": outcome.total,
                                           "refreshed": outcome.refreshed})
    return {"job": job.job, "scheduled_time": job.scheduled_time, **outcome.model_dump(mode="json")}
