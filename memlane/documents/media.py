"""Saving images, scanned PDFs, audio and video: the original is kept in the content store, the
text read from it is what is chunked.

Where the reading happens:
- an image (or a scan of a few pages: Settings.ocr_inline_pages) is read in the request, so the
  save answers 201 with a searchable document, like a text save;
- longer scans, and every recording (a transcript takes about a tenth of the recording's length),
  are queued (202): the document waits as `queued` with its original stored, and the job that
  writes it reads it first (`complete_pending`): the local worker, or on AWS the ingestion
  workflow's Extract step (Amazon Transcribe runs there as an asynchronous job the workflow
  polls; see memlane.documents.workflow).

With no engine for the kind of media, the save is refused with a 422 that says what to configure;
text sent as the OCR result or the transcript (content_type image, audio or video) is saved as
before.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from memlane.documents import media_budget
from memlane.documents.keys import media_key
from memlane.domain.errors import InvalidInputError, MediaBudgetDeferred, MemlaneError, UnprocessableError
from memlane.domain.models import ContentType, Document, MediaInfo
from memlane.ingest.media import MediaPayload, join_pages, page_images, placeholder_title, transcript_text
from memlane.ingest.media_bounds import MAX_PAGES, check_image, check_pdf_scan
from memlane.ingest.pipeline import Original, derive_title
from memlane.ports import Services, Transcript

if TYPE_CHECKING:  # extraction loads bs4/lxml/pypdf: imported where a save needs it (cold start)
    from memlane.ingest.extract import ScannedPdfError

MAX_TEXT_CHARS = 500_000  # memlane.ingest.extract.DEFAULT_MAX_CHARS

OCR_HELP = ("reading text from images needs an OCR engine: install Tesseract (apt-get install tesseract-ocr) "
            "and restart memlane, or set OPENAI_API_KEY (a vision model reads it); a deployment on AWS uses "
            "Amazon Textract. Or send the text of the image as content with content_type image")
TRANSCRIBE_HELP = ("transcribing audio and video needs OPENAI_API_KEY (OpenAI's transcription API) or the AWS "
                   "deployment (Amazon Transcribe). Or send the transcript as content with content_type {kind}")


@dataclass
class MediaSave:
    """What a media save stores: the original (for the content store), the text read from it now
    (empty when the job reads it later), and the document's fields."""

    original: bytes
    media: MediaInfo
    content_type: ContentType
    content_hash: str
    title: str
    text: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def deferred(self) -> bool:
        return self.media.pending


def can_read(svc: Services, kind: str) -> bool:
    if kind in ("image", "pdf"):
        return svc.media.ocr is not None
    return svc.media.transcriber is not None or svc.media.transcribe_in_workflow


def _refuse(kind: str, declared: ContentType | None) -> UnprocessableError:
    if kind in ("image", "pdf"):
        return UnprocessableError(f"content: {OCR_HELP}")
    shown = declared.value if declared in (ContentType.AUDIO, ContentType.VIDEO) else kind
    return UnprocessableError(f"content: {TRANSCRIBE_HELP.format(kind=shown)}")


def prepare_media(svc: Services, org_id: str, document_id: str, original: Original) -> MediaSave | None:
    """Check that the media can be read here and read it now when it is small. None: a PDF with
    scanned pages and no OCR engine, but text on its other pages (`original.text_pages`), which is
    saved as that text."""
    payload, scan = original.payload, original.scan
    if not can_read(svc, payload.kind):
        if original.text_pages is not None:
            return None
        raise _refuse(payload.kind, original.content_type)
    # pixels per frame and in all (pages × pixels for a scan), from the headers: 413 before any decode
    if scan is not None:
        check_pdf_scan(scan.data, scan.scanned)
    elif payload.kind == "image":
        check_image(payload.data)
    media = MediaInfo(kind=payload.kind, mime=payload.mime, bytes=len(payload.data),
                      blob_key=media_key(org_id, document_id), pages=len(scan.page_texts) if scan else None)
    save = MediaSave(payload.data, media, original.content_type, original.content_hash, original.title,
                     metadata=dict(original.metadata))
    _read_if_small(svc, save, original, org_id)
    return save


def _read_if_small(svc: Services, save: MediaSave, original: Original, org_id: str) -> None:
    """Read in the request what has few pages (Settings.ocr_inline_pages) and fits today's OCR
    budget; the job reads the rest, and every recording."""
    small = svc.settings.ocr_inline_pages
    if original.scan is not None:
        if len(original.scan.scanned) > small:
            return
        read = partial(_read_scan, svc, original.scan)
    elif original.payload.kind == "image":
        pages = page_images(original.payload)  # a bad image is a 400 now, whenever it is read
        if len(pages) > small:
            return
        read = partial(_read_images, svc, pages)
    else:
        return
    with suppress(MediaBudgetDeferred):  # over today's OCR budget: queued, the worker reads it later
        save.text, save.media = read(save.media, org_id)
        save.title = original.named or derive_title_from(save.text, save.media)


def derive_title_from(text: str, media: MediaInfo) -> str:
    from memlane.ingest.extract import Extracted

    title = derive_title(Extracted(text=text, content_type=ContentType.TEXT), None)
    return title if title != "Untitled" else placeholder_title(media.kind, media.mime)


# --------------------------------------------------------------------------- reading


def _ocr(svc: Services):  # noqa: ANN202 - the ImageReader port
    if svc.media.ocr is None:
        raise MemlaneError(OCR_HELP)
    return svc.media.ocr


# What reading one page costs, reserved before the work (memlane.documents.media_budget.reserved):
# Textract bills a page; Tesseract takes about 2 s a page (a 65 KB scan of 12 pages: 24 s).
OCR_SECONDS_PER_PAGE = 2.0


@contextmanager
def _ocr_reserved(svc: Services, reader, pages: int, org_id: str) -> Iterator[None]:  # noqa: ANN001 - ImageReader
    """OCR of `pages` pages (their decoding included), its estimate reserved before it starts and
    settled to what it cost: engine seconds, or Textract pages. MediaBudgetDeferred when it does
    not fit today's budget."""
    meter = media_budget.ocr_meter(reader.id)
    by_pages = meter == "textract_pages"
    estimate = float(pages) * (1.0 if by_pages else OCR_SECONDS_PER_PAGE)
    with media_budget.reserved(svc, org_id, meter, estimate) as cost:
        started = time.monotonic()
        try:
            yield
        finally:
            cost(float(pages) if by_pages else time.monotonic() - started)


def _read_pages(reader, pages: list[bytes]) -> list[str]:  # noqa: ANN001 - ImageReader
    return [reader.read_text(page) for page in pages]


def _read_images(svc: Services, pages: list[bytes], media: MediaInfo, org_id: str) -> tuple[str, MediaInfo]:
    reader = _ocr(svc)
    with _ocr_reserved(svc, reader, len(pages), org_id):
        text, _ = join_pages(_read_pages(reader, pages))
    if not text.strip():
        raise InvalidInputError("content", "no text could be read from the image")
    return _trim(text), media.model_copy(update={"extracted_by": reader.id, "pages": len(pages)})


def _read_scan(svc: Services, scan: ScannedPdfError, media: MediaInfo, org_id: str) -> tuple[str, MediaInfo]:
    reader = _ocr(svc)
    texts = list(scan.page_texts)
    with _ocr_reserved(svc, reader, min(len(scan.scanned), MAX_PAGES), org_id):
        images = page_images(scan.data, pdf_pages=scan.scanned)
        read = _read_pages(reader, images)
    for number, text in zip(scan.scanned, read, strict=False):
        texts[number] = text
    text, _ = join_pages(texts)
    if not text.strip():
        raise InvalidInputError("content", "no text could be read from the scanned PDF")
    return _trim(text), media.model_copy(update={"extracted_by": reader.id})


def _trim(text: str) -> str:
    return text[:MAX_TEXT_CHARS]


def complete_pending(svc: Services, doc: Document) -> Document:
    """Read a queued media document's original and store the text (the job's first stage; the
    writer then summarizes, chunks and indexes it). Raises what stopped it: TransientError when
    the engine is down (the job retries), MemlaneError otherwise (the document fails)."""
    media = doc.media
    if media is None or not media.pending:
        return doc
    # The original is read from the key of the document's own organization and id, never from the
    # key its record names: an imported record (memlane.services.transfer) may name another's.
    data = svc.blobs.get(media_key(doc.organization_id, doc.id))
    if data is None:
        raise MemlaneError(f"the original of document {doc.id} is missing from the content store")
    if media.kind == "image":
        text, media = _read_images(svc, page_images(MediaPayload(data, media.mime, media.kind)), media,
                                   doc.organization_id)
    elif media.kind == "pdf":
        from memlane.ingest.extract import ScannedPdfError, extract

        try:
            extract(data, ContentType.PDF)
        except ScannedPdfError as scan:
            text, media = _read_scan(svc, scan, media, doc.organization_id)
        else:  # nothing left to OCR (cannot happen for a document saved as a scan)
            text = extract(data, ContentType.PDF).text
            media = media.model_copy(update={"extracted_by": "pdf"})
    else:
        if svc.media.transcriber is None:
            raise MemlaneError(TRANSCRIBE_HELP.format(kind=doc.content_type.value))
        started = time.monotonic()
        try:
            transcript = svc.media.transcriber.transcribe(data, media.mime)
        finally:
            media_budget.charge(svc, doc.organization_id, media_budget.transcribe_meter(svc.media.transcriber.id),
                                time.monotonic() - started)
        return apply_transcript(svc, doc, transcript, svc.media.transcriber.id)
    return _store_text(svc, doc, text, media)


def apply_transcript(svc: Services, doc: Document, transcript: Transcript, engine: str) -> Document:
    """A transcript becomes the document's text; its segments keep their times (chunk time ranges)."""
    assert doc.media is not None
    text, segments = transcript_text(transcript)
    if not text.strip():
        raise InvalidInputError("content", "the recording has no speech to transcribe")
    media = doc.media.model_copy(update={"extracted_by": engine, "segments": segments,
                                         "duration_s": transcript.duration, "language": transcript.language})
    return _store_text(svc, doc, _trim(text), media)


def _store_text(svc: Services, doc: Document, text: str, media: MediaInfo) -> Document:
    title = doc.title
    if title == placeholder_title(media.kind, media.mime):
        title = derive_title_from(text, media)
    updated = doc.model_copy(update={"content": text, "title": title, "media": media})
    svc.metadata.put_document(updated)
    return updated


__all__ = ["MediaSave", "apply_transcript", "can_read", "complete_pending", "prepare_media"]
