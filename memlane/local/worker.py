"""The local ingestion worker: a thread that drains the SQLite job queue.

Transient failures (embedder or index down) are retried with exponential backoff; anything else
marks the document failed with the reason. Leases make a killed worker's job claimable again.
"""

from __future__ import annotations

import logging
import threading

from memlane.adapters.local.job_queue import SqliteJobQueue, backoff
from memlane.domain.errors import MemlaneError, TransientError
from memlane.domain.models import DocumentStatus
from memlane.ingest.pipeline import IngestPipeline
from memlane.services.context import Services

log = logging.getLogger(__name__)

LEASE_SECONDS = 600
MAX_ATTEMPTS = 10


class IngestWorker:
    def __init__(self, svc: Services, queue: SqliteJobQueue, poll_seconds: float = 2.0) -> None:
        self.svc = svc
        self.queue = queue
        self.poll_seconds = poll_seconds
        self._wake = threading.Event()
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
        """Process one due job. Returns False when nothing was due."""
        now = self.svc.clock.now()
        job = self.queue.claim(now, LEASE_SECONDS)
        if job is None:
            return False
        md = self.svc.metadata
        try:
            IngestPipeline(self.svc).process(job.organization_id, job.document_id)
        except TransientError as exc:
            if job.attempts >= MAX_ATTEMPTS:
                md.set_status(job.organization_id, job.document_id, DocumentStatus.FAILED,
                              f"gave up after {job.attempts} attempts: {exc.message}")
                self.queue.complete(job.id)
            else:
                delay = backoff(job.attempts)
                md.set_status(job.organization_id, job.document_id, DocumentStatus.QUEUED,
                              f"attempt {job.attempts} failed ({exc.message}); retrying in {int(delay.total_seconds())} s")
                self.queue.retry_later(job.id, exc.message, now + delay)
            return True
        except MemlaneError as exc:
            md.set_status(job.organization_id, job.document_id, DocumentStatus.FAILED, exc.message)
            self.queue.complete(job.id)
            return True
        except Exception as exc:
            log.exception("processing %s failed", job.document_id)
            md.set_status(job.organization_id, job.document_id, DocumentStatus.FAILED,
                          f"{type(exc).__name__}: {exc}")
            self.queue.complete(job.id)
            return True
        self.queue.complete(job.id)
        self.processed += 1
        return True

    def drain(self) -> int:
        """Process every due job now (CLI and tests)."""
        n = 0
        while self.run_once():
            n += 1
        return n
