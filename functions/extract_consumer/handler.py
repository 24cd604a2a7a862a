"""Extraction queue consumer: one conversation's fact extraction per message
(memlane.conversations.extraction), with partial batch failures.

- the LLM or a store down (TransientError): the record says so and the message is reported as
  failed, so SQS delivers it again after its visibility timeout, and after the queue's max receives
  it lands in the DLQ (the alarm on it fires) and the record says `failed`;
- the organization's monthly token budget spent: the extraction is recorded as failed with the
  budget's message (SQS cannot wait a month; the messages are saved, a client can send the
  conversation again next month);
- an answer that does not fit its schema twice: recorded on the extraction, the message done.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from pydantic import Json

from functions._handler import compose_services, lambda_handler, logger
from memlane.conversations.extraction import note_given_up, note_waiting, run_extraction
from memlane.conversations.service import EXTRACTION_JOB_PREFIX
from memlane.domain.errors import LLMBudgetSpent, TransientError
from memlane.domain.models import IngestJob
from memlane.lazy import Lazy
from memlane.ports import Services

# The DLQ's max receive count (infra/constants.py DLQ_MAX_RECEIVE_COUNT): the last delivery gives up.
LAST_ATTEMPT = 5


class ExtractionRecord(SqsRecordModel):
    body: Json[IngestJob]


processor = BatchProcessor(event_type=EventType.SQS, model=ExtractionRecord, raise_on_entire_batch_failure=False)

_services: Lazy[Services] = Lazy(compose_services, "Services")


def record_handler(record: ExtractionRecord, services: Services) -> dict[str, Any]:
    logger.set_correlation_id(record.messageId)
    job = record.body
    if not job.document_id.startswith(EXTRACTION_JOB_PREFIX):
        raise ValueError("not an extraction job")  # reported; ends in the DLQ
    extraction_id = job.document_id.removeprefix(EXTRACTION_JOB_PREFIX)
    attempt = int(record.attributes.ApproximateReceiveCount or 1)
    try:
        result = run_extraction(services, job.organization_id, extraction_id, attempt)
    except LLMBudgetSpent as exc:
        note_given_up(services, job.organization_id, extraction_id, exc.message)
        return {"extraction_id": extraction_id, "status": "refused"}
    except TransientError as exc:
        if attempt >= LAST_ATTEMPT:
            note_given_up(services, job.organization_id, extraction_id,
                          f"gave up after {attempt} attempts: {exc.message}")
        else:
            note_waiting(services, job.organization_id, extraction_id, attempt, exc.message, None)
        raise
    summary = {"extraction_id": extraction_id, "status": result.status if result else "gone",
               "facts": len(result.facts) if result else 0}
    logger.info("extraction done", extra=summary)
    return summary


@lambda_handler()
def handler(event: dict[str, Any], context: Any, services: Services | None = None) -> PartialItemFailureResponse:
    handle = partial(record_handler, services=services or _services.get())
    return process_partial_response(event=event, record_handler=handle, processor=processor, context=context)
