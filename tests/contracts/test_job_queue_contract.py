"""The JobQueue contract: a job is handed to one claimer at a time for the length of its lease,
comes back when the lease runs out or when it is put back for later, counts its attempts, and is
gone once completed.

On AWS the queue is SQS, consumed by a Lambda event source (tests/functions/test_ingest_consumer.py);
claim/complete/retry_later are what a worker draining it itself uses. The shared subset is tested
for all three adapters. What SQS does differently, and is therefore tested on the local queue and
the fake only:
* a second enqueue of the same document is a second message (a standard queue delivers at least
  once; idempotency comes from the execution name and deterministic ids), not a no-op;
* claims are not ordered by due time (a standard queue is not FIFO);
* the error given to retry_later is not kept (SQS cannot rewrite a message; the consumer logs it).
SQS also keeps time itself: moto's clock and the adapter's are set to the test's clock here, as
the visibility timeout and DelaySeconds would run on AWS.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from memory_stores import MemoryJobQueue

from memlane.adapters.local.job_queue import SqliteJobQueue
from memlane.domain.models import IngestJob

pytestmark = pytest.mark.integration
ADAPTERS = ["sqlite", "aws", "memory"]  # the fixtures they need are in tests/contracts/conftest.py

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
LEASE = 30


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


@dataclass
class Queue:
    queue: Any
    clock: Clock
    fifo_by_due_time: bool  # claims come oldest due first; one job per document; errors kept

    def claim(self) -> IngestJob | None:
        return self.queue.claim(self.clock.now, LEASE)

    def job(self, document_id: str, **overrides: Any) -> IngestJob:
        fields: dict[str, Any] = {
            "id": f"job-{document_id}",
            "document_id": document_id,
            "organization_id": "org-a",
            "not_before": self.clock.now,
            "created_at": self.clock.now,
        }
        return IngestJob(**{**fields, **overrides})


@pytest.fixture(params=ADAPTERS)
def q(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Queue:
    clock = Clock()
    if request.param == "sqlite":
        return Queue(SqliteJobQueue(request.getfixturevalue("sqlite_db")), clock, True)
    if request.param == "aws":
        import moto.sqs.models

        from memlane.adapters.aws import job_queue

        url, sqs = request.getfixturevalue("queue_url"), request.getfixturevalue("sqs")
        monkeypatch.setattr(moto.sqs.models, "unix_time", lambda: clock.now.timestamp())
        monkeypatch.setattr(moto.sqs.models, "unix_time_millis", lambda: clock.now.timestamp() * 1000)
        adapter_clock = SimpleNamespace(now=lambda: clock.now)  # the adapter's injected clock
        return Queue(job_queue.SqsIngestQueue(url, client=sqs, clock=adapter_clock), clock, False)
    return Queue(MemoryJobQueue(), clock, True)


def test_a_claimed_job_is_leased_to_one_claimer_and_gone_once_completed(q: Queue) -> None:
    q.queue.enqueue(q.job("doc-1"))
    assert q.queue.pending_count() == 1
    claimed = q.claim()
    assert (claimed.id, claimed.document_id, claimed.organization_id, claimed.attempts) == (
        "job-doc-1",
        "doc-1",
        "org-a",
        1,
    )
    # While it is leased nobody else gets it, and it still counts as pending
    assert q.claim() is None
    q.clock.advance(LEASE - 1)
    assert q.claim() is None
    assert q.queue.pending_count() == 1
    # Once completed it is gone
    q.queue.complete(claimed.id)
    assert q.queue.pending_count() == 0
    q.clock.advance(LEASE * 2)
    assert q.claim() is None


def test_a_job_whose_lease_ran_out_is_claimed_again_with_one_more_attempt(q: Queue) -> None:
    # Given a worker that claimed a job and died
    q.queue.enqueue(q.job("doc-1"))
    assert q.claim().attempts == 1
    # When the lease runs out, the job is claimed again
    q.clock.advance(LEASE + 1)
    again = q.claim()
    assert (again.id, again.attempts) == ("job-doc-1", 2)
    q.queue.complete(again.id)
    assert q.queue.pending_count() == 0


def test_a_job_put_back_is_not_claimed_before_its_time(q: Queue) -> None:
    q.queue.enqueue(q.job("doc-1"))
    claimed = q.claim()
    q.queue.retry_later(claimed.id, "embedding service returned 503", q.clock.now + timedelta(seconds=60))
    assert q.claim() is None
    assert q.queue.pending_count() == 1
    q.clock.advance(61)
    again = q.claim()
    assert (again.id, again.attempts) == ("job-doc-1", 2)
    if q.fifo_by_due_time:
        assert again.last_error == "embedding service returned 503"


def test_a_job_due_later_waits_until_then(q: Queue) -> None:
    q.queue.enqueue(q.job("doc-1", not_before=q.clock.now + timedelta(seconds=120)))
    assert q.claim() is None
    assert q.queue.pending_count() == 1
    q.clock.advance(121)
    assert q.claim().document_id == "doc-1"


def test_every_job_is_claimed_once_and_in_due_order_where_the_queue_orders(q: Queue) -> None:
    for i, delay in enumerate((20, 0, 10)):
        q.queue.enqueue(q.job(f"doc-{i}", not_before=q.clock.now + timedelta(seconds=delay)))
    q.clock.advance(21)
    claimed = [q.claim() for _ in range(3)]
    assert q.claim() is None
    order = [j.document_id for j in claimed]
    assert sorted(order) == ["doc-0", "doc-1", "doc-2"]
    if q.fifo_by_due_time:
        assert order == ["doc-1", "doc-2", "doc-0"]


def test_a_second_save_of_a_queued_document_is_not_a_second_job(q: Queue) -> None:
    if not q.fifo_by_due_time:
        pytest.skip("an SQS standard queue delivers at least once; duplicates are absorbed downstream")
    q.queue.enqueue(q.job("doc-1"))
    q.queue.enqueue(q.job("doc-1", id="job-again"))
    assert q.queue.pending_count() == 1
    assert q.claim().id == "job-doc-1"
    assert q.claim() is None
