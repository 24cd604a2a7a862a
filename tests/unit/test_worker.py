"""The local ingestion worker: batching, transient retries, one bad document in a batch."""

from __future__ import annotations

from dataclasses import replace

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
    stack.services = replace(stack.services, clock=clock)
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
    stack.services = replace(stack.services, clock=clock)
    [doc_id] = queue_docs(stack, who, ["Lease test note about puffins."])
    assert stack.queue.claim(clock.now(), 600) is not None  # a worker took it and died
    worker = IngestWorker(stack.services, stack.queue)
    assert not worker.run_once()
    clock.advance(seconds=601)
    assert worker.run_once()
    assert status(stack, who, doc_id)[0] == "ready"
    doc = stack.metadata.get_document(who.organization_id, doc_id)
    assert doc.chunk_count == 1 and len(stack.metadata.get_chunks(who.organization_id, doc_id)) == 1


# ------------------------------------------------------------------ reliability rows 5 and 6


class FailingOnCall:
    """Wraps an embedder: the `fail_on`-th call (1-based) raises a transient error, once;
    `texts` records how many texts each successful call embedded."""

    def __init__(self, inner, fail_on: int) -> None:
        self.inner, self.fail_on, self.calls, self.texts = inner, fail_on, 0, []

    @property
    def id(self):
        return self.inner.id

    @property
    def dimension(self):
        return self.inner.dimension

    def embed_documents(self, texts):
        self.calls += 1
        if self.calls == self.fail_on:
            from memlane.domain.errors import TransientError

            raise TransientError("embedding service returned 503")
        self.texts.append(len(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def long_document(paragraphs: int) -> str:
    return "\n\n".join(
        f"Paragraph {i} of the field guide describes heron number {i}, which nests near pond {i} "
        f"and eats mostly frogs, small fish and insects during the long summer months of year {i}."
        for i in range(paragraphs)
    )


def test_partial_embedding_keeps_the_batches_that_succeeded_and_retries_only_the_rest(
    stack, who, hash_embedder
):
    """Spec §13 Error Recovery 3: if 3 of 5 chunks embed, save those and retry the other 2."""
    from memlane.documents.progress import progress_prefix
    from memlane.documents.writer import EMBED_BATCH

    clock = FixedClock()
    stack.services = replace(stack.services, clock=clock, settings=stack.services.settings.model_copy(
        update={"chunk_max_tokens": 40, "chunk_overlap_tokens": 0}
    ))
    flaky = FailingOnCall(hash_embedder, fail_on=2)
    stack.services = replace(stack.services, embedder=flaky)
    [doc_id] = queue_docs(stack, who, [long_document(150)])
    worker = IngestWorker(stack.services, stack.queue)
    assert worker.run_once()
    state, reason = status(stack, who, doc_id)
    assert state == "queued" and "503" in reason
    assert flaky.texts == [EMBED_BATCH], "the first batch embedded, the second failed"
    saved = stack.services.blobs.keys(progress_prefix(who.organization_id, doc_id))
    assert len(saved) == 1

    clock.advance(seconds=6)
    assert worker.run_once()
    doc = stack.metadata.get_document(who.organization_id, doc_id)
    assert doc.status.value == "ready" and doc.chunk_count > 2 * EMBED_BATCH
    assert flaky.texts[0] == EMBED_BATCH and sum(flaky.texts[1:]) == doc.chunk_count - EMBED_BATCH, (
        "the retry embedded only the chunks that were missing"
    )
    assert stack.services.blobs.keys(progress_prefix(who.organization_id, doc_id)) == []
    # every chunk carries its own vector, reused or fresh: its exact embedding is its nearest
    from memlane.documents.writer import embedding_text
    from memlane.ports import SearchScope

    scope = SearchScope(organization_id=who.organization_id, project_ids=(doc.project_id,))
    chunks = stack.metadata.get_chunks(who.organization_id, doc_id)
    for chunk in (chunks[0], chunks[EMBED_BATCH - 1], chunks[EMBED_BATCH], chunks[-1]):
        [vector] = hash_embedder.embed_documents([embedding_text(chunk)])
        best = stack.services.index.search(scope, "", vector, 1).vector[0]
        assert best.chunk_id == chunk.id and best.score > 0.999


class DownIndex:
    """The search index, unavailable for the first `down` writes (reliability row 6)."""

    def __init__(self, inner, down: int) -> None:
        self.inner, self.down = inner, down

    def upsert(self, embedder_id, items):
        if self.down > 0:
            self.down -= 1
            from memlane.domain.errors import TransientError

            raise TransientError("search index unavailable: connection refused")
        return self.inner.upsert(embedder_id, items)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_an_index_outage_during_ingestion_keeps_the_save_and_indexes_after_recovery(stack, who):
    from memlane.domain.requests import RecallIn
    from memlane.recall.service import recall
    from memlane.services.memory import get_document

    clock = FixedClock()
    stack.services = replace(stack.services, clock=clock)
    stack.services = replace(stack.services, index=DownIndex(stack.services.index, down=2))
    [doc_id] = queue_docs(stack, who, ["The boathouse key hangs behind the blue door."])
    worker = IngestWorker(stack.services, stack.queue)
    assert worker.run_once()
    state, reason = status(stack, who, doc_id)
    assert state == "queued" and "search index unavailable" in reason
    # the save is kept and readable by id while the index is down
    assert get_document(stack.services, who, doc_id).content.startswith("The boathouse key")
    for _ in range(5):  # backoff: each retry comes due later
        clock.advance(minutes=10)
        worker.run_once()
    assert status(stack, who, doc_id) == ("ready", None)
    found = recall(stack.services, who, RecallIn(query="boathouse key blue door"))
    assert [r.document_id for r in found.results] == [doc_id]
