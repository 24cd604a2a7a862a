"""Work off the request path: the job queue, and the workflow that writes large documents on AWS."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from memlane.domain.models import IngestJob


class JobQueue(Protocol):
    def enqueue(self, job: IngestJob) -> None: ...
    def claim(self, now: datetime, lease_seconds: int) -> IngestJob | None: ...
    def complete(self, job_id: str) -> None: ...
    def retry_later(self, job_id: str, error: str, not_before: datetime) -> None: ...
    def pending_count(self) -> int: ...


class WorkflowStarter(Protocol):
    def start(
        self, document_id: str, org_id: str, input: dict[str, Any], *, revision: str | None = None
    ) -> str: ...
