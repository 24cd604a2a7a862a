"""The models memlane calls: the embedder, the summarizer, and the readers of media (OCR, speech)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memlane.domain.models import ContentType


@runtime_checkable
class Embedder(Protocol):
    @property
    def id(self) -> str:
        """Names the model and dimension, e.g. 'minilm-l6-v2/384'. Stores refuse to mix ids."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...
    def embed_query(self, text: str) -> list[float]: ...


@dataclass
class Summary:
    summary: str
    metadata: dict[str, Any]  # tags, category, language, ... (spec §3.7)


class Summarizer(Protocol):
    def summarize(self, title: str, text: str, content_type: ContentType, language: str | None) -> Summary: ...


class ImageReader(Protocol):
    """OCR: the text of one page image (PNG bytes; memlane.ingest.media normalises every format
    first). Tesseract locally, an OpenAI vision model, Amazon Textract on AWS."""

    @property
    def id(self) -> str: ...

    def read_text(self, png: bytes) -> str: ...


@dataclass(frozen=True)
class TranscriptSegment:
    start: float  # seconds from the start of the recording
    end: float
    text: str


@dataclass(frozen=True)
class Transcript:
    segments: list[TranscriptSegment]
    language: str | None = None
    duration: float | None = None


class Transcriber(Protocol):
    """Speech to text with timestamps. OpenAI's transcription API in-process; Amazon Transcribe
    runs as an asynchronous job the ingestion workflow waits for (memlane.adapters.aws.transcribe)."""

    @property
    def id(self) -> str: ...

    def transcribe(self, data: bytes, mime: str) -> Transcript: ...
