"""Ingestion step `embed`: Embed the chunks (IngestPipeline.embed, Bedrock or OpenAI); vectors go to S3."""

from __future__ import annotations

from functions.steps._step import step_handler
from memlane.ingest import steps

handler = step_handler(steps.embed)
