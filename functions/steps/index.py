"""Ingestion step `index`: Write the chunk records and upsert chunks + vectors into the search index."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.ingest import steps

handler = step_handler(steps.index)
