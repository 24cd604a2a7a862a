"""The local ingestion worker: a thread that drains the SQLite job queue.

Transient failures (embedder or index down) are retried with exponential backoff; anything else
marks the document failed with the reason. Leases make a killed worker's job claimable again.
"""

from __future__ import annotations

import logging
import threading

from memlane.adapters.local.job_queue import SqliteJobQueue, backoff
from memlane.conversations.budget import next_month
from memlane.conversations.extraction import note_given_up, note_waiting, run_extraction
from memlane.conversations.service import EXTRACTION_JOB_PREFIX
from memlane.documents import media_budget
from memlane.documents.media import complete_pending
from memlane.documents.writer import DocumentWriter, already_written
from memlane.domain.errors import LLMBudgetSpent, MediaBudgetDeferred, TransientError
from memlane.domain.models import Document, DocumentStatus, IngestJob
from memlane.ports import Services

log = logging.getLogger(__name__)

LEASE_SECONDS = 600
MAX_ATTEMPTS = 10
BATCH_JOBS = 16  # documents processed together, so their chunks share embedding batches


class IngestWorker:
    def __init__(self, svc: Services, queue: SqliteJobQueue, poll_seconds: float = 2.0, *,
                 doorbell: threading.Event | None = None) -> None:
        """`doorbell`: the event that wakes the worker, when it is made before the worker (the
        local runtime hands the Services an `on_enqueued` that rings it)."""
        self.svc = svc
        self.queue = queue
        self.poll_seconds = poll_seconds
        self._wake = doorbell or threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.processed = 0

    def wake(self, *_: object) -> None:
        self._wake.set()

    def start(self) -> None:
        self.queue.release_leases()
        self._thread = threading.Thread(target=self._run, name="memlane-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                worked = self.run_once()
            except Exception:  # the loop must survive anything a job throws
                log.exception("worker iteration failed")
                worked = False
            if not worked:
                self._wake.wait(self.poll_seconds)
                self._wake.clear()

    def run_once(self) -> bool:
        """Process the due jobs (up to BATCH_JOBS together). Returns False when nothing was due."""
        now = self.svc.clock.now()
        jobs: list[IngestJob] = []
        while len(jobs) < BATCH_JOBS:
            job = self.queue.claim(now, LEASE_SECONDS)
            if job is None:
                break
            jobs.append(job)
        if not jobs:
            return False
        todo = []
        for job in jobs:
            if job.document_id.startswith(EXTRACTION_JOB_PREFIX):
                self._extract(job, now)
                continue
            doc = self.svc.metadata.get_document(job.organization_id, job.document_id)
            if doc is None or already_written(doc, job.created_at):  # deleted meanwhile, or done
                self.queue.complete(job.id)
                continue
            if doc.media is not None and doc.media.pending:
                doc = self._read_media(job, doc, now)
                if doc is None:
                    continue
            todo.append((job, doc))
        outcomes = DocumentWriter(self.svc).write_many([doc for _, doc in todo], resumable=True)
        for (job, _), outcome in zip(todo, outcomes, strict=True):
            self._settle(job, outcome.error, now)
        return True

    def _read_media(self, job: IngestJob, doc: Document, now) -> Document | None:
        """Media is read before it is written (OCR of a long scan, a transcript): the document with
        its text, or None when the job waits or failed. Over the organization's media budget for
        today (checked first, and again by the reading's own reservation) the job waits for
        tomorrow; it does not fail (memlane.documents.media_budget)."""
        assert doc.media is not None
        engine = self.svc.media.ocr if doc.media.kind in ("image", "pdf") else self.svc.media.transcriber
        wait = media_budget.deferral(self.svc, job.organization_id,
                                     media_budget.meters_for(doc.media.kind, engine.id if engine else None))
        if wait is not None:
            self._defer(job, f"the organization's {wait[0]} budget for today is spent", wait[1])
            return None
        try:
            return complete_pending(self.svc, doc)
        except MediaBudgetDeferred as exc:
            self._defer(job, exc.message, media_budget.next_day(now))
        except Exception as exc:  # noqa: BLE001 - recorded on the document, the job follows
            self._settle(job, DocumentWriter(self.svc).hold(doc, exc), now)
        return None

    def _defer(self, job: IngestJob, reason: str, until) -> None:
        self.svc.metadata.set_status(job.organization_id, job.document_id, DocumentStatus.QUEUED,
                                     f"deferred: {reason}; resumes after {until:%Y-%m-%d %H:%M} UTC")
        self.queue.retry_later(job.id, f"media budget: {reason}", until)

    def _extract(self, job: IngestJob, now) -> None:
        """A conversation's extraction (memlane.conversations.extraction): the LLM down is retried
        with backoff, a spent budget waits for the next month, anything else is on the record."""
        extraction_id = job.document_id.removeprefix(EXTRACTION_JOB_PREFIX)
        try:
            run_extraction(self.svc, job.organization_id, extraction_id, job.attempts)
        except LLMBudgetSpent as exc:
            self._extraction_waits(job, extraction_id, exc.message, next_month(now))
        except TransientError as exc:
            if job.attempts >= MAX_ATTEMPTS:
                self._extraction_gives_up(job, extraction_id, f"gave up after {job.attempts} attempts: {exc.message}")
            else:
                self._extraction_waits(job, extraction_id, exc.message, now + backoff(job.attempts))
        except Exception as exc:  # noqa: BLE001 - recorded on the extraction; the worker goes on
            log.exception("extraction %s failed", extraction_id)
            self._extraction_gives_up(job, extraction_id, f"{type(exc).__name__}: {exc}")
        else:
            self.queue.complete(job.id)
            self.processed += 1

    def _extraction_waits(self, job: IngestJob, extraction_id: str, reason: str, until) -> None:
        note_waiting(self.svc, job.organization_id, extraction_id, job.attempts, reason, until)
        self.queue.retry_later(job.id, reason, until)

    def _extraction_gives_up(self, job: IngestJob, extraction_id: str, reason: str) -> None:
        note_given_up(self.svc, job.organization_id, extraction_id, reason)
        self.queue.complete(job.id)

    def _settle(self, job, error: Exception | None, now) -> None:
        """The writer has recorded the outcome on the document; the job follows it: done, due
        again after a backoff (transient), or given up."""
        md = self.svc.metadata
        if error is None:
            self.queue.complete(job.id)
            self.processed += 1
        elif isinstance(error, TransientError) and job.attempts < MAX_ATTEMPTS:
            delay = backoff(job.attempts)
            md.set_status(
                job.organization_id,
                job.document_id,
                DocumentStatus.QUEUED,
                f"attempt {job.attempts} failed ({error.message}); retrying in {int(delay.total_seconds())} s",
            )
            self.queue.retry_later(job.id, error.message, now + delay)
        else:
            if isinstance(error, TransientError):
                md.set_status(job.organization_id, job.document_id, DocumentStatus.FAILED,
                              f"gave up after {job.attempts} attempts: {error.message}")
            self.queue.complete(job.id)

    def drain(self) -> int:
        """Process every due job now (CLI and tests)."""
        n = 0
        while self.run_once():
            n += 1
        return n
