"""The write path as workflow steps (the Step Functions state machine on AWS), for documents too
large to write in the request:

    Extract → [Transcribe job: start, wait, poll] → Prepare → Embed → Write
                                          (any failure, after retries → MarkFailed)

Each step is one stage of memlane.documents.writer.DocumentWriter, the same code every other caller
runs in one process, so a document comes out of the workflow with the same chunks, vectors,
summary and status as from a local save:

- Extract: a media document saved without its text (memlane.documents.media) is read first: OCR
  (Textract) in this Lambda, or for audio and video an Amazon Transcribe job that the state
  machine starts and polls with its SDK integration (no Lambda waits on it); Transcribed stores
  the transcript the job wrote. Any other document passes through.
- Prepare: `begin` (the document says `processing`, and gets its summary and keyphrases) and `cut`;
  the chunk records are staged in the blob store.
- Embed: `embed`, resumable: batches that succeed are kept, so a retried step embeds only the
  rest (memlane.documents.progress); the vectors are staged.
- Write: `commit`: chunk records, search index, the replaced version hidden, `ready`.

States carry identifiers and S3 keys, never content (Step Functions payloads stop at 256 KB): the
chunks and vectors travel through the blob store under `work/{org}/{document}/{execution}/…`.
Every step is idempotent (chunk ids derive from the document id, index writes are upserts), and a
document that is gone or already ready when the workflow starts makes every step a no-op (`skip`).

Errors keep their class names, which the state machine's Retry matches: TransientError and its
subclasses are retried with backoff; anything else goes to MarkFailed, which records the reason.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memlane import observability
from memlane.documents import media_budget
from memlane.documents.keys import media_key, work_prefix
from memlane.documents.media import apply_transcript, complete_pending
from memlane.documents.media_budget import charge as charge_media
from memlane.documents.writer import DocumentWriter, already_written, pieces_of
from memlane.domain.errors import MediaBudgetDeferred, MemlaneError, NotFoundError, TransientError
from memlane.domain.models import Chunk, Document, DocumentStatus, IngestJob
from memlane.ports import Services, Transcript, WorkflowStarter

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
        return (self.artifacts.get("extract") or {}).get("skip") or (self.artifacts.get("prepare") or {}).get("skip")


class StepResult(BaseModel):
    skip: str | None = None


class ExtractResult(StepResult):
    # "none": nothing to read; "done": read in this step; "transcribe": the workflow runs a job
    mode: str = "none"
    job_name: str | None = None
    media_key: str | None = None
    output_key: str | None = None


class TranscribedResult(StepResult):
    segments: int = 0


class PrepareResult(StepResult):
    chunks_key: str | None = None
    count: int = 0
    tags: list[str] = Field(default_factory=list)  # the tags a client gave
    keyphrases: list[str] = Field(default_factory=list)  # the ones the summary generated


class EmbedResult(StepResult):
    vectors_key: str | None = None
    count: int = 0
    embedder: str | None = None


class WriteResult(StepResult):
    status: DocumentStatus | None = None
    chunk_count: int = 0


class MarkFailedResult(BaseModel):
    status: DocumentStatus | None
    reason: str


def work_key(ref: DocumentRef, execution: str, name: str) -> str:
    return f"{work_prefix(ref.organization_id, ref.document_id)}{execution}/{name}"


# --------------------------------------------------------------------------- steps

TRANSCRIBE_JOB_PREFIX = "memlane-"


def transcription_job_name(document_id: str, execution: str) -> str:
    """One Transcribe job per document and execution: a retried state asks for the same job."""
    return re.sub(r"[^0-9a-zA-Z._-]", "-", f"{TRANSCRIBE_JOB_PREFIX}{document_id}-{execution}")[:200]


def extract(svc: Services, inp: StepInput) -> ExtractResult:
    ref = inp.document
    doc = svc.metadata.get_document(ref.organization_id, ref.document_id)
    if doc is None:
        return ExtractResult(skip="document not found (deleted before processing)")
    if doc.status == DocumentStatus.READY:
        return ExtractResult(skip="document already ready")
    if doc.media is None or not doc.media.pending:
        return ExtractResult()
    in_workflow = doc.media.kind in ("audio", "video") and svc.media.transcriber is None and svc.media.transcribe_in_workflow
    engine = svc.media.ocr.id if doc.media.kind in ("image", "pdf") and svc.media.ocr is not None else (
        svc.media.transcriber.id if svc.media.transcriber is not None else None)
    spent = media_budget.over_budget(svc, doc.organization_id,
                                     media_budget.meters_for(doc.media.kind, engine, in_workflow))
    if spent is not None:
        # Deferred, not failed: the state machine retries this step on this error until the
        # organization's budget allows (memlane.documents.media_budget).
        raise MediaBudgetDeferred(f"today's {spent.replace('_', ' ')} budget of this organization is spent")
    if in_workflow:
        return ExtractResult(mode="transcribe", job_name=transcription_job_name(doc.id, inp.execution),
                             media_key=media_key(doc.organization_id, doc.id), output_key=work_key(ref, inp.execution, "transcript.json"))
    complete_pending(svc, doc)
    return ExtractResult(mode="done")


def transcribed(svc: Services, inp: StepInput, *, parse: Callable[[dict[str, Any]], Transcript]) -> TranscribedResult:
    """The job's output (`parse`: the provider's JSON → Transcript) becomes the document's text."""
    doc = _document(svc, inp.document)
    output = json.loads(_read(svc, inp.artifact("extract", "output_key")))
    transcript = parse(output)
    # Amazon Transcribe bills by the minute of recording: counted per organization.
    charge_media(svc, doc.organization_id, "transcribe_minutes", (transcript.duration or 0.0) / 60.0)
    apply_transcript(svc, doc, transcript, "transcribe")
    return TranscribedResult(segments=len(transcript.segments))


def prepare(svc: Services, inp: StepInput) -> PrepareResult:
    if inp.skipped:
        return PrepareResult(skip=inp.skipped)
    ref = inp.document
    doc = svc.metadata.get_document(ref.organization_id, ref.document_id)
    if doc is None:
        return PrepareResult(skip="document not found (deleted before processing)")
    if doc.status == DocumentStatus.READY:
        return PrepareResult(skip="document already ready")
    writer = DocumentWriter(svc)
    doc = writer.begin(doc)
    chunks = writer.cut(doc)
    key = work_key(ref, inp.execution, "chunks.json")
    svc.blobs.put(key, _dump([c.model_dump(mode="json") for c in chunks]))
    return PrepareResult(chunks_key=key, count=len(chunks), tags=doc.tags, keyphrases=doc.keyphrases)


def embed(svc: Services, inp: StepInput) -> EmbedResult:
    if inp.skipped:
        return EmbedResult(skip=inp.skipped)
    chunks = _read_chunks(svc, inp.artifact("prepare", "chunks_key"))
    try:
        vectors = DocumentWriter(svc).embed(chunks, resumable=True)
    except TransientError as exc:
        _note_retry(svc, inp.document, f"embedding failed, retrying: {exc.message}")
        raise
    key = work_key(inp.document, inp.execution, "vectors.json")
    svc.blobs.put(key, _dump(vectors))
    return EmbedResult(vectors_key=key, count=len(vectors), embedder=svc.embedder.id)


def write(svc: Services, inp: StepInput) -> WriteResult:
    if inp.skipped:
        return WriteResult(skip=inp.skipped)
    doc = _document(svc, inp.document)
    staged = _read_chunks(svc, inp.artifact("prepare", "chunks_key"))
    vectors = json.loads(_read(svc, inp.artifact("embed", "vectors_key")))
    writer = DocumentWriter(svc)
    # The records as staged, described by the document as it is now (a tag edit since Prepare
    # is kept).
    chunks = writer.cut(doc, pieces_of(staged))
    try:
        ready = writer.commit(doc, chunks, vectors, clear_progress=True)
    except TransientError as exc:
        _note_retry(svc, inp.document, f"search index unavailable, retrying: {exc.message}")
        raise
    return WriteResult(status=ready.status, chunk_count=ready.chunk_count)


def mark_failed(svc: Services, inp: StepInput) -> MarkFailedResult:
    """Records why the workflow gave up. A document deleted meanwhile stays deleted (set_status
    does not create it again)."""
    reason = failure_reason(inp.error)
    ref = inp.document
    doc = svc.metadata.get_document(ref.organization_id, ref.document_id)
    if doc is None:
        return MarkFailedResult(status=None, reason=reason)
    svc.metadata.set_status(ref.organization_id, ref.document_id, DocumentStatus.FAILED, reason)
    svc.metrics.count(observability.INGESTION_FAILED)
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


STEPS = {"extract": extract, "prepare": prepare, "embed": embed, "write": write}


# --------------------------------------------------------------------------- starting the workflow


class StartedExecution(BaseModel):
    document_id: str
    execution_arn: str


def start_ingestion(starter: WorkflowStarter, svc: Services, job: IngestJob) -> StartedExecution | None:
    """One execution per job that still has work to do, named after the document and the job: a
    redelivered message asks for the same name and is answered with the existing execution (one
    document, one run). A job whose document is gone, or was written after the job was queued
    (the safety net of a save written in its request), starts nothing."""
    doc = svc.metadata.get_document(job.organization_id, job.document_id)
    if doc is None or already_written(doc, job.created_at):
        return None
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
