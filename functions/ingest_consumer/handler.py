"""Ingest queue consumer: one Step Functions execution per IngestJob message whose document still
needs writing (a message for a document written since, such as the safety net of a save written
in its request, is dropped: memlane.documents.writer.already_written).

Partial batch failures (the event source has report_batch_item_failures on): a message that is not
a valid IngestJob, or whose execution could not be started, is reported alone and retried by SQS
until its max receives send it to the DLQ; the others are deleted. Starting is idempotent (the
execution name comes from the document and the job), so a redelivered message is a success.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from pydantic import Json

from functions._handler import compose_services, lambda_handler, logger
from memlane.documents.workflow import StartedExecution, start_ingestion
from memlane.domain.models import IngestJob
from memlane.lazy import Lazy
from memlane.ports import Services, WorkflowStarter


class IngestJobRecord(SqsRecordModel):
    body: Json[IngestJob]


# A batch whose records all failed is reported like any other (every id listed) instead of raising:
# SQS redelivers the same messages either way, and the function's error metric stays for real faults.
processor = BatchProcessor(event_type=EventType.SQS, model=IngestJobRecord,
                           raise_on_entire_batch_failure=False)


def _compose_starter() -> WorkflowStarter:
    from memlane.aws.compose import build_starter

    return build_starter()


_starter: Lazy[WorkflowStarter] = Lazy(_compose_starter, "WorkflowStarter")
_services: Lazy[Services] = Lazy(compose_services, "Services")


def record_handler(record: IngestJobRecord, starter: WorkflowStarter, services: Services) -> dict[str, Any]:
    logger.set_correlation_id(record.messageId)
    started: StartedExecution | None = start_ingestion(starter, services, record.body)
    if started is None:
        logger.info("nothing to ingest", extra={"document_id": record.body.document_id})
        return {"document_id": record.body.document_id, "execution_arn": None}
    logger.info("ingestion started", extra=started.model_dump())
    return started.model_dump()


@lambda_handler()
def handler(event: dict[str, Any], context: Any, starter: WorkflowStarter | None = None,
            services: Services | None = None) -> PartialItemFailureResponse:
    handle = partial(record_handler, starter=starter or _starter.get(), services=services or _services.get())
    return process_partial_response(event=event, record_handler=handle, processor=processor, context=context)
