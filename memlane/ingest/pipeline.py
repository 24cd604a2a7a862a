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
