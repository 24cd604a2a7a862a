"""Ingestion step `extract`: media saved without its text is read (Textract OCR in this Lambda),
or a recording is handed to an Amazon Transcribe job the state machine runs."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.documents import workflow as steps

handler = step_handler(steps.extract)
