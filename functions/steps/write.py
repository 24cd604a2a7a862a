"""Ingestion step `write`: chunk records and search index written, the document `ready`."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.documents import workflow as steps

handler = step_handler(steps.write)
