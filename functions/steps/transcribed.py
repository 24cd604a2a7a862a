"""Ingestion step `transcribed`: the transcript an Amazon Transcribe job wrote becomes the text."""

from __future__ import annotations

from functools import partial

from functions.steps._step import step_handler
from memlane.adapters.aws.transcribe import transcript_from_output
from memlane.documents import workflow as steps

handler = step_handler(partial(steps.transcribed, parse=transcript_from_output))
