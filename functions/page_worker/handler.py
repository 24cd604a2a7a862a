"""Page worker: one documentation page per page-queue message (fetch → extract → index), with
partial batch failures; the links a page adds go back on the page queue, one message each.
A page that fails to fetch is recorded on the page (retried with backoff by the crawl), so only
messages that could not be processed at all (malformed, a store outage) are reported for retry."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from pydantic import Json

from functions._handler import lambda_handler, logger
from memlane.adapters.aws.crawl_queue import PageMessage
from memlane.docsets.service import DocsetContext, crawl_queued_page
from memlane.lazy import Lazy


class PageRecord(SqsRecordModel):
    body: Json[PageMessage]


processor = BatchProcessor(event_type=EventType.SQS, model=PageRecord, raise_on_entire_batch_failure=False)


def _compose() -> DocsetContext:
    from memlane.aws.compose import build_docset_context

    return build_docset_context()


_docsets: Lazy[DocsetContext] = Lazy(_compose, "DocsetContext")


def record_handler(record: PageRecord, docsets: DocsetContext) -> dict[str, Any]:
    logger.set_correlation_id(record.messageId)
    message = record.body
    result = crawl_queued_page(docsets, message.organization_id, message.docset_id, message.page_id)
    logger.info("page done", extra=asdict(result))
    return asdict(result)


@lambda_handler()
def handler(event: dict[str, Any], context: Any, docsets: DocsetContext | None = None) -> PartialItemFailureResponse:
    handle = partial(record_handler, docsets=docsets or _docsets.get())
    return process_partial_response(event=event, record_handler=handle, processor=processor, context=context)
