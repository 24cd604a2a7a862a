"""Media as content (spec §3.2): images, scanned PDFs, audio and video sent base64.

What this module decides, without I/O of its own (the engines are ports: memlane.ports.ImageReader,
memlane.ports.Transcriber):

- whether a save's `content` is media at all (`decode_media`): a data URL, or base64 whose bytes
  start with a known signature. For `image`, `audio` and `video` anything else is text the client
  already extracted (an OCR result, a transcript) and is saved as before;
- the page images an OCR engine reads (`page_images`): every format normalised to PNG with Pillow,
  a GIF's first frame, each frame of a multi-page TIFF, the embedded images of a scanned PDF page;
- the text that is chunked: OCR pages joined with their page offsets, or a transcript whose
  segments keep their times, so each chunk knows the part of the recording it covers
  (`time_range`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType, Document, MediaInfo

# A decompression bomb is refused at the save, from the headers (memlane.ingest.media_bounds).
from memlane.ingest.media_bounds import (  # noqa: F401
    MAX_IMAGE_PIXELS,
    MAX_PAGES,
    PagePicture,
    bounded_pillow,
    largest_picture,
)
from memlane.ports import Transcript

# What fits a 10 MB request body once base64-encoded (4 characters per 3 bytes), with room for JSON.
MAX_MEDIA_BYTES = 7 * 1024 * 1024

MEDIA_TYPES = frozenset({ContentType.IMAGE, ContentType.AUDIO, ContentType.VIDEO})
IMAGE_FORMATS = "PNG, JPEG, WebP, GIF or TIFF"

_DATA_URL = re.compile(r"^\s*data:([\w.+-]+/[\w.+-]+)?(?:;[\w=.-]+)*;base64,", re.IGNORECASE)
# Base64 openings of the signatures below, to recognise media when no content_type is given
# without decoding every text that is saved.
_BASE64_OPENINGS = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "SUkqA", "TU0AK", "SUQz", "ZkxhQ", "T2dnU",
                    "GkXfo", "//u", "//s", "//M")
_FTYP_AT = re.compile(r"^AAAA[A-Za-z0-9+/]{2}ZnR5c")  # ....ftyp: MP4, M4A, MOV


@dataclass(frozen=True)
class MediaPayload:
    data: bytes
    mime: str
    kind: str  # image | pdf | audio | video


# Each kind's signature at the start of the file, tried in this order: (pattern, mime type, kind).
_SIGNATURES = tuple((re.compile(pattern, re.DOTALL), mime, kind) for pattern, mime, kind in (
    (rb"\x89PNG\r\n\x1a\n", "image/png", "image"),
    (rb"\xff\xd8\xff", "image/jpeg", "image"),
    (rb"GIF8[79]a", "image/gif", "image"),
    (rb"II\*\x00|MM\x00\*", "image/tiff", "image"),
    (rb"RIFF....WEBP", "image/webp", "image"),
    (rb"%PDF-", "application/pdf", "pdf"),
    (rb"RIFF....WAVE", "audio/wav", "audio"),
    (rb"fLaC", "audio/flac", "audio"),
    (rb"OggS", "audio/ogg", "audio"),
    (rb"ID3|\xff[\xe0-\xff]", "audio/mpeg", "audio"),  # an ID3 tag, or an MPEG frame's 11 sync bits
    (rb"....ftypM4[AB] ", "audio/mp4", "audio"),  # an ISO media file's brand: M4A, M4B
    (rb"....ftypqt  ", "video/quicktime", "video"),
    (rb"....ftyp", "video/mp4", "video"),
    (rb"\x1a\x45\xdf\xa3", "video/webm", "video"),  # EBML (Matroska, WebM)
))


def sniff(data: bytes) -> tuple[str, str] | None:
    """(mime type, kind) from the file's own signature; None when it is none of the known ones."""
    head = data[:16]
    return next(((mime, kind) for pattern, mime, kind in _SIGNATURES if pattern.match(head)), None)


def _b64decode(text: str) -> bytes | None:
    compact = "".join(text.split())
    if not compact or len(compact) % 4:
        return None
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None


def decode_media(content: str, declared: ContentType | None) -> MediaPayload | None:
    """The media a save carries, or None when `content` is text (for image/audio/video: the OCR
    text or transcript the client sent). PDFs are left to extraction unless they need OCR."""
    if declared is not None and declared not in MEDIA_TYPES:
        return None
    data, from_data_url = _media_bytes(content, declared)
    if data is None:
        return None  # text, as before
    found = sniff(data)
    if found is None:
        if from_data_url or declared is ContentType.IMAGE and len(data) > 64:
            raise InvalidInputError(
                "content", f"is not a recognised {'image' if declared is ContentType.IMAGE else 'file'} "
                           f"(send {IMAGE_FORMATS} images, or MP3, MP4, M4A, WAV, FLAC, OGG or WebM recordings)")
        return None
    mime, kind = found
    if kind == "pdf":
        return None  # a PDF is extracted as a PDF (memlane.ingest.extract); scans come back here
    _check_declared(mime, kind, declared, len(data))
    return MediaPayload(data=data, mime=mime, kind=kind)


def _media_bytes(content: str, declared: ContentType | None) -> tuple[bytes | None, bool]:
    """The bytes `content` may carry, and whether it is a data URL (which must be media). None:
    base64 that does not decode, or, with no content_type, text that does not open like media."""
    data_url = _DATA_URL.match(content[:200])
    if data_url:
        data = _b64decode(content[data_url.end():])
        if data is None:
            raise InvalidInputError("content", "is a data URL whose base64 does not decode")
        return data, True
    head = content[:64].lstrip()
    if declared is None and not (head.startswith(_BASE64_OPENINGS) or _FTYP_AT.match(head)):
        return None, False
    return _b64decode(content), False


def _check_declared(mime: str, kind: str, declared: ContentType | None, size: int) -> None:
    """Media of the kind its content_type says, and no larger than a request can carry."""
    if declared is ContentType.IMAGE and kind != "image":
        raise InvalidInputError("content", f"is {mime}, not an image; save it with content_type {kind}")
    if declared in (ContentType.AUDIO, ContentType.VIDEO) and kind == "image":
        raise InvalidInputError("content", f"is {mime}, not a recording; save it with content_type image")
    if size > MAX_MEDIA_BYTES:
        raise InvalidInputError("content", f"is {size} bytes of media; at most {MAX_MEDIA_BYTES} are accepted")


def original_hash(data: bytes) -> str:
    """Media is deduplicated by its bytes: the same photo saved twice is one document, whichever
    engine read it and however its OCR came out."""
    return hashlib.sha256(data).hexdigest()


def content_type_for(payload: MediaPayload, declared: ContentType | None) -> ContentType:
    if declared in MEDIA_TYPES:
        return declared
    return {"image": ContentType.IMAGE, "audio": ContentType.AUDIO}.get(payload.kind, ContentType.VIDEO)


def placeholder_title(kind: str, mime: str) -> str:
    return f"{ {'image': 'Image', 'pdf': 'Scanned PDF', 'audio': 'Recording', 'video': 'Video'}.get(kind, 'Media') } ({mime})"


# --------------------------------------------------------------------------- images


def page_images(payload_or_pdf: MediaPayload | bytes, *, pdf_pages: Sequence[int] | None = None) -> list[bytes]:
    """PNG images an OCR engine reads: one per image frame (a GIF's first frame only, every page
    of a TIFF), or for a PDF the pictures on each of `pdf_pages` (a scanned page is one picture)."""
    from PIL import Image, UnidentifiedImageError  # imported lazily: only media saves need it

    if isinstance(payload_or_pdf, bytes):
        with bounded_pillow():
            return _pdf_page_images(payload_or_pdf, pdf_pages or [])
    try:
        with bounded_pillow(), Image.open(io.BytesIO(payload_or_pdf.data)) as image:
            frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
            pages = []
            for index in range(min(frames, MAX_PAGES)):
                image.seek(index)
                pages.append(_png(image))
            return pages
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise InvalidInputError("content", f"is not a readable image: {exc}") from exc


def _png(image) -> bytes:  # noqa: ANN001 - a PIL image
    if image.mode not in ("L", "RGB"):
        image = image.convert("RGBA") if "A" in image.getbands() or image.mode == "P" else image.convert("RGB")
        if image.mode == "RGBA":  # transparent pixels over white, as a page would show them
            from PIL import Image

            background = Image.new("RGB", image.size, "white")
            background.paste(image, mask=image.getchannel("A"))
            image = background
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _pdf_page_images(pdf: bytes, pages: Sequence[int]) -> list[bytes]:
    """The largest picture on each page (a scan is one full-page picture), as PNG: the one picture
    a page's bound counted (memlane.ingest.media_bounds.largest_picture), the only one decoded."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    out: list[bytes] = []
    for number in pages[:MAX_PAGES]:
        try:
            picture = largest_picture(reader.pages[number])
        except (IndexError, KeyError):
            picture = None
        image = _decode_picture(picture) if picture is not None else None
        out.append(_png(image) if image is not None else b"")
    return out


def _decode_picture(picture: PagePicture):  # noqa: ANN202 - a PIL image or None
    """One image XObject decoded as pypdf decodes it for `page.images` (filters, colour spaces,
    masks), without pypdf first enumerating, and decoding, every picture on the page."""
    from pypdf.generic._image_xobject import _xobj_to_image

    try:
        image = _xobj_to_image(picture.xobject)[2]
        image.load()
    except Exception:  # noqa: BLE001 - an undecodable picture is skipped, like pypdf does
        return None
    return image


def join_pages(texts: Sequence[str]) -> tuple[str, list[int]]:
    """Page texts as one text with a blank line between pages, and where each page begins."""
    from memlane.ingest.extract import normalize_whitespace

    parts: list[str] = []
    offsets: list[int] = []
    length = 0
    for text in texts:
        text = normalize_whitespace(text)
        if text and parts:
            parts.append("\n\n")
            length += 2
        offsets.append(length)
        if text:
            parts.append(text)
            length += len(text)
    return "".join(parts), offsets


# --------------------------------------------------------------------------- transcripts


def transcript_text(transcript: Transcript) -> tuple[str, list[tuple[int, float, float]]]:
    """The transcript as text (one segment per line) and, per segment, where it starts in that
    text and the time range it covers."""
    lines: list[str] = []
    segments: list[tuple[int, float, float]] = []
    offset = 0
    for segment in transcript.segments:
        text = " ".join(segment.text.split())
        if not text:
            continue
        segments.append((offset, round(segment.start, 3), round(segment.end, 3)))
        lines.append(text)
        offset += len(text) + 1
    return "\n".join(lines), segments


def time_range(media: MediaInfo | None, start_offset: int, end_offset: int) -> tuple[float | None, float | None]:
    """The part of the recording a chunk (characters start_offset..end_offset of the transcript)
    covers: from the segment it starts in to the end of the last segment it reaches."""
    if media is None or not media.segments:
        return None, None
    first, last = media.segments[0][1], media.segments[0][2]
    for char_start, start, end in media.segments:  # in text order
        if char_start <= start_offset:
            first = start
        if char_start < end_offset:
            last = end
    return first, last


def chunk_times(doc: Document, start_offset: int, end_offset: int) -> dict[str, float | None]:
    """The Chunk fields a transcript's chunk carries (none for other documents)."""
    start, end = time_range(doc.media, start_offset, end_offset)
    return {"start_seconds": start, "end_seconds": end} if start is not None else {}
