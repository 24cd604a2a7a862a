"""Finding 3: media work is bounded at the save, from the file's headers, before anything is
decoded: one page or frame at most 60 megapixels (Pillow alone let 120 through), a scan or TIFF
at most 300 pages and pages × pixels bounded (12 pages sharing one picture cost 12 pictures).
Each is a 413 with a message; the OCR engine is never called.

Issue 34, finding 3: what is counted is what is decoded. A page's pictures inside form XObjects
(to any depth), under several names, beside a 1-pixel picture on the page, all count; one picture
a page is decoded, the one the bound counted."""

from __future__ import annotations

import base64
import io
import json

import pytest
from crafted_pdf import pdf_with_pictures_in_forms
from fakes import HashEmbedder
from PIL import Image
from pypdf import PdfReader, PdfWriter

from memlane.api.app import MemlaneApi
from memlane.api.auth import authorizer_context
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


# --------------------------------------------------------------- issue 34, finding 3: what is decoded


def test_the_crafted_pdf_is_413_before_any_decode(media_stack, monkeypatch):
    # 300 pages (~100 KB), each showing a 7000×8000 picture through a form XObject next to a
    # 1-pixel picture on the page: counted as 300 pixels, it was queued and decoded 16.8 gigapixels
    decoded = _count_decodes(monkeypatch)
    data = pdf_with_pictures_in_forms(300, 7000, 8000)
    assert len(data) < 150_000
    with pytest.raises(PayloadTooLargeError) as err:
        save(media_stack, data, "pdf")
    assert "in all" in err.value.message and "16800.0 megapixels" in err.value.message
    assert media_stack[2].pages == 0 and decoded == []


def test_the_crafted_pdf_answers_413_over_http(media_stack):
    stack, who, _ = media_stack
    data = pdf_with_pictures_in_forms(300, 7000, 8000)
    answer = MemlaneApi(stack.services).handle(api_event(who, "POST", "/v3/memory", {
        "content": base64.b64encode(data).decode(), "content_type": "pdf"}))
    assert answer["statusCode"] == 413 and "megapixels" in json.loads(answer["body"])["error"]


@pytest.mark.parametrize("depth, names, tiny", [(1, 1, False), (4, 1, True), (2, 5, True)],
                         ids=["only-in-a-form", "four-forms-deep", "five-names"])
def test_pictures_anywhere_in_a_page_count(media_stack, depth, names, tiny):
    data = pdf_with_pictures_in_forms(12, 6000, 6000, depth=depth, names=names, tiny_on_page=tiny)
    with pytest.raises(PayloadTooLargeError) as err:
        save(media_stack, data, "pdf")
    assert "in all" in err.value.message and media_stack[2].pages == 0


def test_one_picture_a_page_is_decoded_and_read(media_stack, monkeypatch):
    # Given a 3-page scan whose picture is shown through two forms under five names, beside a
    # 1-pixel picture: pypdf's page.images decoded every one of them on every page
    decoded = _count_decodes(monkeypatch)
    data = pdf_with_pictures_in_forms(3, 1000, 800, depth=2, names=5)
    # When it is saved, the scan is read (its picture is in a form: still a scanned page)
    out = save(media_stack, data, "pdf")
    # Then each page's largest picture, and only it, was decoded and read
    assert out.status == "ready" and media_stack[2].pages == 3
    assert decoded == [(1000, 800)] * 3


def _count_decodes(monkeypatch) -> list[tuple[int, int]]:
    from pypdf.generic import _image_xobject

    decoded: list[tuple[int, int]] = []
    real = _image_xobject._xobj_to_image

    def counting(xobject, *args, **kwargs):
        decoded.append((int(xobject["/Width"]), int(xobject["/Height"])))
        return real(xobject, *args, **kwargs)

    monkeypatch.setattr(_image_xobject, "_xobj_to_image", counting)
    return decoded


def api_event(who: Principal, method: str, path: str, body: dict) -> dict:
    return {"httpMethod": method, "path": path, "resource": "/{proxy+}", "pathParameters": {"proxy": path[1:]},
            "headers": {"Content-Type": "application/json"}, "body": json.dumps(body), "isBase64Encoded": False,
            "requestContext": {"authorizer": authorizer_context(who)}}
