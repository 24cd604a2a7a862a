"""PDF: the text layer page by page (with where each page begins), or `ScannedPdfError` for pages
that are pictures of text."""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import Any

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import derived_title, first_line_title, normalize_whitespace
from memlane.ingest.media_bounds import page_pictures

_DATA_URL_PREFIX = re.compile(r"^data:[\w/+.-]*;base64,", re.IGNORECASE)
_JUNK_PDF_TITLES = re.compile(
    r"^(?:untitled|microsoft word - .*|.*\.(?:docx?|pdf|tex|odt|rtf|pptx?))$", re.IGNORECASE
)


def _pdf_bytes(raw: str | bytes) -> bytes:
    if isinstance(raw, bytes):
        data = raw
    elif raw.lstrip().startswith("%PDF-"):
        data = raw.encode("latin-1", errors="replace")
    else:
        encoded = "".join(_DATA_URL_PREFIX.sub("", raw.strip()).split())
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidInputError("content", "is not a PDF (expected PDF bytes or base64)") from exc
    if data.lstrip()[:5] != b"%PDF-":
        raise InvalidInputError("content", "is not a PDF (no %PDF- header)")
    return data


class ScannedPdfError(InvalidInputError):
    """A PDF with pages that are pictures of text (no text layer): those pages need OCR, which is
    not extraction's job (memlane.documents.media reads them). Carries what extraction found."""

    def __init__(
        self,
        data: bytes,
        page_texts: list[str],
        scanned: list[int],
        title: str | None,
        metadata: dict[str, Any],
    ) -> None:
        super().__init__("content", "has no text after extraction (a scanned PDF needs OCR)")
        self.data = data
        self.page_texts = page_texts
        self.scanned = scanned
        self.title = title
        self.metadata = metadata


def extract_pdf(raw: str | bytes) -> Extracted:
    from pypdf import PdfReader  # imported lazily: only PDFs need it

    data = _pdf_bytes(raw)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InvalidInputError("content", "is an encrypted PDF")
        pages = [normalize_whitespace(page.extract_text() or "") for page in reader.pages]
        info = reader.metadata
        pdf_title = str(info.title).strip() if info and info.title else ""
        outline_title = _outline_title(reader)
        pdf_author = str(info.author).strip() if info and info.author else ""
        # Pages without a text layer that carry a picture are scans of text.
        scanned = [i for i, text in enumerate(pages) if not text and _has_images(reader.pages[i])]
    except InvalidInputError:
        raise
    except Exception as exc:  # pypdf raises many unrelated types for damaged files
        raise InvalidInputError("content", f"is not a readable PDF: {exc}") from exc

    metadata: dict[str, Any] = {"pages": len(pages)}
    if pdf_author:
        metadata["author"] = pdf_author
    title = pdf_title if pdf_title and not _JUNK_PDF_TITLES.match(pdf_title) else None
    title = title or outline_title or _heading_line(next((p for p in pages if p), ""))
    if scanned:
        raise ScannedPdfError(data, pages, scanned, derived_title(title) if title else None, metadata)
    parts: list[str] = []
    offsets: list[int] = []
    length = 0
    for page_text in pages:
        if page_text and parts:
            parts.append("\n\n")
            length += 2
        offsets.append(length)
        if page_text:
            parts.append(page_text)
            length += len(page_text)
    text = "".join(parts)
    if not text.strip():
        raise InvalidInputError("content", "has no text after extraction")
    return Extracted(
        text=text,
        content_type=ContentType.PDF,
        title=(derived_title(title) if title else None) or first_line_title(text),
        title_from_heading=title is not None,
        metadata=metadata,
        page_offsets=offsets,
    )


def _outline_title(reader: Any) -> str | None:
    """The first entry of the PDF's outline (its bookmarks), when it has one."""
    try:
        for item in reader.outline:
            if not isinstance(item, list) and str(getattr(item, "title", "") or "").strip():
                return str(item.title).strip()
    except Exception:  # noqa: BLE001 - a damaged outline is no title, not an unreadable PDF
        return None
    return None


def _heading_line(page_text: str) -> str | None:
    """The first page's first line when it reads as a heading: short, with letters, not a
    sentence running on (no closing comma or full stop), not a page number or a date alone."""
    for line in page_text.splitlines()[:3]:
        line = " ".join(line.split())
        if not line:
            continue
        letters = sum(ch.isalpha() for ch in line)
        if 3 <= len(line) <= 100 and letters >= len(line) / 2 and not line.endswith((".", ",", ";")):
            return line
        return None
    return None


def _has_images(page: Any) -> bool:
    """A picture on the page, directly or inside a form (memlane.ingest.media_bounds walks both)."""
    return bool(page_pictures(page))
