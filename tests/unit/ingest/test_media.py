"""Images, scanned PDFs, audio and video saved through the one save path: OCR with Tesseract on
images these tests render with known words, transcription through OpenAI's API (its SDK, with a
scripted transport answering the documented verbose_json shape), and what happens with no engine."""

from __future__ import annotations

import base64
import io
import json
import shutil
import wave
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import openai
import pytest
from fakes import FixedClock, HashEmbedder
from PIL import Image, ImageDraw, ImageFont

from bench.nlp import tiny_pdf
from memlane.adapters.openai.media import OpenAITranscriber, OpenAIVisionReader, transcript_from_verbose_json
from memlane.config import Settings
from memlane.domain.errors import InvalidInputError, UnprocessableError
from memlane.domain.models import ContentType, DocumentStatus, MediaInfo
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.ingest.media import MAX_MEDIA_BYTES, MediaPayload, decode_media, sniff, time_range
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import LocalStack, build_local
from memlane.local.worker import IngestWorker
from memlane.recall.service import recall
from memlane.services.keys import ensure_organization
from memlane.services.memory import get_document, save_memory

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")


def render(lines: list[str], fmt: str = "PNG", *, frames: list[list[str]] | None = None) -> bytes:
    """Black text on white, large enough for OCR; `frames` adds pages (TIFF) or frames (GIF)."""
    font = ImageFont.load_default(size=44)

    def page(text_lines: list[str]) -> Image.Image:
        image = Image.new("RGB", (1400, 110 + 80 * len(text_lines)), "white")
        draw = ImageDraw.Draw(image)
        for i, line in enumerate(text_lines):
            draw.text((50, 50 + 80 * i), line, fill="black", font=font)
        return image

    images = [page(lines)] + [page(f) for f in frames or []]
    out = io.BytesIO()
    if len(images) > 1:
        images[0].save(out, fmt, save_all=True, append_images=images[1:])
    else:
        images[0].save(out, fmt)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
def stack(tmp_path) -> Iterator[LocalStack]:
    s = build_local(Settings(data_dir=tmp_path / "d"), embedder=HashEmbedder(), summarizer=LocalSummarizer())
    s.services = replace(s.services, clock=FixedClock())
    yield s
    s.close()


@pytest.fixture
def who(stack: LocalStack) -> Principal:
    org, _ = ensure_organization(stack.metadata, "acme")
    return Principal(organization_id=org.id, key_id="k")


def found(stack: LocalStack, who: Principal, query: str) -> list[str]:
    return [r.document_id for r in recall(stack.services, who, RecallIn(query=query, limit=20)).results]


# --------------------------------------------------------------------------- recognising media


def test_media_is_recognised_by_its_bytes_and_text_stays_text() -> None:
    # Given the signatures of each supported kind
    assert sniff(render(["x"], "PNG"))[0] == "image/png"
    assert sniff(render(["x"], "JPEG"))[0] == "image/jpeg"
    assert sniff(render(["x"], "WEBP"))[0] == "image/webp"
    assert sniff(render(["x"], "GIF"))[0] == "image/gif"
    assert sniff(render(["x"], "TIFF"))[0] == "image/tiff"
    assert sniff(b"ID3\x04\x00" + b"\x00" * 20) == ("audio/mpeg", "audio")
    # When content arrives base64 without a content type, or as a data URL
    png = render(["hello"])
    assert decode_media(b64(png), None).kind == "image"
    assert decode_media("data:image/png;base64," + b64(png), None).mime == "image/png"
    # Then text is never mistaken for media: a transcript with content_type video, or plain words
    assert decode_media("We agreed to ship on Friday.", ContentType.VIDEO) is None
    assert decode_media("test", ContentType.IMAGE) is None  # decodes as base64, but is no image
    assert decode_media("Meeting notes", None) is None
    # and an image type that is something else is refused naming the field
    with pytest.raises(InvalidInputError, match="content: is audio/mpeg, not an image"):
        decode_media(b64(b"ID3\x04\x00" + b"\x00" * 200), ContentType.IMAGE)


@pytest.mark.parametrize(("head", "expected"), [
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 8, ("image/png", "image")),
    (b"\xff\xd8\xff\xe0", ("image/jpeg", "image")),
    (b"GIF87a", ("image/gif", "image")), (b"GIF89a", ("image/gif", "image")),
    (b"II*\x00", ("image/tiff", "image")), (b"MM\x00*", ("image/tiff", "image")),
    (b"RIFF\x10\x00\x00\x00WEBPVP8 ", ("image/webp", "image")),
    (b"%PDF-1.7", ("application/pdf", "pdf")),
    (b"RIFF\x10\x00\x00\x00WAVEfmt ", ("audio/wav", "audio")),
    (b"fLaC", ("audio/flac", "audio")), (b"OggS", ("audio/ogg", "audio")),
    (b"ID3\x04", ("audio/mpeg", "audio")), (b"\xff\xfb\x90", ("audio/mpeg", "audio")),
    (b"\x00\x00\x00\x20ftypM4A \x00", ("audio/mp4", "audio")),
    (b"\x00\x00\x00\x20ftypM4B \x00", ("audio/mp4", "audio")),
    (b"\x00\x00\x00\x14ftypqt  \x00", ("video/quicktime", "video")),
    (b"\x00\x00\x00\x18ftypisom", ("video/mp4", "video")), (b"\x00\x00\x00\x18ftyp", ("video/mp4", "video")),
    (b"\x1a\x45\xdf\xa3\x01", ("video/webm", "video")),
    # and what is none of them: RIFF of another kind, a lone 0xFF, a 0xFF whose next byte is no
    # frame sync, text, nothing
    (b"RIFF\x10\x00\x00\x00AVI ", None), (b"\xff", None), (b"\xff\xd0", None), (b"Meeting notes", None),
    (b"", None),
])
def test_each_signature_names_its_mime_type_and_kind(head, expected) -> None:
    assert sniff(head) == expected


def test_what_content_type_and_bytes_a_save_may_carry() -> None:
    png, mp3 = render(["x"]), b"ID3\x04\x00" + b"\x00" * 200
    # a declared text type is never media; a data URL must decode and be media
    assert decode_media(b64(png), ContentType.MARKDOWN) is None
    with pytest.raises(InvalidInputError, match="content: is a data URL whose base64 does not decode"):
        decode_media("data:image/png;base64,@@@@", None)
    with pytest.raises(InvalidInputError, match="content: is not a recognised file"):
        decode_media("data:text/plain;base64," + b64(b"plain words, not media"), None)
    # base64 that is no media: text, unless it is long and declared an image
    assert decode_media(b64(b"just some words here"), ContentType.AUDIO) is None
    with pytest.raises(InvalidInputError, match="content: is not a recognised image"):
        decode_media(b64(b"x" * 100), ContentType.IMAGE)
    # a PDF is left to extraction; an image saved as a recording is refused naming the right type
    assert decode_media(b64(b"%PDF-1.4\n" + b"x" * 100), None) is None
    with pytest.raises(InvalidInputError, match="content: is image/png, not a recording; save it with content_type image"):
        decode_media(b64(png), ContentType.VIDEO)
    assert decode_media(b64(mp3), ContentType.VIDEO) == MediaPayload(mp3, "audio/mpeg", "audio")
    # and media past the size a request can carry is refused with both sizes
    big = b"ID3\x04" + b"\x00" * (MAX_MEDIA_BYTES + 1)
    with pytest.raises(InvalidInputError, match=f"is {len(big)} bytes of media; at most {MAX_MEDIA_BYTES}"):
        decode_media(b64(big), None)


# --------------------------------------------------------------------------- OCR, locally


@needs_tesseract
@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "TIFF"])
def test_an_image_saved_locally_is_read_and_found_by_its_words(stack, who, fmt) -> None:
    # Given an image whose only text is known
    image = render(["Invoice 4471 from Brightwater Plumbing", "Total due: 318 euros"], fmt)
    # When it is saved base64 as an image
    out = save_memory(stack.services, who, MemoryIn(content=b64(image), content_type="image"))
    # Then it is processed in the request, titled by its first line, and found by its words
    assert out.status == DocumentStatus.READY and out.content_type == ContentType.IMAGE
    doc = get_document(stack.services, who, out.id)
    assert "Brightwater" in doc.content and "318" in doc.content
    assert doc.title.startswith("Invoice 4471")
    assert doc.media.kind == "image" and doc.media.extracted_by == "tesseract"
    assert out.id in found(stack, who, "Brightwater plumbing invoice")
    # and the image itself is kept, byte for byte, in the content store
    assert stack.services.blobs.get(f"media/{who.organization_id}/{out.id}") == image


@needs_tesseract
def test_a_gif_is_read_from_its_first_frame_only_and_a_tiff_from_every_page(stack, who) -> None:
    gif = render(["Greenhouse vent schedule"], "GIF", frames=[["Submarine periscope manual"]])
    tiff = render(["Page one mentions the lighthouse"], "TIFF", frames=[["Page two mentions the windmill"]])
    gif_doc = get_document(stack.services, who,
                           save_memory(stack.services, who, MemoryIn(content=b64(gif), content_type="image")).id)
    tiff_doc = get_document(stack.services, who,
                            save_memory(stack.services, who, MemoryIn(content=b64(tiff), content_type="image")).id)
    assert "Greenhouse" in gif_doc.content and "Submarine" not in gif_doc.content
    assert "lighthouse" in tiff_doc.content and "windmill" in tiff_doc.content and tiff_doc.media.pages == 2


@needs_tesseract
def test_a_scanned_pdf_is_read_by_ocr_and_found_by_its_words(stack, who) -> None:
    # Given a PDF whose page is a picture of text (no text layer), as a scanner makes
    scan = io.BytesIO()
    Image.open(io.BytesIO(render(["Lease agreement for Harbour Street 12", "Rent: 950 per month"]))).save(scan, "PDF")
    # When it is saved as a PDF
    out = save_memory(stack.services, who, MemoryIn(content=b64(scan.getvalue()), content_type="pdf"))
    # Then the scan is read by OCR and found by its words; the PDF is kept
    doc = get_document(stack.services, who, out.id)
    assert out.status == DocumentStatus.READY and doc.content_type == ContentType.PDF
    assert "Harbour" in doc.content and doc.media.kind == "pdf" and doc.media.extracted_by == "tesseract"
    assert out.id in found(stack, who, "harbour street lease rent")
    # and the same scan again is the same document (deduplicated by its bytes)
    again = save_memory(stack.services, who, MemoryIn(content=b64(scan.getvalue()), content_type="pdf"))
    assert again.duplicate and again.id == out.id


def test_without_an_ocr_engine_an_image_gets_a_422_that_says_what_to_configure(tmp_path) -> None:
    stack = build_local(Settings(data_dir=tmp_path / "none"), embedder=HashEmbedder(),
                        summarizer=LocalSummarizer(), media_readers=(None, None))
    org, _ = ensure_organization(stack.metadata, "acme")
    who = Principal(organization_id=org.id, key_id="k")
    try:
        with pytest.raises(UnprocessableError, match="tesseract-ocr.*OPENAI_API_KEY"):
            save_memory(stack.services, who, MemoryIn(content=b64(render(["x"])), content_type="image"))
        with pytest.raises(UnprocessableError, match="OPENAI_API_KEY.*Amazon Transcribe.*content_type audio"):
            save_memory(stack.services, who, MemoryIn(content=b64(wav_bytes()), content_type="audio"))
        # and nothing was stored for either
        assert stack.services.blobs.keys("media/") == []
        # while the text of an image or a transcript is saved as before
        out = save_memory(stack.services, who, MemoryIn(content="Whiteboard: deploy on Thursday", content_type="image"))
        video = save_memory(stack.services, who,
                            MemoryIn(content="Speaker 1: the launch moves to May.", content_type="video"))
        assert out.status == video.status == DocumentStatus.READY
    finally:
        stack.close()


def text_and_scan_pdf(line: str, scanned: list[str]) -> bytes:
    """A PDF whose first page has a text layer (`line`) and whose second is a picture of text."""
    from pypdf import PdfReader, PdfWriter

    scan = io.BytesIO()
    Image.open(io.BytesIO(render(scanned))).save(scan, "PDF")
    writer = PdfWriter()
    for part in (tiny_pdf([line]), scan.getvalue()):
        for page in PdfReader(io.BytesIO(part)).pages:
            writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_without_an_ocr_engine_a_scan_is_saved_as_the_text_of_its_other_pages(tmp_path) -> None:
    # Given no OCR engine, and a PDF of one typed page and one scanned page
    stack = build_local(Settings(data_dir=tmp_path / "none"), embedder=HashEmbedder(),
                        summarizer=LocalSummarizer(), media_readers=(None, None))
    org, _ = ensure_organization(stack.metadata, "acme")
    who = Principal(organization_id=org.id, key_id="k")
    pdf = b64(text_and_scan_pdf("Harbour lease terms and the rent", ["Signed by both parties"]))
    try:
        # When it is saved
        out = save_memory(stack.services, who, MemoryIn(content=pdf, content_type="pdf"))
        # Then the typed page is what is stored, as a PDF's text, and no original is kept for OCR
        doc = get_document(stack.services, who, out.id)
        assert out.status == DocumentStatus.READY and doc.content_type == ContentType.PDF
        assert doc.content == "Harbour lease terms and the rent" and doc.media is None
        assert doc.title == "Harbour lease terms and the rent" and doc.metadata["pages"] == 2
        assert stack.services.blobs.keys("media/") == []
        # and the same PDF again is that document (deduplicated by the text it was saved as)
        again = save_memory(stack.services, who, MemoryIn(content=pdf, content_type="pdf", title="Lease"))
        assert again.duplicate and again.id == out.id
        # while a PDF of scanned pages only is refused with what to configure, and nothing is stored
        scan = io.BytesIO()
        Image.open(io.BytesIO(render(["Rent: 950 per month"]))).save(scan, "PDF")
        with pytest.raises(UnprocessableError, match="tesseract-ocr.*OPENAI_API_KEY"):
            save_memory(stack.services, who, MemoryIn(content=b64(scan.getvalue()), content_type="pdf"))
        assert stack.services.blobs.keys("media/") == []
    finally:
        stack.close()


@needs_tesseract
def test_a_scan_keeps_its_given_title_and_a_message_of_it_is_deduplicated_by_its_bytes(stack, who) -> None:
    # Given a PDF of one typed page and one scanned page, saved with a title, as a conversation's message
    pdf = b64(text_and_scan_pdf("Harbour lease terms", ["Signed by both parties"]))
    out = save_memory(stack.services, who, MemoryIn(content=pdf, content_type="pdf", title="The lease",
                                                    conversation_id="c1", metadata={"tags": ["lease"]}))
    # Then both pages are its text, the original is kept, and its title and the PDF's facts are kept
    doc = get_document(stack.services, who, out.id)
    assert out.status == DocumentStatus.READY and doc.title == "The lease"
    assert doc.content.startswith("Harbour lease terms\n\n") and "Signed" in doc.content
    assert doc.media.kind == "pdf" and doc.media.pages == 2 and doc.metadata["pages"] == 2
    assert doc.metadata["tags"] == ["lease"] and doc.conversation_id == "c1" and doc.message_index == 0
    # and the same bytes again, in another conversation, are that document: media is deduplicated by its bytes
    again = save_memory(stack.services, who, MemoryIn(content=pdf, content_type="pdf", conversation_id="c2"))
    assert again.duplicate and again.id == out.id


# --------------------------------------------------------------------------- OpenAI (scripted transport)


class ScriptedOpenAI:
    """A real openai.OpenAI client whose transport answers like the API documents."""

    def __init__(self, answer) -> None:  # noqa: ANN001 - (request) -> httpx.Response
        self.requests: list[httpx.Request] = []
        self._answer = answer

    def client(self) -> openai.OpenAI:
        def handle(request: httpx.Request) -> httpx.Response:
            request.read()
            self.requests.append(request)
            return self._answer(request)

        return openai.OpenAI(api_key="test", base_url="http://testserver/v1", max_retries=0,
                             http_client=httpx.Client(transport=httpx.MockTransport(handle)))


VERBOSE_JSON = {  # the shape of OpenAI's documented verbose_json transcription response
    "task": "transcribe", "language": "english", "duration": 14.2,
    "text": "Welcome to the budget review. The marketing spend doubles in March.",
    "segments": [
        {"id": 0, "seek": 0, "start": 0.0, "end": 3.4, "text": " Welcome to the budget review.", "tokens": [1],
         "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01},
        {"id": 1, "seek": 0, "start": 3.4, "end": 14.2, "text": " The marketing spend doubles in March.",
         "tokens": [2], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01},
    ],
}


def wav_bytes(seconds: float = 0.2) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * int(8000 * seconds))
    return out.getvalue()


def test_audio_is_transcribed_by_the_job_and_chunks_keep_their_time_range(tmp_path) -> None:
    # Given OpenAI's transcription API (scripted with its documented verbose_json answer)
    fake = ScriptedOpenAI(lambda request: httpx.Response(200, json=VERBOSE_JSON))
    stack = build_local(Settings(data_dir=tmp_path / "oa", chunk_max_tokens=8, chunk_overlap_tokens=0),
                        embedder=HashEmbedder(), summarizer=LocalSummarizer(),
                        media_readers=(None, OpenAITranscriber(fake.client(), retry_delays=())))
    org, _ = ensure_organization(stack.metadata, "acme")
    who = Principal(organization_id=org.id, key_id="k")
    try:
        # When a recording is saved, it is queued (a transcript takes a while) with its original kept
        recording = wav_bytes()
        out = save_memory(stack.services, who, MemoryIn(content=b64(recording), content_type="audio",
                                                        title="Budget review"))
        assert out.status == DocumentStatus.QUEUED
        assert stack.services.blobs.get(f"media/{org.id}/{out.id}") == recording
        IngestWorker(stack.services, stack.queue).drain()
        # Then the job transcribed it with the documented request: multipart, whisper-1, verbose_json
        (request,) = fake.requests
        assert request.url.path == "/v1/audio/transcriptions"
        body = request.content
        assert b'name="model"\r\n\r\nwhisper-1' in body and b'name="response_format"\r\n\r\nverbose_json' in body
        assert b'name="timestamp_granularities[]"\r\n\r\nsegment' in body and b"RIFF" in body
        doc = get_document(stack.services, who, out.id)
        assert doc.status == DocumentStatus.READY and doc.media.extracted_by == "openai:whisper-1"
        assert doc.content == "Welcome to the budget review.\nThe marketing spend doubles in March."
        assert doc.media.duration_s == 14.2
        # and each chunk says which part of the recording it covers
        times = {(c.start_seconds, c.end_seconds) for c in doc.chunks}
        assert (0.0, 3.4) in times and (3.4, 14.2) in times
        hit = recall(stack.services, who, RecallIn(query="marketing spend March")).results[0]
        marketing = next(c for c in hit.chunks if "marketing" in c.content)
        assert hit.document_id == out.id and (marketing.start_seconds, marketing.end_seconds) == (3.4, 14.2)
    finally:
        stack.close()


def test_openai_vision_reads_an_image_with_the_spec_prompt() -> None:
    answer = {"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "Parking permit 2291\nZone B"}}],
              "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    fake = ScriptedOpenAI(lambda request: httpx.Response(200, json=answer))
    reader = OpenAIVisionReader(fake.client(), retry_delays=())
    assert reader.read_text(b"\x89PNG fake") == "Parking permit 2291\nZone B"
    sent: dict[str, Any] = json.loads(fake.requests[0].content)
    parts = sent["messages"][0]["content"]
    assert parts[0]["text"].startswith("Extract all text from this image")
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_transcript_without_segments_is_one_segment_and_time_ranges_follow_offsets() -> None:
    t = transcript_from_verbose_json({"text": "Just this.", "duration": 2.5})
    assert [(s.start, s.end, s.text) for s in t.segments] == [(0.0, 2.5, "Just this.")]
    media = MediaInfo(kind="audio", mime="audio/wav", bytes=1, blob_key="k",
                      segments=[(0, 0.0, 3.0), (20, 3.0, 7.5), (40, 7.5, 9.0)])
    assert time_range(media, 0, 10) == (0.0, 3.0)
    assert time_range(media, 25, 45) == (3.0, 9.0)
    assert time_range(None, 0, 5) == (None, None)


@pytest.mark.parametrize("content_type", [t for t in ContentType if t is not ContentType.PDF])
def test_text_sent_with_any_content_type_is_saved_as_that_text(stack, who, content_type) -> None:
    # Given text (an OCR result, a transcript, a note…) sent with any declared type but PDF
    body = {ContentType.JSON: '{"ferry": "Zanzibar ferry at 07:15"}',
            ContentType.HTML: "<p>Zanzibar ferry at 07:15</p>",
            ContentType.EMAIL: "Subject: ferry\n\nZanzibar ferry at 07:15"}.get(content_type, "Zanzibar ferry at 07:15")
    # When it is saved, Then it is stored and its words are found (a transcript works as before media)
    out = save_memory(stack.services, who, MemoryIn(content=body, content_type=content_type))
    assert out.status == DocumentStatus.READY
    found = recall(stack.services, who, RecallIn(query="Zanzibar ferry"))
    assert [r.document_id for r in found.results] == [out.id]
