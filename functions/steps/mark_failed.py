"""Ingestion step `mark_failed`: The Catch target: record on the document why ingestion failed."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.documents import workflow as steps

handler = step_handler(steps.mark_failed)
