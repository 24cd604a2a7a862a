"""A document's life after it is written (memlane.documents.writer makes it searchable and hides
the version it replaces): its versions, and the one removal path. Every removal (a delete, the
auto-forget sweep in memlane.documents.forget, a docset or connection delete) goes through
`remove_document`, so metadata, content, the text index, the vector index and the cache can never
disagree about what exists."""

from __future__ import annotations

from collections.abc import Callable

from memlane.documents.cache import invalidate_project
from memlane.documents.contextual import carriers
from memlane.documents.keys import document_keys
from memlane.documents.writer import DocumentWriter
from memlane.domain.models import Document
from memlane.ports import Services


def remove_document(svc: Services, doc: Document) -> None:
    """Remove a document everywhere. The index goes first: if a later step failed, the document
    would still be listed (and removable again), never a hidden orphan in the index.

    Deleting one version re-links its neighbours, so the chain stays whole and the previous
    version becomes the latest again when the newest is removed."""
    org = doc.organization_id
    # The memories indexed with this one as context (memlane.documents.contextual) are rebuilt
    # without it, so its words leave the index with it.
    carrying = carriers(svc.metadata, svc.settings.context, org, [doc.id], svc.clock.now())
    svc.index.delete_document(org, doc.id)
    files = document_keys(org, doc.id)  # the original (media), stored text, payload and staging
    for key in files.keys:
        svc.blobs.delete(key)
    for prefix in files.prefixes:
        svc.blobs.delete_prefix(prefix)
    svc.metadata.delete_document(org, doc.id)
    if svc.cache is not None:
        svc.cache.purge_document(doc.id)
    prev = svc.metadata.get_document(org, doc.updates_memory_id) if doc.updates_memory_id else None
    nxt = svc.metadata.get_document(org, doc.superseded_by) if doc.superseded_by else None
    if nxt is not None:
        svc.metadata.put_document(nxt.model_copy(update={"updates_memory_id": prev.id if prev else None}))
    if prev is not None and prev.superseded_by == doc.id:
        svc.metadata.put_document(prev.model_copy(update={"superseded_by": nxt.id if nxt else None}))
        if nxt is None:
            svc.index.set_superseded(org, prev.id, False)
    if carrying:
        # the document is gone either way: a failure is logged and counted, not raised
        DocumentWriter(svc).rebuild_or_report(org, sorted(carrying), f"the memories around the removed {doc.id}")
    invalidate_project(svc.cache, org, doc.project_id)


def version_chain(svc: Services, doc: Document) -> list[Document]:
    """All versions of a document, oldest first."""
    seen = {doc.id}
    older = _follow(svc, doc, seen, lambda d: d.updates_memory_id)
    newer = _follow(svc, doc, seen, lambda d: d.superseded_by)
    return [*reversed(older), doc, *newer]


def _follow(svc: Services, doc: Document, seen: set[str],
            link: Callable[[Document], str | None]) -> list[Document]:
    """The documents `link` leads to from `doc`, nearest first, stopping at a missing one or a loop."""
    out: list[Document] = []
    cur = doc
    while (next_id := link(cur)) and next_id not in seen:
        nxt = svc.metadata.get_document(doc.organization_id, next_id)
        if nxt is None:
            break
        seen.add(nxt.id)
        out.append(nxt)
        cur = nxt
    return out


def latest_version(svc: Services, doc: Document) -> Document:
    return version_chain(svc, doc)[-1]
