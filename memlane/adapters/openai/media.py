"""OpenAI for media: a vision model reads images (spec §3.2: "send image to GPT-4o with 'Extract
all text from this image'"), the transcription API turns audio and video into timed segments.

Retries are memlane's (memlane.retry), as for the embedder: transient failures (429, 5xx,
timeouts) are retried with backoff and then raise DependencyUnavailableError, which the caller's
job retries; anything else is a MemlaneError that fails the document with the reason.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from typing import Any

import openai

from memlane.adapters.openai.embedder import (
    describe_openai_error,
    is_transient_openai_error,
    openai_client,
)
from memlane.domain.errors import DependencyUnavailableError, MemlaneError, TransientError
from memlane.ports import Transcript, TranscriptSegment
from memlane.retry import DEFAULT_DELAYS, call_with_retries

VISION_MODEL = "gpt-4o-mini"
TRANSCRIPTION_MODEL = "whisper-1"  # the model whose verbose_json carries segment timestamps
OCR_PROMPT = ("Extract all text from this image. Answer with the text only, line by line as it appears; "
              "answer with nothing if there is no text.")
OCR_MAX_TOKENS = 4096
_EXTENSIONS = {"audio/mpeg": "mp3", "audio/wav": "wav", "audio/flac": "flac", "audio/ogg": "ogg",
               "audio/mp4": "m4a", "video/mp4": "mp4", "video/quicktime": "mov", "video/webm": "webm"}


class _OpenAIMedia:
    def __init__(self, client: openai.OpenAI | None = None, *, api_key: str | None = None, model: str,
                 retry_delays: Sequence[float] = DEFAULT_DELAYS,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._client = client
        self._api_key = api_key
        self._model = model
        self._retry_delays = tuple(retry_delays)
        self._sleep = sleep

    def _call(self, what: str, fn: Callable[[openai.OpenAI], Any]) -> Any:
        client = self._client = self._client or openai_client(self._api_key)
        try:
            return call_with_retries(lambda: fn(client), delays=self._retry_delays,
                                     is_transient=is_transient_openai_error, sleep=self._sleep, operation=what)
        except TransientError as exc:
            cause = exc.__cause__ or exc
            raise DependencyUnavailableError(f"{what} unavailable: {describe_openai_error(cause)}") from cause
        except openai.OpenAIError as exc:
            raise MemlaneError(f"{what} failed: {describe_openai_error(exc)}") from exc


class OpenAIVisionReader(_OpenAIMedia):
    """ImageReader with a vision model through chat completions (the image as a data URL)."""

    def __init__(self, client: openai.OpenAI | None = None, *, model: str = VISION_MODEL, **kwargs: Any) -> None:
        super().__init__(client, model=model, **kwargs)

    @property
    def id(self) -> str:
        return f"openai:{self._model}"

    def read_text(self, png: bytes) -> str:
        if not png:
            return ""
        url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        response = self._call("OpenAI vision", lambda c: c.chat.completions.create(
            model=self._model, max_tokens=OCR_MAX_TOKENS, temperature=0,
            messages=[{"role": "user", "content": [
                {"type": "text", "text": OCR_PROMPT},
                {"type": "image_url", "image_url": {"url": url, "detail": "high"}},
            ]}]))
        if not response.choices:
            raise MemlaneError("OpenAI vision returned no answer")
        return response.choices[0].message.content or ""


class OpenAITranscriber(_OpenAIMedia):
    """Transcriber with OpenAI's transcription API (`verbose_json`: segments with start and end)."""

    def __init__(self, client: openai.OpenAI | None = None, *, model: str = TRANSCRIPTION_MODEL,
                 **kwargs: Any) -> None:
        super().__init__(client, model=model, **kwargs)

    @property
    def id(self) -> str:
        return f"openai:{self._model}"

    def transcribe(self, data: bytes, mime: str) -> Transcript:
        name = f"recording.{_EXTENSIONS.get(mime, 'bin')}"
        response = self._call("OpenAI transcription", lambda c: c.audio.transcriptions.create(
            model=self._model, file=(name, data, mime), response_format="verbose_json",
            timestamp_granularities=["segment"]))
        return transcript_from_verbose_json(response if isinstance(response, dict) else response.model_dump())


def transcript_from_verbose_json(body: dict[str, Any]) -> Transcript:
    """OpenAI's verbose_json: {text, language, duration, segments: [{start, end, text}, …]}. A
    response without segments keeps its text as one segment over the whole duration."""
    duration = float(body.get("duration") or 0.0) or None
    segments = [TranscriptSegment(float(s.get("start", 0.0)), float(s.get("end", 0.0)), str(s.get("text", "")))
                for s in body.get("segments") or []]
    if not segments and str(body.get("text") or "").strip():
        segments = [TranscriptSegment(0.0, duration or 0.0, str(body["text"]))]
    return Transcript(segments=segments, language=body.get("language"), duration=duration)
