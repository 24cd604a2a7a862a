"""The ingestion pipeline (spec §3): extract → dedupe → chunk → embed → summarize → store.

Two halves, so bad input fails fast and the expensive part runs wherever it fits:
- `prepare` (here) runs in the request: it extracts and hashes the content, so bad input is a 400
  and identical content returns the existing document at once; `prepare_save` is its front door
  for a save, which may also carry media: the Original that an engine reads
  (memlane.documents.media), recognised and hashed here before anything reads it;
- memlane.documents.writer.DocumentWriter does the rest (summary, chunks, vectors, index, status) in
  the request for small saves, or later from the job queue (the local worker, or the AWS consumer
  and workflow), always in the same order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from memlane.domain.models import ContentType
from memlane.ingest.media import (
    MediaPayload,
    content_type_for,
    decode_media,
    join_pages,
    original_hash,
    placeholder_title,
)

if TYPE_CHECKING:  # extraction loads bs4/lxml/pypdf: imported where a save needs it (cold start)
    from memlane.ingest.extract import Extracted, ScannedPdfError


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def message_hash(text_hash: str, conversation_id: str, message_index: int | None, document_id: str) -> str:
    """The dedupe key of a conversation's message: its text at its place in its conversation. A
    message is an event, not a note: "Thanks!" said twice, or in two conversations, is two
    messages, while the same message sent again to the same place is still one. A message saved
    without its place (`message_index`) is always a new one (its own document id in the key): a
    retry of such a save is recognised by its Idempotency-Key instead."""
    place = f"{conversation_id}\x00{document_id if message_index is None else message_index}"
    return hashlib.sha256(f"{text_hash}\x00{place}".encode()).hexdigest()


def derive_title(extracted: Extracted, given: str | None) -> str:
    """The given title, unless it is a bare file name and the document has a heading of its own;
    then the extracted title; then a short first line."""
    from memlane.ingest.extract.text import first_line_title, looks_like_file_name

    if given and given.strip() and not (
        extracted.title_from_heading and extracted.content_type is not ContentType.CODE
        and looks_like_file_name(given)
    ):
        return given.strip()[:500]
    if extracted.title:
        return extracted.title[:500]
    return first_line_title(extracted.text) or "Untitled"


@dataclass
class Prepared:
    extracted: Extracted
    title: str
    content_hash: str


def prepare(
    raw: str | bytes, content_type: ContentType | None, title: str | None, source_url: str | None,
    *, title_is_name: bool = False,
) -> Prepared:
    """`title_is_name`: the title is how the source knows the item (a repository file's path), kept
    even where it looks like a bare file name that the document's own heading would beat."""
    # imported here: extraction pulls in bs4/lxml/pypdf, which only a save needs (Lambda cold start)
    from memlane.ingest.extract import extract

    extracted = extract(raw, content_type, title=title, source_url=source_url, title_is_name=title_is_name)
    return Prepared(
        extracted=extracted, title=derive_title(extracted, title), content_hash=content_hash(extracted.text)
    )


@dataclass(frozen=True)
class MessagePlace:
    """Where a conversation's message is saved: part of its text's dedupe key (`message_hash`)."""

    conversation_id: str
    message_index: int | None
    document_id: str

    def key(self, prepared: Prepared) -> Prepared:
        return replace(prepared, content_hash=message_hash(prepared.content_hash, self.conversation_id,
                                                           self.message_index, self.document_id))


@dataclass(frozen=True)
class Original:
    """Media a save carries (an image, a recording, a PDF with scanned pages) before anything reads
    it: the document keeps these bytes and is deduplicated by them, whichever engine reads them."""

    payload: MediaPayload
    content_type: ContentType
    named: str | None  # its title before it is read: the given one, or a scanned PDF's own
    metadata: dict[str, Any]  # what the file says of itself (a PDF's pages and author)
    scan: ScannedPdfError | None = None  # a PDF: its pages' text layer, and which pages are pictures
    # A scan's typed pages as text: what is saved where nobody reads scans (no OCR engine).
    text_pages: Prepared | None = None

    @property
    def content_hash(self) -> str:
        return original_hash(self.payload.data)

    @property
    def title(self) -> str:
        return self.named or placeholder_title(self.payload.kind, self.payload.mime)


def prepare_save(
    content: str, content_type: ContentType | None, title: str | None, source_url: str | None,
    place: MessagePlace | None = None,
) -> Prepared | Original:
    """A save's content, read without I/O: media as the Original an engine reads, anything else
    extracted, titled and hashed (`prepare`); a conversation's message keyed by its `place`."""
    from memlane.ingest.extract import ScannedPdfError

    payload = decode_media(content, content_type)
    if payload is not None:
        return Original(payload, content_type_for(payload, content_type), title, {})
    try:
        prepared = prepare(content, content_type, title, source_url)
    except ScannedPdfError as scan:
        return _scanned(scan, title, place)
    return place.key(prepared) if place else prepared


def _scanned(scan: ScannedPdfError, title: str | None, place: MessagePlace | None) -> Original:
    from memlane.ingest.extract import Extracted

    text_pages = None
    if any(t.strip() for t in scan.page_texts):
        text, _ = join_pages(scan.page_texts)
        extracted = Extracted(text=text, content_type=ContentType.PDF, title=scan.title, metadata=dict(scan.metadata))
        text_pages = Prepared(extracted, derive_title(extracted, title), content_hash(text))
        text_pages = place.key(text_pages) if place else text_pages
    return Original(MediaPayload(scan.data, "application/pdf", "pdf"), ContentType.PDF, title or scan.title,
                    dict(scan.metadata), scan, text_pages)
