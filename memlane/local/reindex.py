"""`memlane reindex`: write every document of a data directory again, with the embedder the
directory is opened with now (after switching models), and its generated metadata (summary,
keyphrases, entities, a title the client did not give) generated again by today's method
(memlane.documents.regenerate).

Every document is first marked queued with the reason, then the search index is dropped (it
remembers which embedder built it and refuses to mix), then each gets a job and the job worker
writes it through the one write path (memlane.documents.writer). In that order nothing says ready
without its vectors: a failure while marking leaves the index whole, one after it leaves documents
visibly queued; running reindex again finishes the work, as does a running `memlane serve` for
every job already queued.
"""

from __future__ import annotations

from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.adapters.local.search_index import SqliteSearchIndex
from memlane.documents.regenerate import without_generated
from memlane.domain.models import DocumentStatus, IngestJob
from memlane.ports import JobQueue, Services


def requeue_everything(svc: Services, metadata: SqliteMetadataStore, index: SqliteSearchIndex,
                       queue: JobQueue) -> int:
    """Queue every document to be written again and drop the index. Returns how many."""
    reason = f"re-embedding with {svc.embedder.id}"
    documents = [(org.id, doc_id) for org in metadata.list_organizations()
                 for doc_id in sorted(metadata.all_document_ids(org.id))]
    for org_id, doc_id in documents:
        doc = svc.metadata.get_document(org_id, doc_id)
        if doc is not None:
            # what an earlier memlane generated (summary, keyphrases, entities, a derived title) is
            # generated again by the writer, with today's method
            svc.metadata.put_document(without_generated(doc).model_copy(
                update={"status": DocumentStatus.QUEUED, "status_reason": reason}))
    index.clear()
    now = svc.clock.now()
    for org_id, doc_id in documents:
        queue.enqueue(IngestJob(document_id=doc_id, organization_id=org_id, not_before=now, created_at=now))
    return len(documents)
