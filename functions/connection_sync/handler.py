"""Connection sync: one connection per sync-queue message (memlane.connections.sync), with
partial batch failures. The sync stops in time for the function's timeout and sends itself a new
message to go on (its cursor and items are stored batch by batch); a provider's rate limit or
outage is recorded on the connection, not raised, so only messages that could not be processed at
all (malformed, a store outage) are retried by SQS and end in the DLQ."""

from __future__ import annotations

from functools import partial
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from pydantic import Json

from functions._handler import compose_services, lambda_handler, logger
from memlane.adapters.aws.sync_queue import SyncMessage
from memlane.connections.sync import sync_connection
from memlane.lazy import Lazy
from memlane.ports import Services

# What the sync leaves of the function's time for recording its result and the batch's reply.
SAFETY_MARGIN_S = 90.0
MIN_BUDGET_S = 30.0
DEFAULT_REMAINING_S = 600.0


class SyncRecord(SqsRecordModel):
    body: Json[SyncMessage]


processor = BatchProcessor(event_type=EventType.SQS, model=SyncRecord, raise_on_entire_batch_failure=False)

_services: Lazy[Services] = Lazy(compose_services, "Services")


def record_handler(record: SyncRecord, services: Services, remaining_s: float) -> dict[str, Any]:
    logger.set_correlation_id(record.messageId)
    message = record.body
    budget = max(remaining_s - SAFETY_MARGIN_S, MIN_BUDGET_S)
    result = sync_connection(services, message.organization_id, message.connection_id, budget_s=budget)
    summary: dict[str, Any] = {"connection_id": message.connection_id, "ran": result is not None}
    if result is not None:
        summary.update(added=result.added, updated=result.updated, deleted=result.deleted,
                       errors=len(result.errors), complete=result.complete)
    logger.info("connection sync done", extra=summary)
    return summary


@lambda_handler()
def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> PartialItemFailureResponse:
    services = services or _services.get()
    remaining = (context.get_remaining_time_in_millis() / 1000
                 if context is not None and hasattr(context, "get_remaining_time_in_millis") else DEFAULT_REMAINING_S)
    handle = partial(record_handler, services=services, remaining_s=remaining)
    return process_partial_response(event=event, record_handler=handle, processor=processor, context=context)
