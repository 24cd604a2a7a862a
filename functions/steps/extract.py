"""Ingestion step `extract`: Stage the document's cleaned text in S3 and mark it processing."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.ingest import steps

handler = step_handler(steps.extract)
