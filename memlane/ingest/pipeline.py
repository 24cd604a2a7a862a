"""The one ingestion pipeline (spec §3): extract → dedupe → chunk → embed → summarize → store.

`prepare` runs in the request: it extracts and hashes the content so bad input fails with a 400
and identical content returns the existing document at once. `process` does the expensive part
(chunk, embed, summarize, index) in the request for small saves, or later from the job queue
(a local worker thread, or the Step Functions workflow on AWS, which calls the same stages).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlane.domain.errors import DependencyUnavailableError, NotFoundError, TransientError
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, chunk_id_for
from memlane.ingest.chunking import TextChunk, chunk_text
from memlane.ingest.progress import EmbeddingProgress, embedding_key

if TYPE_CHECKING:
    from memlane.ingest.extract import Extracted
from memlane.ports import IndexedChunk, Summary
from memlane.services.context import Services
from memlane.services.lifecycle import mark_ready

log = logging.getLogger(__name__)

EMBED_BATCH = 64


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def derive_title(extracted: Extracted, given: str | None) -> str:
    if given and given.strip():
        return given.strip()[:500]
    if extracted.title:
        return extracted.title[:500]
    for line in extracted.text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= 80 else line[:77].rstrip() + "…"
    return "Untitled"


@dataclass
class Prepared:
    extracted: Extracted
    title: str
    content_hash: str


def prepare(
    raw: str | bytes, content_type: ContentType | None, title: str | None, source_url: str | None
) -> Prepared:
    # imported here: extraction pulls in bs4/lxml/pypdf, which only a save needs (Lambda cold start)
    from memlane.ingest.extract import extract

    extracted = extract(raw, content_type, title=title, source_url=source_url)
    return Prepared(
        extracted=extracted, title=derive_title(extracted, title), content_hash=content_hash(extracted.text)
    )


def make_chunks(doc: Document, pieces: Sequence[TextChunk]) -> list[Chunk]:
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
            tags=doc.tags,
            created_at=doc.created_at,
            forget_after=doc.forget_after,
            superseded=doc.superseded_by is not None,
        )
        for i, p in enumerate(pieces)
    ]


def embedding_text(chunk: Chunk) -> str:
    """What the embedder sees: the title and section path give a chunk its topic even when the
    body never names it (a paragraph under "Sorting HOW TO › Key functions")."""
    return chunk.indexed_text()


class IngestPipeline:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.progress = EmbeddingProgress(svc.blobs)
        # Documents with embedding progress in the blob store (found or saved by `embed`): only
        # these are cleared once indexed, so an ordinary save takes no extra write.
        self.with_progress: set[tuple[str, str]] = set()

    # ---------------------------------------------------------------- stages (one per workflow step)

    def chunk(self, doc: Document) -> list[Chunk]:
        language = doc.metadata.get("language") if doc.content_type == ContentType.CODE else None
        pieces = chunk_text(
            doc.content,
            content_type=doc.content_type,
            language=language,
            max_tokens=self.svc.settings.chunk_max_tokens,
            overlap_tokens=self.svc.settings.chunk_overlap_tokens,
        )
        return make_chunks(doc, pieces)

    def embed(self, chunks: Sequence[Chunk], *, resumable: bool = False) -> list[list[float]]:
        """Embeds in batches of EMBED_BATCH. Remote embedders (OpenAI, Bedrock) retry transient
        failures themselves with 1, 2, 4 s backoff and then raise TransientError; the caller queues
        the document for later. `resumable` (the queued paths, which retry): every finished batch is
        saved before the next one starts, and saved vectors are reused, so a retry embeds only what
        is still missing (memlane.ingest.progress)."""
        embedder_id = self.svc.embedder.id
        texts = [embedding_text(c) for c in chunks]
        keys = [embedding_key(embedder_id, t) for t in texts]
        known: dict[str, list[float]] = {}
        if resumable:
            for org_id, doc_id in dict.fromkeys((c.organization_id, c.document_id) for c in chunks):
                saved = self.progress.load(org_id, doc_id)
                if saved:
                    self.with_progress.add((org_id, doc_id))
                    known.update(saved)
        first_of: dict[str, int] = {}
        for i, key in enumerate(keys):
            first_of.setdefault(key, i)
        todo = [i for key, i in first_of.items() if key not in known]
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            vectors = self.svc.embedder.embed_documents([texts[i] for i in batch])
            known.update(zip([keys[i] for i in batch], vectors, strict=True))
            if resumable and start + EMBED_BATCH < len(todo):  # a later batch may fail: keep this one
                self._save_progress([chunks[i] for i in batch], [keys[i] for i in batch], vectors)
        return [known[key] for key in keys]

    def _save_progress(
        self, chunks: Sequence[Chunk], keys: Sequence[str], vectors: Sequence[list[float]]
    ) -> None:
        by_doc: dict[tuple[str, str], dict[str, list[float]]] = {}
        for chunk, key, vector in zip(chunks, keys, vectors, strict=True):
            by_doc.setdefault((chunk.organization_id, chunk.document_id), {})[key] = vector
        for (org_id, doc_id), saved in by_doc.items():
            self.progress.save(org_id, doc_id, saved)
            self.with_progress.add((org_id, doc_id))

    def summarize(self, doc: Document) -> Summary:
        language = doc.metadata.get("language")
        return self.svc.summarizer.summarize(doc.title, doc.content, doc.content_type, language)

    def index(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        items = [IndexedChunk(chunk=c, vector=v) for c, v in zip(chunks, vectors, strict=True)]
        self.svc.index.upsert(self.svc.embedder.id, items)

    # ---------------------------------------------------------------- the whole run, in one process

    def process(self, org_id: str, document_id: str) -> Document:
        """Chunk, embed, summarize and index a document already saved with its cleaned content.
        Idempotent: chunk ids are derived from the document id, so a rerun overwrites."""
        result = self.process_many([(org_id, document_id)])[0]
        if isinstance(result, Exception):
            raise result
        return result

    def process_many(self, refs: Sequence[tuple[str, str]]) -> list[Document | Exception]:
        """Process several documents with their chunks embedded together: the embedder is several
        times faster on full batches than on one short document at a time. One document's bad
        content fails that document only; a transient embedder or index failure requeues all."""
        md = self.svc.metadata
        results: list[Document | Exception | None] = [None] * len(refs)
        work: list[tuple[int, Document, list[Chunk]]] = []
        for i, (org_id, document_id) in enumerate(refs):
            doc = md.get_document(org_id, document_id)
            if doc is None:
                results[i] = NotFoundError(f"document {document_id} not found")
                continue
            if doc.status == DocumentStatus.READY:
                results[i] = doc
                continue
            md.set_status(org_id, document_id, DocumentStatus.PROCESSING)
            try:
                if not doc.summary:  # imported or reprocessed documents keep theirs
                    doc = _apply_summary(doc, self.summarize(doc))
                work.append((i, doc, self.chunk(doc)))
            except Exception as exc:  # noqa: BLE001 - isolate one document's failure
                results[i] = exc
        all_chunks = [c for _, _, chunks in work for c in chunks]
        try:
            vectors = self.embed(all_chunks, resumable=True)
        except TransientError as exc:
            for _, doc, _ in work:
                md.set_status(
                    doc.organization_id, doc.id, DocumentStatus.QUEUED, f"waiting to retry: {exc.message}"
                )
            raise
        offset = 0
        for i, doc, chunks in work:
            doc_vectors = vectors[offset : offset + len(chunks)]
            offset += len(chunks)
            md.put_chunks(doc.organization_id, doc.id, chunks)
            try:
                self.index(chunks, doc_vectors)
            except TransientError as exc:
                md.set_status(
                    doc.organization_id,
                    doc.id,
                    DocumentStatus.QUEUED,
                    f"search index unavailable: {exc.message}",
                )
                results[i] = DependencyUnavailableError(exc.message)
                continue
            results[i] = mark_ready(self.svc, doc, len(chunks), self.svc.embedder.id)
            if (doc.organization_id, doc.id) in self.with_progress:
                self.with_progress.discard((doc.organization_id, doc.id))
                self.progress.clear(doc.organization_id, doc.id)
        return [r if r is not None else RuntimeError("not processed") for r in results]


def _apply_summary(doc: Document, summary: Summary) -> Document:
    """User metadata wins; extracted metadata fills the gaps. Tags the user gave are kept as
    given; without any, the extracted keywords become the tags (never empty)."""
    extracted = dict(summary.metadata)
    keywords = extracted.pop("tags", []) or []
    merged = {**extracted, **doc.metadata}
    if not merged.get("tags"):
        merged["tags"] = list(keywords)
    merged.setdefault("keywords", list(keywords))
    return doc.model_copy(update={"summary": summary.summary or doc.summary, "metadata": merged})
