"""Amazon Transcribe as an asynchronous job the ingestion workflow waits for.

No Lambda sleeps on it. The Step Functions workflow (infra/constructs/ingestion.py) starts the job
with the SDK service integration (`aws-sdk:transcribe:startTranscriptionJob`: the job name and keys
come from the Extract step, memlane.documents.workflow.extract; Transcribe detects the media format and
the language itself), then loops Wait → `getTranscriptionJob`
until the job is COMPLETED or FAILED; the Transcribed step then reads the transcript JSON the job
wrote to the content bucket and stores it (`transcript_from_output`).

Transcribe reads the recording and writes its output with the caller's permissions: the state
machine's role gets s3:GetObject on media/* and s3:PutObject on work/* of the content bucket, and
transcribe:StartTranscriptionJob / GetTranscriptionJob on memlane's job names only.
"""

from __future__ import annotations

from typing import Any

from memlane.ports import Transcript, TranscriptSegment

_SENTENCE_END = frozenset({".", "?", "!"})


def transcript_from_output(output: dict[str, Any]) -> Transcript:
    """Transcribe's output JSON: `results.audio_segments` (start_time, end_time, transcript) when
    present; otherwise sentences rebuilt from `results.items` (pronunciations with times, and
    punctuation); otherwise the whole transcript as one segment."""
    results = output.get("results") or {}
    language = results.get("language_code") or None
    segments = [TranscriptSegment(float(s["start_time"]), float(s["end_time"]), str(s.get("transcript", "")))
                for s in results.get("audio_segments") or [] if "start_time" in s]
    if not segments:
        segments = _sentences(results.get("items") or [])
    if not segments:
        text = " ".join(t.get("transcript", "") for t in results.get("transcripts") or [])
        if text.strip():
            segments = [TranscriptSegment(0.0, 0.0, text)]
    duration = max((s.end for s in segments), default=None)
    return Transcript(segments=segments, language=language, duration=duration)


def _sentences(items: list[dict[str, Any]]) -> list[TranscriptSegment]:
    out: list[TranscriptSegment] = []
    words: list[str] = []
    start = end = None
    for item in items:
        content = str(((item.get("alternatives") or [{}])[0]).get("content", ""))
        if item.get("type") == "punctuation":
            if words:
                words[-1] += content
            if content in _SENTENCE_END and words and start is not None:
                out.append(TranscriptSegment(start, end or start, " ".join(words)))
                words, start, end = [], None, None
            continue
        if start is None:
            start = float(item.get("start_time", 0.0))
        end = float(item.get("end_time", start))
        words.append(content)
    if words and start is not None:
        out.append(TranscriptSegment(start, end or start, " ".join(words)))
    return out
