"""Ingestion step `prepare`: the document `processing`, with its summary and tags; chunks go to S3."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.documents import workflow as steps

handler = step_handler(steps.prepare)
