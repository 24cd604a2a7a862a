"""PDFs whose pictures hide where a count of a page's own pictures does not look: inside form
XObjects (to any depth), under several names, next to a 1-pixel picture on the page. Written with
pypdf's objects; the pictures are 1-bit and all white, so 300 pages of 7000×8000 are ~100 KB."""

from __future__ import annotations

import io
import zlib

from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
    StreamObject,
)


def _image(width: int, height: int) -> StreamObject:
    stream = StreamObject()
    stream._data = zlib.compress(b"\xff" * ((width + 7) // 8 * height), 9)
    stream.update({NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Image"),
                   NameObject("/Width"): NumberObject(width), NameObject("/Height"): NumberObject(height),
                   NameObject("/ColorSpace"): NameObject("/DeviceGray"),
                   NameObject("/BitsPerComponent"): NumberObject(1), NameObject("/Filter"): NameObject("/FlateDecode")})
    return stream


def _xobjects(names: dict) -> DictionaryObject:
    return DictionaryObject({NameObject("/XObject"): DictionaryObject({NameObject(n): r for n, r in names.items()})})


def _form(writer: PdfWriter, names: dict):
    form = DecodedStreamObject()
    form.set_data(b" ".join(f"q {n} Do Q".encode() for n in names))
    form.update({NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Form"),
                 NameObject("/BBox"): ArrayObject([NumberObject(v) for v in (0, 0, 612, 792)]),
                 NameObject("/Resources"): _xobjects(names)})
    return writer._add_object(form)


def pdf_with_pictures_in_forms(pages: int, width: int, height: int, *, tiny_on_page: bool = True,
                               depth: int = 1, names: int = 1) -> bytes:
    """`pages` pages showing one width×height picture through `depth` nested forms, under `names`
    names in the innermost one; with `tiny_on_page`, a 1-pixel picture on the page itself too."""
    writer = PdfWriter()
    big = writer._add_object(_image(width, height))
    holder = _form(writer, {f"/Im{i}": big for i in range(names)})
    for level in range(1, depth):
        holder = _form(writer, {f"/Fm{level}": holder})
    tiny = writer._add_object(_image(1, 1))
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        on_page = {"/Fm0": holder, **({"/Px": tiny} if tiny_on_page else {})}
        page[NameObject("/Resources")] = _xobjects(on_page)
        content = DecodedStreamObject()
        content.set_data(b" ".join(f"q 612 0 0 792 0 0 cm {n} Do Q".encode() for n in on_page))
        page[NameObject("/Contents")] = writer._add_object(content)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
