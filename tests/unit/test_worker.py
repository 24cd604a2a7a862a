"""The local ingestion worker: batching, transient retries, one bad document in a batch."""

from __future__ import annotations

from fakes import FixedClock

from memlane.domain.requests import MemoryIn
from memlane.local.worker import IngestWorker
from memlane.services.memory import save_memory


def queue_docs(stack, who, texts):
    return [
        save_memory(stack.services, who, MemoryIn(content=t, title=t[:20]), inline=False).id for t in texts
    ]


def status(stack, who, doc_id):
    d = stack.metadata.get_document(who.organization_id, doc_id)
    return d.status.value, d.status_reason


def test_a_batch_of_queued_documents_shares_embedding_calls(stack, who, hash_embedder):
    ids = queue_docs(stack, who, [f"Queued note number {i} about herons." for i in range(10)])
    assert {status(stack, who, i)[0] for i in ids} == {"queued"}
    worker = IngestWorker(stack.services, stack.queue)
    calls = hash_embedder.calls
    assert worker.drain() == 1  # one batch
    assert hash_embedder.calls == calls + 1, "ten documents, one embedding call"
    assert {status(stack, who, i)[0] for i in ids} == {"ready"}
    assert stack.queue.pending_count() == 0


def test_embedder_outage_requeues_with_backoff_then_completes(stack, who, hash_embedder):
    clock = FixedClock()
    stack.services.clock = clock
    [doc_id] = queue_docs(stack, who, ["The embedding service is flaky today."])
    hash_embedder.fail_times = 1
    worker = IngestWorker(stack.services, stack.queue)
    assert worker.run_once()
    state, reason = status(stack, who, doc_id)
    assert state == "queued" and "503" in reason and "retrying in 5 s" in reason
    assert not worker.run_once()  # not due yet
    clock.advance(seconds=6)
    assert worker.run_once()
    assert status(stack, who, doc_id) == ("ready", None)


def test_one_bad_document_fails_alone(stack, who, monkeypatch):
    good = queue_docs(stack, who, ["A fine note about otters.", "Another fine note about beavers."])
    bad = queue_docs(stack, who, ["POISON note that breaks the summarizer."])[0]
    real = stack.services.summarizer.summarize

    def summarize(title, text, content_type, language):
        if text.startswith("POISON"):
            raise ValueError("summarizer exploded")
        return real(title, text, content_type, language)

    monkeypatch.setattr(stack.services.summarizer, "summarize", summarize)
    IngestWorker(stack.services, stack.queue).drain()
    assert [status(stack, who, g)[0] for g in good] == ["ready", "ready"]
    assert status(stack, who, bad) == ("failed", "ValueError: summarizer exploded")
    assert stack.queue.pending_count() == 0


def test_a_worker_killed_mid_job_leaves_the_job_claimable_after_the_lease(stack, who):
    clock = FixedClock()
    stack.services.clock = clock
    [doc_id] = queue_docs(stack, who, ["Lease test note about puffins."])
    assert stack.queue.claim(clock.now(), 600) is not None  # a worker took it and died
    worker = IngestWorker(stack.services, stack.queue)
    assert not worker.run_once()
    clock.advance(seconds=601)
    assert worker.run_once()
    assert status(stack, who, doc_id)[0] == "ready"
    doc = stack.metadata.get_document(who.organization_id, doc_id)
    assert doc.chunk_count == 1 and len(stack.metadata.get_chunks(who.organization_id, doc_id)) == 1
