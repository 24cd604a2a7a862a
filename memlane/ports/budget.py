"""The media budget: what an organization has spent today on a meter (OCR seconds, transcription
seconds, Textract pages, Transcribe minutes), kept by memlane.documents.media_budget."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

Meter = Literal["ocr_seconds", "transcribe_seconds", "textract_pages", "transcribe_minutes"]


class MediaBudget(Protocol):
    def spent(self, org_id: str, meter: Meter, now: datetime) -> float: ...
    def charge(self, org_id: str, meter: Meter, amount: float, now: datetime) -> None: ...
