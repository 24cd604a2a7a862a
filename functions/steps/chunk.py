"""Ingestion step `chunk`: Cut the staged text into chunks (IngestPipeline.chunk); chunks go to S3."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.ingest import steps

handler = step_handler(steps.chunk)
