"""The one write path: how a document becomes searchable, in one order, owned by one class.

    begin      the document is stored as `processing` (with its summary and tags when it needs one)
    cut        its text is cut into chunks (or the caller's pieces are used)
    embed      the chunks are embedded, in full batches across documents
    commit     chunk records → search index (old rows dropped first on a rewrite) → the version it
               replaces hidden → `ready` → recall cache invalidated → embedding progress cleared
    context    the index entries of the short memories saved right before and after it, which
               carry it as context (memlane.documents.contextual), rebuilt

Every caller hands documents to DocumentWriter: a save processed in the request, the local job
worker, the Step Functions steps (one stage per Lambda), documentation pages, raged ingest,
reindex, import, the doctor's repair and web-app edits. None of them writes chunks, vectors or a
`ready` status itself.

Why this order: the metadata store is the source of truth and the index a projection of it. A
document says `ready` only after its chunks are in the index and the version it replaces is
hidden, so a failure anywhere before leaves a document that is visibly not ready (`queued` with a
reason when the failure was transient, `failed` otherwise), never one that says ready and cannot
be found. Every stage is idempotent (chunk ids derive from the document id, index writes are
upserts), so the caller's retry (a job's backoff, a workflow retry, a page's retry_at) simply runs
the sequence again.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from memlane import observability
from memlane.documents.cache import invalidate_project
from memlane.documents.contextual import NO_CONTEXT, Context, carriers, contexts, eligible
from memlane.documents.embedded_text import embedding_text
from memlane.documents.progress import EmbeddingProgress, embedding_key
from memlane.domain.errors import MemlaneError, TransientError
from memlane.domain.facts import kind_of
from memlane.domain.models import Chunk, Document, DocumentStatus, chunk_id_for
from memlane.ingest.chunking import TextChunk, chunk_document
from memlane.ingest.embedding_cache import recent_embeddings
from memlane.ingest.identifiers import index_words
from memlane.ingest.media import chunk_times
from memlane.ports import IndexedChunk, Services, Summary

log = logging.getLogger(__name__)

EMBED_BATCH = 64
MAX_REASON_CHARS = 500


# --------------------------------------------------------------------------- what is written


def make_chunks(doc: Document, pieces: Sequence[TextChunk]) -> list[Chunk]:
    """The chunk records of a document: cut pieces described by the document (title, tags,
    expiry), with ids derived from the document id so that every write is an upsert."""
    count = len(pieces)
    return [
        Chunk(
            id=chunk_id_for(doc.id, i),
            document_id=doc.id,
            organization_id=doc.organization_id,
            project_id=doc.project_id,
            content=p.text,
            chunk_index=i,
            chunk_count=count,
            start_offset=p.start_offset,
            end_offset=p.end_offset,
            heading_path=list(p.heading_path),
            title=doc.title,
            content_type=doc.content_type,
            source_url=doc.source_url,
            tags=doc.labels,
            created_at=doc.created_at,
            forget_after=doc.forget_after,
            superseded=doc.superseded_by is not None,
            **chunk_times(doc, p.start_offset, p.end_offset),
        )
        for i, p in enumerate(pieces)
    ]


def apply_summary(doc: Document, summary: Summary) -> Document:
    """User metadata wins; generated metadata fills the gaps. Tags are only what the user gave;
    the generated keyphrases are `keyphrases` (a summarizer that still says `tags` for them, an
    older one or an LLM's answer, is read as keyphrases) and never become tags."""
    generated = dict(summary.metadata)
    phrases = generated.pop("keyphrases", None) or generated.pop("tags", None) or []
    generated.pop("tags", None)
    merged = {**generated, **doc.metadata, "keyphrases": [str(p) for p in phrases]}
    return doc.model_copy(update={"summary": summary.summary or doc.summary, "metadata": merged})


def pieces_of(chunks: Sequence[Chunk]) -> list[TextChunk]:
    """The cut pieces behind chunk records (a workflow stage passes records between Lambdas)."""
    return [TextChunk(c.content, c.start_offset, c.end_offset, tuple(c.heading_path)) for c in chunks]


def already_written(doc: Document, requested_at: datetime) -> bool:
    """Whether a write asked for at `requested_at` (a job, a workflow execution) has happened
    since: the document is ready and was written at or after that moment. A document that was
    already ready when the write was asked for (a repair, an edit, a reindex) still needs it."""
    return doc.status == DocumentStatus.READY and doc.updated_at >= requested_at


@dataclass
class WriteRequest:
    """One document to write.

    `pieces`: the text already cut (a crawl cuts pages in its fetch threads); None lets the
    writer cut it by the document's own chunking (memlane.ingest.chunking.chunk_document), which
    is what any retry does too. `summarize`: give a document without a summary one (saves do;
    raged items and docs pages do not want one from here)."""

    document: Document
    pieces: Sequence[TextChunk] | None = None
    summarize: bool = True


@dataclass
class WriteOutcome:
    document_id: str
    document: Document | None = None  # the document as written (ready), when it was
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def transient(self) -> bool:
        return isinstance(self.error, TransientError)


@dataclass
class _Work:
    position: int
    document: Document
    chunks: list[Chunk] = field(default_factory=list)
    previous_chunk_count: int = 0
    context: Context = NO_CONTEXT


def _same_document(a: Document, b: Document) -> bool:
    """Equal but for the processing status (what `begin` would change)."""
    ignore = {"status", "status_reason", "updated_at"}
    return a.model_dump(exclude=ignore) == b.model_dump(exclude=ignore)


# --------------------------------------------------------------------------- the writer


class DocumentWriter:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.progress = EmbeddingProgress(svc.blobs)
        # Documents with saved embedding batches (found or written by `embed`): only these are
        # cleared once committed, so an ordinary save makes no extra call to the blob store.
        self._with_progress: set[tuple[str, str]] = set()

    # ---------------------------------------------------------------- the whole sequence

    def write(self, request: WriteRequest | Document, *, resumable: bool = False) -> Document:
        """Write one document; raises what stopped it (after recording it on the document)."""
        outcome = self.write_many([request], resumable=resumable)[0]
        if outcome.error is not None:
            raise outcome.error
        assert outcome.document is not None
        return outcome.document

    def write_many(
        self, requests: Sequence[WriteRequest | Document], *, resumable: bool = False
    ) -> list[WriteOutcome]:
        """Write several documents with their chunks embedded together (the embedder is several
        times faster on full batches). One document's bad content fails that document only; a
        transient failure of the embedder holds every document of the batch for a retry; a
        failure while committing holds that document. Nothing raises: each outcome says."""
        reqs = [r if isinstance(r, WriteRequest) else WriteRequest(r) for r in requests]
        outcomes = [WriteOutcome(r.document.id) for r in reqs]
        work: list[_Work] = []
        for i, req in enumerate(reqs):
            try:
                doc, previous = self._begin(req.document, summarize=req.summarize)
                work.append(_Work(i, doc, self.cut(doc, req.pieces), previous))
            except Exception as exc:  # noqa: BLE001 - one document's failure is its own
                outcomes[i].error = self.hold(req.document, exc)
        if not work:
            return outcomes
        try:
            found = self.contexts([(w.document, len(w.chunks)) for w in work])
            for w in work:
                w.context = found.get(w.document.id, NO_CONTEXT)
            vectors = self.embed(
                [c for w in work for c in w.chunks], resumable=resumable, context={w.document.id: w.context
                                                                                  for w in work}
            )
        except Exception as exc:  # noqa: BLE001 - recorded on every document of the batch
            for w in work:
                outcomes[w.position].error = self.hold(w.document, exc)
            return outcomes
        offset = 0
        written: list[_Work] = []
        for w in work:
            doc_vectors = vectors[offset : offset + len(w.chunks)]
            offset += len(w.chunks)
            try:
                outcomes[w.position].document = self.commit(
                    w.document, w.chunks, doc_vectors, previous_chunk_count=w.previous_chunk_count,
                    context=w.context, rebuild_neighbours=False,
                )
                written.append(w)
            except Exception as exc:  # noqa: BLE001 - recorded on the document
                outcomes[w.position].error = self.hold(w.document, exc)
        self._rebuild_around(written)
        return outcomes

    # ---------------------------------------------------------------- the stages

    def begin(self, doc: Document, *, summarize: bool = True) -> Document:
        """Store the document as `processing`, summarized when it has no summary yet."""
        return self._begin(doc, summarize=summarize)[0]

    def _begin(self, doc: Document, *, summarize: bool) -> tuple[Document, int]:
        stored = self.svc.metadata.get_document(doc.organization_id, doc.id)
        previous = stored.chunk_count if stored is not None else 0
        if summarize and not doc.summary:
            doc = apply_summary(doc, self.summarize(doc))
        # chunk_count keeps what the index holds now, so a later stage (another Lambda) still
        # knows that old rows must go; commit sets the new count.
        begun = doc.model_copy(update={"status": DocumentStatus.PROCESSING, "status_reason": None,
                                       "chunk_count": previous})
        if stored is not None and stored.status != DocumentStatus.READY and _same_document(stored, begun):
            # Stored as it is to be written and already visibly not ready (a save queued with its
            # summary): nothing to write until commit. On DynamoDB that is a transaction saved.
            return stored, previous
        self.svc.metadata.put_document(begun)
        return begun, previous

    def summarize(self, doc: Document) -> Summary:
        return self.svc.summarizer.summarize(doc.title, doc.content, doc.content_type, doc.language)

    def cut(self, doc: Document, pieces: Sequence[TextChunk] | None = None) -> list[Chunk]:
        if pieces is None:
            pieces = chunk_document(
                doc, self.svc.settings.chunk_max_tokens, self.svc.settings.chunk_overlap_tokens
            )
        return make_chunks(doc, pieces)

    def embed(
        self,
        chunks: Sequence[Chunk],
        *,
        resumable: bool = False,
        context: Mapping[str, Context] | None = None,
    ) -> list[list[float]]:
        """The vectors to index: each chunk's embedding, mixed with its window's for a memory with
        context (`context` by document id; None: looked up now, memlane.documents.contextual).

        Embeds in batches of EMBED_BATCH. Remote embedders (OpenAI, Bedrock) retry transient
        failures themselves with 1, 2, 4 s backoff and then raise TransientError. `resumable`
        (the paths that retry a document later): every finished batch is saved before the next
        one starts and saved vectors are reused, so a retry embeds only what is still missing
        (memlane.documents.progress)."""
        if context is None:
            context = self.contexts_of_chunks(chunks)
        own = [embedding_text(c) for c in chunks]
        windows: dict[int, str] = {}
        if self.svc.settings.context.vector:
            for i, c in enumerate(chunks):
                ctx = context.get(c.document_id, NO_CONTEXT)
                if not ctx.empty:
                    windows[i] = ctx.window(own[i], after=self.svc.settings.context.vector_after)
        window_at = {i: len(own) + n for n, i in enumerate(windows)}
        vectors = self._embed_texts([*own, *windows.values()], [*chunks, *(chunks[i] for i in windows)],
                                    resumable=resumable)
        for i, j in window_at.items():
            # plain Python, not NumPy: the write path also runs in Lambda, whose layer leaves NumPy out
            mixed = [a + b for a, b in zip(vectors[i], vectors[j], strict=True)]
            norm = math.sqrt(math.fsum(x * x for x in mixed))
            if norm > 0:
                vectors[i] = [x / norm for x in mixed]
        return vectors[: len(own)]

    def _embed_texts(self, texts: Sequence[str], chunks: Sequence[Chunk], *, resumable: bool) -> list[list[float]]:
        """Each text's embedding; `chunks` names the document each text belongs to (progress is
        saved per document). A text is embedded once, and not at all when its vector is known:
        saved by an earlier attempt (`resumable`), or embedded moments ago by this process."""
        keys = [embedding_key(self.svc.embedder.id, t) for t in texts]
        known = self._saved_embeddings(chunks) if resumable else {}
        first_of: dict[str, int] = {}
        for i, key in enumerate(keys):
            first_of.setdefault(key, i)
        # Embedded moments ago by this process (a rebuilt neighbour's own text, a retried write)?
        recent = recent_embeddings(self.svc.embedder)
        if recent is not None:
            for key, i in first_of.items():
                if key not in known and (hit := recent.get(recent.key(chunks[i].organization_id, key))) is not None:
                    known[key] = hit
        todo = [i for key, i in first_of.items() if key not in known]
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            vectors = self.svc.embedder.embed_documents([texts[i] for i in batch])
            known.update(zip([keys[i] for i in batch], vectors, strict=True))
            if recent is not None:
                for i, vector in zip(batch, vectors, strict=True):
                    recent.put(recent.key(chunks[i].organization_id, keys[i]), vector)
            if resumable and start + EMBED_BATCH < len(todo):  # a later batch may fail: keep this one
                self._save_progress([chunks[i] for i in batch], [keys[i] for i in batch], vectors)
        return [known[key] for key in keys]

    def _saved_embeddings(self, chunks: Sequence[Chunk]) -> dict[str, list[float]]:
        """The vectors an earlier attempt at these documents saved (memlane.documents.progress)."""
        known: dict[str, list[float]] = {}
        for org_id, doc_id in dict.fromkeys((c.organization_id, c.document_id) for c in chunks):
            saved = self.progress.load(org_id, doc_id)
            if saved:
                self._with_progress.add((org_id, doc_id))
                known.update(saved)
        return known

    def _save_progress(
        self, chunks: Sequence[Chunk], keys: Sequence[str], vectors: Sequence[list[float]]
    ) -> None:
        by_doc: dict[tuple[str, str], dict[str, list[float]]] = {}
        for chunk, key, vector in zip(chunks, keys, vectors, strict=True):
            by_doc.setdefault((chunk.organization_id, chunk.document_id), {})[key] = vector
        for (org_id, doc_id), saved in by_doc.items():
            self.progress.save(org_id, doc_id, saved)
            self._with_progress.add((org_id, doc_id))

    def commit(
        self,
        doc: Document,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]],
        *,
        previous_chunk_count: int | None = None,
        clear_progress: bool | None = None,
        context: Context | None = None,
        rebuild_neighbours: bool = True,
    ) -> Document:
        """Make a begun document searchable and say so. `previous_chunk_count` is what the index
        held for it before this write (begin keeps it in `chunk_count`). `clear_progress`: remove
        its saved embedding batches (None: if this writer embedded or found some; a workflow's
        Write step, which did not embed, says True). `context`: its neighbours as `embed` used
        them (None: looked up now). `rebuild_neighbours`: rebuild the index entries of the
        memories saved around it, which now have it as context (write_many does that once for
        all it commits)."""
        if len(vectors) != len(chunks):
            raise MemlaneError(f"write of {doc.id}: {len(chunks)} chunks but {len(vectors)} vectors")
        svc = self.svc
        org = doc.organization_id
        previous = doc.chunk_count if previous_chunk_count is None else previous_chunk_count
        svc.metadata.put_chunks(org, doc.id, chunks)
        if previous:
            # A rewrite: rows of the old text go first, or a shorter text would leave its old
            # tail searchable. The document says `processing` until the new rows are in.
            svc.index.delete_document(org, doc.id)
        if chunks:
            if context is None:
                context = self.contexts([(doc, len(chunks))]).get(doc.id, NO_CONTEXT)
            text = context.text() if svc.settings.context.text else ""
            kind = kind_of(doc)
            svc.index.upsert(
                svc.embedder.id,
                [
                    IndexedChunk(chunk=c, vector=v, context=text, identifiers=self.identifier_words(c), kind=kind)
                    for c, v in zip(chunks, vectors, strict=True)
                ],
            )
        self._supersede(doc)
        ready = doc.model_copy(
            update={
                "status": DocumentStatus.READY,
                "status_reason": None,
                "chunk_count": len(chunks),
                "embedder": svc.embedder.id,
                "updated_at": svc.clock.now(),
            }
        )
        svc.metadata.put_document(ready)
        invalidate_project(svc.cache, org, doc.project_id)
        svc.metrics.count(observability.DOCUMENTS_WRITTEN)
        if clear_progress or (clear_progress is None and (org, doc.id) in self._with_progress):
            self._clear_progress(ready)
        if rebuild_neighbours:
            self._rebuild_around([_Work(0, ready, list(chunks), previous, context or NO_CONTEXT)])
        return ready

    def identifier_words(self, chunk: Chunk) -> str:
        """The words the text leg also indexes for a chunk (memlane.ingest.identifiers), when the
        composition turns them on (`index_identifier_words`); never embedded, never shown."""
        return index_words(chunk) if self.svc.settings.index_identifier_words else ""

    # ---------------------------------------------------------------- context (memlane.documents.contextual)

    def contexts(self, docs: Sequence[tuple[Document, int]]) -> dict[str, Context]:
        """The neighbours of documents about to be indexed, each given with its chunk count. Context
        improves an entry; failing to read it never fails a write: the entry is indexed without it
        (and rebuilt when a neighbour is next written)."""
        try:
            return contexts(self.svc.metadata, self.svc.settings.context, docs, self.svc.clock.now())
        except Exception:  # noqa: BLE001 - see the docstring
            log.warning("could not read the neighbours of %d documents; indexed without context", len(docs),
                        exc_info=True)
            return {}

    def contexts_of_chunks(self, chunks: Sequence[Chunk]) -> dict[str, Context]:
        """The same, for chunk records alone (a workflow's Embed step)."""
        counts: dict[tuple[str, str], int] = {}
        for c in chunks:
            counts[(c.organization_id, c.document_id)] = counts.get((c.organization_id, c.document_id), 0) + 1
        docs: list[tuple[Document, int]] = []
        try:
            for org in {o for o, _ in counts}:
                for d in self.svc.metadata.get_documents(org, [i for o, i in counts if o == org]):
                    docs.append((d, counts[(org, d.id)]))
        except Exception:  # noqa: BLE001 - as in `contexts`
            log.warning("could not read %d documents for their context", len(counts), exc_info=True)
            return {}
        return self.contexts(docs) if docs else {}

    def _rebuild_around(self, written: Sequence[_Work]) -> None:
        """After documents were committed: rebuild the entries of the memories next to them
        (outside what was written, they have not seen them yet), and of a written document whose
        neighbours changed since it was embedded (a batch whose members were not ready then). A
        failure here leaves entries with an older context, never a document that is not ready;
        it is logged as an error and counted (`rebuild_or_report`), and the next write or removal
        next to them rebuilds them."""
        w = self.svc.settings.context
        if not written or not w.active:
            return
        now = self.svc.clock.now()
        by_org: dict[str, list[_Work]] = {}
        for item in written:
            by_org.setdefault(item.document.organization_id, []).append(item)
        for org, items in by_org.items():
            self.rebuild_or_report(org, partial(self._stale_around, org, items, now),
                                   f"the memories around {len(items)} written")

    def _stale_around(self, org: str, items: Sequence[_Work], now: datetime) -> list[str]:
        w = self.svc.settings.context
        mine = {i.document.id: i for i in items}
        # who carries a written memory: also one that was short before this rewrite
        carried = [
            i.document.id for i in items
            if eligible(i.document, len(i.chunks)) or (i.previous_chunk_count == 1 and eligible(i.document, 1))
        ]
        stale = carriers(self.svc.metadata, w, org, carried, now) - set(mine)
        now_seen = self.contexts([(i.document, len(i.chunks)) for i in items])
        stale |= {d for d, i in mine.items() if now_seen.get(d, NO_CONTEXT) != i.context}
        # a version hidden by one of these leaves the context of the memories around it
        replaced = [i.document.updates_memory_id for i in items if i.document.updates_memory_id]
        stale |= carriers(self.svc.metadata, w, org, replaced, now, passing=set(mine)) - set(mine)
        return sorted(stale)

    def rebuild_or_report(self, org_id: str, document_ids: Sequence[str] | Callable[[], Sequence[str]],
                          around: str) -> int:
        """`rebuild`, where a failure must not undo what was already done (the document written, or
        removed): it is logged as an error with its cause and counted as CONTEXT_REBUILDS_FAILED,
        which an alarm watches on AWS. A refusal (a missing grant, a model that is not enabled) is
        never silent: the memories keep their old context until the next write next to them."""
        try:
            ids = document_ids() if callable(document_ids) else document_ids
            return self.rebuild(org_id, ids)
        except Exception as exc:  # noqa: BLE001 - reported below, not swallowed
            log.error("could not rebuild the context of %s: %s: %s", around, type(exc).__name__, exc, exc_info=True)
            self.svc.metrics.count(observability.CONTEXT_REBUILDS_FAILED)
            return 0

    def rebuild(self, org_id: str, document_ids: Sequence[str]) -> int:
        """Index again the ready memories named, with their neighbours as they are now (the
        memory itself and its chunk records are unchanged). Returns how many were rebuilt."""
        if not document_ids:
            return 0
        svc = self.svc
        docs = [
            d for d in svc.metadata.get_documents(org_id, list(document_ids))
            if d.status == DocumentStatus.READY and eligible(d) and d.embedder == svc.embedder.id
        ]
        chunks = {d.id: svc.metadata.get_chunks(org_id, d.id) for d in docs}
        docs = [d for d in docs if len(chunks[d.id]) == 1]
        if not docs:
            return 0
        found = self.contexts([(d, 1) for d in docs])
        flat = [chunks[d.id][0] for d in docs]
        vectors = self.embed(flat, context=found)
        text = svc.settings.context.text
        kinds = {d.id: kind_of(d) for d in docs}
        svc.index.upsert(
            svc.embedder.id,
            [
                IndexedChunk(
                    chunk=c, vector=v, context=found.get(c.document_id, NO_CONTEXT).text() if text else "",
                    identifiers=self.identifier_words(c), kind=kinds[c.document_id],
                )
                for c, v in zip(flat, vectors, strict=True)
            ],
        )
        for project in {d.project_id for d in docs}:
            invalidate_project(svc.cache, org_id, project)
        return len(docs)

    def _supersede(self, doc: Document) -> None:
        """The version this document replaces leaves recall, now that the new one is indexed."""
        if not doc.updates_memory_id:
            return
        svc = self.svc
        prev = svc.metadata.get_document(doc.organization_id, doc.updates_memory_id)
        if prev is None:
            return
        if prev.superseded_by != doc.id:
            svc.metadata.put_document(prev.model_copy(update={"superseded_by": doc.id}))
        svc.index.set_superseded(doc.organization_id, prev.id, True)

    def _clear_progress(self, doc: Document) -> None:
        """Saved embedding batches are only useful until the document is indexed. A failure here
        leaves files the doctor reports and the bucket's lifecycle rule expires; never a reason to
        say the document is not ready."""
        try:
            self.progress.clear(doc.organization_id, doc.id)
            self._with_progress.discard((doc.organization_id, doc.id))
        except Exception:  # noqa: BLE001
            log.warning("could not clear the embedding progress of %s", doc.id, exc_info=True)

    # ---------------------------------------------------------------- failures

    def hold(self, doc: Document, exc: Exception) -> Exception:
        """Record why a document is not ready: `queued` with the reason when the failure is
        transient (the caller retries), `failed` otherwise. Returns the error for the caller. If
        even this write fails, the document keeps the `processing` status begin gave it, which
        the caller's retry (a job lease, a workflow retry, a page's stuck timer) still covers."""
        self.svc.metrics.count(observability.WRITES_DEFERRED if isinstance(exc, TransientError)
                               else observability.WRITES_FAILED)
        if isinstance(exc, TransientError):
            status, reason = DocumentStatus.QUEUED, f"waiting to retry: {exc.message}"
        elif isinstance(exc, MemlaneError):
            status, reason = DocumentStatus.FAILED, exc.message
        else:
            log.error("writing %s failed", doc.id, exc_info=exc)
            status, reason = DocumentStatus.FAILED, f"{type(exc).__name__}: {exc}"
        try:
            if self.svc.metadata.get_document(doc.organization_id, doc.id) is not None:
                self.svc.metadata.set_status(doc.organization_id, doc.id, status, reason[:MAX_REASON_CHARS])
        except Exception:  # noqa: BLE001
            log.warning("could not record the status of %s", doc.id, exc_info=True)
        return exc

