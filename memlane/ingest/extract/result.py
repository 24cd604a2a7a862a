"""What extraction returns: the clean text that is chunked and indexed, and what was learned on the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memlane.domain.models import ContentType


@dataclass(frozen=True)
class Extracted:
    """The result of extraction. `text` is what gets chunked, embedded and indexed."""

    text: str
    content_type: ContentType
    title: str | None = None
    language: str | None = None  # programming language, for code
    metadata: dict[str, Any] = field(default_factory=dict)
    page_offsets: list[int] | None = None  # PDF: where each page begins in `text`
    # `title` is the document's own heading (markdown #, <h1>/<title>, a PDF's outline or first
    # heading, an email's subject, a JSON title field), not a line of its text: it beats a file name.
    title_from_heading: bool = False
