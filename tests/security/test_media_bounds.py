"""Finding 3: media work is bounded at the save, from the file's headers, before anything is
decoded: one page or frame at most 60 megapixels (Pillow alone let 120 through), a scan or TIFF
at most 300 pages and pages × pixels bounded (12 pages sharing one picture cost 12 pictures).
Each is a 413 with a message; the OCR engine is never called."""

from __future__ import annotations

import base64
import io

import pytest
from fakes import HashEmbedder
from PIL import Image
from pypdf import PdfReader, PdfWriter

from memlane.config import Settings
from memlane.domain.errors import PayloadTooLargeError
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.ingest import media_bounds
from memlane.local.compose import build_local
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory


class CountingReader:
    id = "counting"

    def __init__(self) -> None:
        self.pages = 0

    def read_text(self, png: bytes) -> str:
        self.pages += 1
        return "a page of text"


@pytest.fixture
def media_stack(tmp_path):
    reader = CountingReader()
    s = build_local(Settings(data_dir=tmp_path / "d"), embedder=HashEmbedder(), media_readers=(reader, None))
    org, _ = ensure_organization(s.metadata, "acme")
    yield s, Principal(organization_id=org.id, key_id="k"), reader
    s.close()


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("1", (width, height), 1).save(out, "PNG")
    return out.getvalue()


def tiff(frames: int, width: int, height: int) -> bytes:
    images = [Image.new("1", (width, height), 1) for _ in range(frames)]
    out = io.BytesIO()
    images[0].save(out, "TIFF", save_all=True, append_images=images[1:], compression="group4")
    return out.getvalue()


def pdf_sharing_one_picture(pages: int, width: int, height: int) -> bytes:
    one = io.BytesIO()
    Image.new("1", (width, height), 1).save(one, "PDF")
    reader, writer = PdfReader(io.BytesIO(one.getvalue())), PdfWriter()
    for _ in range(pages):
        writer.add_page(reader.pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def save(stack_who, data: bytes, content_type: str):
    stack, who, _ = stack_who
    return save_memory(stack.services, who, MemoryIn(content=base64.b64encode(data).decode(),
                                                     content_type=content_type))


@pytest.mark.parametrize("data, words", [
    (png(8000, 8000), "60.0 megapixels"),  # between Pillow's warning and its error: was decoded
    (png(11000, 11000), "megapixels"),  # above twice the limit
    (tiff(10, 7000, 7000), "in all"),  # every frame under the cap, the frames together over
    (tiff(301, 10, 10), "301 pages"),
], ids=["8000x8000-png", "11000x11000-png", "tiff-pixels", "tiff-pages"])
def test_image_bombs_are_413_before_ocr(media_stack, data, words):
    with pytest.raises(PayloadTooLargeError) as err:
        save(media_stack, data, "image")
    assert words in err.value.message and err.value.message.startswith("content:")
    assert media_stack[2].pages == 0


@pytest.mark.parametrize("data, words", [
    (pdf_sharing_one_picture(12, 6000, 6000), "in all"),
    (pdf_sharing_one_picture(301, 20, 20), "301 scanned pages"),
], ids=["12-pages-one-picture", "301-pages"])
def test_pdf_bombs_are_413_before_ocr(media_stack, data, words):
    with pytest.raises(PayloadTooLargeError) as err:
        save(media_stack, data, "pdf")
    assert words in err.value.message
    assert media_stack[2].pages == 0


def test_pillow_itself_refuses_at_the_real_cap():
    with media_bounds.bounded_pillow(), pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(png(8000, 8000))).load()


def test_an_image_within_bounds_is_read(media_stack):
    out = save(media_stack, png(1000, 800), "image")
    assert out.id and media_stack[2].pages == 1


def test_the_http_answer_is_413_with_the_message(secure_server):
    # The bound is checked before any reader is asked (the server's own OCR, if any, is never reached)
    with secure_server.client() as c:
        r = c.post("/v3/memory", json={"content": base64.b64encode(png(8000, 8000)).decode(),
                                       "content_type": "image"})
    assert r.status_code == 413 and "megapixels" in r.json()["error"]
