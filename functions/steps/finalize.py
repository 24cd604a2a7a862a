"""Ingestion step `finalize`: Mark the document ready and invalidate the project's cached recalls."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.ingest import steps

handler = step_handler(steps.finalize)
