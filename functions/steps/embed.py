"""Ingestion step `embed`: embed the staged chunks (DocumentWriter.embed, Bedrock or OpenAI), resumably; vectors go to S3."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.documents import workflow as steps

handler = step_handler(steps.embed)
