"""The ingestion pipeline (spec §3): extract → dedupe → chunk → embed → summarize → store.

Two halves, so bad input fails fast and the expensive part runs wherever it fits:
- `prepare` (here) runs in the request: it extracts and hashes the content, so bad input is a 400
  and identical content returns the existing document at once;
- memlane.documents.writer.DocumentWriter does the rest (summary, chunks, vectors, index, status) in
  the request for small saves, or later from the job queue (the local worker, or the AWS consumer
  and workflow), always in the same order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlane.domain.models import ContentType

if TYPE_CHECKING:
    from memlane.ingest.extract import Extracted


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
