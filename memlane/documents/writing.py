"""Writing documents from a request (a save, raged ingest, an import, the doctor's repair): the
one write path (memlane.documents.writer) with the job queue as its safety net.

A job is queued *before* the write, due only once the write must have finished (SAFETY_NET). So
whatever stops the request half way — an outage the writer records, or the process itself dying
(a killed server, a Lambda timeout) — leaves a job that writes the document later, never a
document stuck in `processing`. A write that finishes completes its job; one that failed
transiently makes its job due now (the worker backs off from there). On AWS the job is an SQS
message delayed by SAFETY_NET (at most 15 minutes); completing it is a no-op there, and the
consumer drops a message whose document is already ready.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

from memlane.documents.writer import DocumentWriter, WriteOutcome, WriteRequest
from memlane.domain.models import Document, IngestJob
from memlane.ports import Services

log = logging.getLogger(__name__)

# Longer than any write in a request may take (API Gateway gives up at 29 s; a local save of the
# largest inline content embeds in seconds), and within SQS's 15-minute maximum delay.
SAFETY_NET = timedelta(minutes=10)


def write_in_request(svc: Services, requests: Sequence[WriteRequest | Document]) -> list[WriteOutcome]:
    reqs = [r if isinstance(r, WriteRequest) else WriteRequest(r) for r in requests]
    return write_protected(svc, reqs, [protect(svc, r.document) for r in reqs])


def protect(svc: Services, doc: Document) -> IngestJob:
    """The safety-net job of a document about to be written in the request. A caller that stores
    several documents before writing them together (a bulk save) protects each before storing it,
    so a crash between two of them leaves none without a job."""
    now = svc.clock.now()
    job = IngestJob(document_id=doc.id, organization_id=doc.organization_id, not_before=now + SAFETY_NET,
                    created_at=now)
    svc.queue.enqueue(job)
    return job


def write_protected(svc: Services, reqs: Sequence[WriteRequest], jobs: Sequence[IngestJob]) -> list[WriteOutcome]:
    """Write documents whose safety-net jobs (`protect`) are queued; each job follows its outcome."""
    now = svc.clock.now()
    outcomes = DocumentWriter(svc).write_many(reqs)
    retry = False
    for job, outcome in zip(jobs, outcomes, strict=True):
        if outcome.ok or not outcome.transient:
            svc.queue.complete(job.id)  # written, or failed for good (the document says why)
        else:
            svc.queue.retry_later(job.id, str(outcome.error), now)
            retry = True
    if retry and svc.on_enqueued is not None:
        svc.on_enqueued(None)
    return outcomes


def enqueue(svc: Services, doc: Document) -> None:
    """Queue a saved document to be written by the job worker (the local worker thread, or the
    AWS consumer and workflow)."""
    now = svc.clock.now()
    svc.queue.enqueue(
        IngestJob(document_id=doc.id, organization_id=doc.organization_id, not_before=now, created_at=now)
    )
    if svc.on_enqueued is not None:
        svc.on_enqueued(doc)
