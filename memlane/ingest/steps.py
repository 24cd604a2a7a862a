"""The ingestion pipeline as workflow steps (the Step Functions state machine on AWS).

    Prepare → Extract → Chunk → Embed → Summarize → Index → Finalize      (any failure → MarkFailed)

Each step is a function of (Services, StepInput) returning a small result that Step Functions
stores at `$.artifacts.<step>`; the next steps read it from `artifacts`. States carry identifiers
and S3 keys, never content: the cleaned text, the chunks and the vectors travel through the blob
store under `work/{org}/{document}/{execution}/…` (Step Functions payloads stop at 256 KB).

The work itself is IngestPipeline's stages (`chunk`, `embed`, `summarize`, `index`), the same
code the local worker runs through `IngestPipeline.process`, so a document comes out of either
path with the same chunks, vectors, summary and tags:

- Extraction ran when the document was saved (bad input is a 400 there, not a failed workflow);
  the Extract step stages the cleaned text for the later steps and marks the document processing.
- Chunks are cut before the summary exists (the state machine's order), but a chunk carries the
  document's tags, which the summary may fill in; Index therefore rebuilds the chunk records from
  the cut pieces and the summarized document, exactly what `process` writes.
- Every step is idempotent: chunk ids derive from the document id, index writes are upserts, and a
  document that is gone or already ready makes every later step a no-op (`skip`).

Errors keep their class names, which the state machine's Retry matches: TransientError and
DependencyUnavailableError are retried with backoff; anything else goes to MarkFailed, which
records the reason on the document.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memlane.domain.errors import MemlaneError, NotFoundError, TransientError
from memlane.domain.models import Chunk, Document, DocumentStatus, IngestJob
from memlane.ingest.chunking import TextChunk
from memlane.ingest.pipeline import IngestPipeline, _apply_summary, make_chunks
from memlane.services.context import Services
from memlane.services.lifecycle import mark_ready, on_ready, work_prefix

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 500


# --------------------------------------------------------------------------- task input and results


class DocumentRef(BaseModel):
    """The execution input (what the ingest consumer starts the workflow with)."""

    model_config = ConfigDict(extra="ignore")

    document_id: str
    organization_id: str
    job_id: str | None = None


class StepError(BaseModel):
    """What a Catch stores at $.error: the error name and its cause (the Lambda error JSON)."""

    model_config = ConfigDict(populate_by_name=True)

    error: str = Field(alias="Error")
    cause: str = Field(default="", alias="Cause")


class StepInput(BaseModel):
    """Every step's payload: {step, document, artifacts, execution} (+ error for MarkFailed)."""

    model_config = ConfigDict(extra="ignore")

    step: str
    document: DocumentRef
    artifacts: dict[str, dict[str, Any]] = Field(default_factory=dict)
    execution: str
    error: StepError | None = None

    def artifact(self, step: str, field: str) -> Any:
        try:
            return self.artifacts[step][field]
        except KeyError as exc:
            raise MemlaneError(f"workflow input: artifacts.{step}.{field} is missing") from exc

    @property
    def skipped(self) -> str | None:
        return (self.artifacts.get("extract") or {}).get("skip")


class StepResult(BaseModel):
    skip: str | None = None


class ExtractResult(StepResult):
    text_key: str | None = None
    chars: int = 0


class ChunkResult(StepResult):
    chunks_key: str | None = None
    count: int = 0


class EmbedResult(StepResult):
    vectors_key: str | None = None
    count: int = 0
    embedder: str | None = None


class SummarizeResult(StepResult):
    summarized: bool = False
    tags: list[str] = Field(default_factory=list)


class IndexResult(StepResult):
    indexed: int = 0


class FinalizeResult(StepResult):
    status: DocumentStatus | None = None
    chunk_count: int = 0


class MarkFailedResult(BaseModel):
    status: DocumentStatus | None
    reason: str


def work_key(ref: DocumentRef, execution: str, name: str) -> str:
    return f"{work_prefix(ref.organization_id, ref.document_id)}{execution}/{name}"


# --------------------------------------------------------------------------- steps


def extract(svc: Services, inp: StepInput) -> ExtractResult:
    ref = inp.document
    doc = svc.metadata.get_document(ref.organization_id, ref.document_id)
    if doc is None:
        return ExtractResult(skip="document not found (deleted before processing)")
    if doc.status == DocumentStatus.READY:
        return ExtractResult(skip="document already ready")
    svc.metadata.set_status(ref.organization_id, ref.document_id, DocumentStatus.PROCESSING)
    key = work_key(ref, inp.execution, "text.txt")
    svc.blobs.put(key, doc.content.encode("utf-8"))
    return ExtractResult(text_key=key, chars=len(doc.content))


def chunk(svc: Services, inp: StepInput) -> ChunkResult:
    if inp.skipped:
        return ChunkResult(skip=inp.skipped)
    doc = _document(svc, inp.document)
    doc = doc.model_copy(update={"content": _read_text(svc, inp.artifact("extract", "text_key"))})
    chunks = IngestPipeline(svc).chunk(doc)
    key = work_key(inp.document, inp.execution, "chunks.json")
    svc.blobs.put(key, _dump([c.model_dump(mode="json") for c in chunks]))
    return ChunkResult(chunks_key=key, count=len(chunks))


def embed(svc: Services, inp: StepInput) -> EmbedResult:
    if inp.skipped:
        return EmbedResult(skip=inp.skipped)
    chunks = _read_chunks(svc, inp.artifact("chunk", "chunks_key"))
    try:
        vectors = IngestPipeline(svc).embed(chunks, resumable=True)
    except TransientError as exc:
        _note_retry(svc, inp.document, f"embedding failed, retrying: {exc.message}")
        raise
    key = work_key(inp.document, inp.execution, "vectors.json")
    svc.blobs.put(key, _dump(vectors))
    return EmbedResult(vectors_key=key, count=len(vectors), embedder=svc.embedder.id)


def summarize(svc: Services, inp: StepInput) -> SummarizeResult:
    if inp.skipped:
        return SummarizeResult(skip=inp.skipped)
    doc = _document(svc, inp.document)
    if doc.summary:  # imported or reprocessed documents keep theirs, as in IngestPipeline.process
        return SummarizeResult(summarized=False, tags=doc.tags)
    doc = _apply_summary(doc, IngestPipeline(svc).summarize(doc))
    svc.metadata.put_document(doc)
    return SummarizeResult(summarized=True, tags=doc.tags)


def index(svc: Services, inp: StepInput) -> IndexResult:
    if inp.skipped:
        return IndexResult(skip=inp.skipped)
    ref = inp.document
    doc = _document(svc, ref)
    cut = _read_chunks(svc, inp.artifact("chunk", "chunks_key"))
    vectors = json.loads(_read(svc, inp.artifact("embed", "vectors_key")))
    if len(vectors) != len(cut):
        raise MemlaneError(f"workflow input: {len(cut)} chunks but {len(vectors)} vectors")
    # The chunk records as IngestPipeline.process writes them: cut from the text, described by the
    # summarized document (tags, title, expiry).
    pieces = [TextChunk(c.content, c.start_offset, c.end_offset, tuple(c.heading_path)) for c in cut]
    chunks = make_chunks(doc, pieces)
    svc.metadata.put_chunks(ref.organization_id, ref.document_id, chunks)
    try:
        IngestPipeline(svc).index(chunks, vectors)
    except TransientError as exc:
        _note_retry(svc, ref, f"search index unavailable, retrying: {exc.message}")
        raise
    # The new chunks are searchable from here on, so the version they replace is hidden now, by
    # the step that holds the search grant (on_ready is idempotent: Finalize repeats it and only
    # the cache invalidation is left to do then).
    on_ready(svc, doc)
    return IndexResult(indexed=len(chunks))


def finalize(svc: Services, inp: StepInput) -> FinalizeResult:
    if inp.skipped:
        return FinalizeResult(skip=inp.skipped)
    doc = _document(svc, inp.document)
    count = int(inp.artifact("index", "indexed"))
    mark_ready(svc, doc, count, inp.artifact("embed", "embedder"))
    return FinalizeResult(status=DocumentStatus.READY, chunk_count=count)


def mark_failed(svc: Services, inp: StepInput) -> MarkFailedResult:
    """Records why the workflow gave up. A document deleted meanwhile stays deleted (set_status
    does not create it again)."""
    reason = failure_reason(inp.error)
    ref = inp.document
    doc = svc.metadata.get_document(ref.organization_id, ref.document_id)
    if doc is None:
        return MarkFailedResult(status=None, reason=reason)
    svc.metadata.set_status(ref.organization_id, ref.document_id, DocumentStatus.FAILED, reason)
    return MarkFailedResult(status=DocumentStatus.FAILED, reason=reason)


def failure_reason(error: StepError | None) -> str:
    """`<error name>: <message>` from a Catch's {Error, Cause}; the Cause of a Lambda error is
    its JSON ({errorMessage, errorType, stackTrace}) and only the message is kept."""
    if error is None:
        return "ingestion failed"
    message = error.cause
    try:
        parsed = json.loads(error.cause)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        message = str(parsed.get("errorMessage") or "")
    text = f"{error.error}: {message}" if message else error.error
    return text[:MAX_REASON_CHARS]


STEPS = {
    "extract": extract,
    "chunk": chunk,
    "embed": embed,
    "summarize": summarize,
    "index": index,
    "finalize": finalize,
}


# --------------------------------------------------------------------------- starting the workflow


class WorkflowStarter(Protocol):
    def start(
        self, document_id: str, org_id: str, input: dict[str, Any], *, revision: str | None = None
    ) -> str: ...


class StartedExecution(BaseModel):
    document_id: str
    execution_arn: str


def start_ingestion(starter: WorkflowStarter, job: IngestJob) -> StartedExecution:
    """One execution per job, named after the document and the job: a redelivered message asks
    for the same name and is answered with the existing execution (one document, one run)."""
    arn = starter.start(job.document_id, job.organization_id, {"job_id": job.id}, revision=job.id)
    return StartedExecution(document_id=job.document_id, execution_arn=arn)


# --------------------------------------------------------------------------- plumbing


def _document(svc: Services, ref: DocumentRef) -> Document:
    doc = svc.metadata.get_document(ref.organization_id, ref.document_id)
    if doc is None:
        raise NotFoundError(f"document {ref.document_id} not found")
    return doc


def _read(svc: Services, key: str) -> bytes:
    data = svc.blobs.get(key)
    if data is None:
        raise MemlaneError(f"workflow artifact {key} is missing")
    return data


def _read_text(svc: Services, key: str) -> str:
    return _read(svc, key).decode("utf-8")


def _read_chunks(svc: Services, key: str) -> list[Chunk]:
    return [Chunk.model_validate(c) for c in json.loads(_read(svc, key))]


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _note_retry(svc: Services, ref: DocumentRef, reason: str) -> None:
    """The status says why the document is taking longer while the workflow retries the step."""
    try:
        svc.metadata.set_status(
            ref.organization_id, ref.document_id, DocumentStatus.PROCESSING, reason[:MAX_REASON_CHARS]
        )
    except MemlaneError:
        log.warning("could not record the retry of %s", ref.document_id)
