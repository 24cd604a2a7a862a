"""Ingestion step `summarize`: Summary and tags of the document (IngestPipeline.summarize), saved on it."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.ingest import steps

handler = step_handler(steps.summarize)
