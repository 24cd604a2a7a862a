"""What one media save may cost, checked at the save from the file's headers, before any pixel is
decoded: pixels per page, pages, and pages × pixels.

Pillow's own guard is not a cap: with `Image.MAX_IMAGE_PIXELS = N` it only warns between N and 2N
pixels and raises DecompressionBombError above 2N, so a 60-megapixel limit let 120-megapixel images
through (an 8000×8000 PNG of 76 KB was decoded and OCRed). Here the dimensions are read from the
header (`Image.open` parses headers only) and compared with the real cap, and Pillow's limit is set
to half of it (`pillow_limit`), so that its error fires at the cap too, wherever an image is
decoded. A PDF's cost is its scanned pages times the size of the picture each one shows, read from
the page's image dictionaries (`/Width`, `/Height`) without decoding a stream: 12 pages sharing
one picture are read 12 times, and cost 12 times.

What is counted is what is decoded. pypdf's `page.images` decodes every picture a page has, nested
inside form XObjects and once per name it is given (300 pages each with a 7000×8000 picture inside
a form, next to a 1-pixel picture on the page, passed as 300 pixels and decoded 16.8 gigapixels).
memlane now walks the same tree without decoding (`page_pictures`: forms to any depth, each once)
and decodes one picture a page, the largest (`largest_picture`), whose size is what the bound
counts; inline images in content streams are never decoded.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memlane.domain.errors import InvalidInputError, PayloadTooLargeError

MAX_IMAGE_PIXELS = 60_000_000  # one page or frame
MAX_PAGES = 300  # pages of a scanned PDF or frames of a TIFF that are read
MAX_TOTAL_PIXELS = 400_000_000  # pages × pixels of one save: about a hundred phone photos of pages


def pillow_limit() -> int:
    """The value for Image.MAX_IMAGE_PIXELS that makes DecompressionBombError fire at our cap."""
    return MAX_IMAGE_PIXELS // 2


@contextmanager
def bounded_pillow() -> Iterator[None]:
    """Pillow with its bomb error at MAX_IMAGE_PIXELS; its warning (half of that) is not a signal."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = pillow_limit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        yield


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1_000_000:.1f} megapixels"


def _check_pages(sizes: Sequence[tuple[int, int]], what: str) -> None:
    if len(sizes) > MAX_PAGES:
        raise PayloadTooLargeError(f"content: {what} has {len(sizes)} pages to read; at most {MAX_PAGES} are read "
                                   "in one save (split it)")
    total = 0
    for number, (width, height) in enumerate(sizes, 1):
        pixels = width * height
        if pixels > MAX_IMAGE_PIXELS:
            where = f" (page {number})" if len(sizes) > 1 else ""
            raise PayloadTooLargeError(f"content: {what}{where} is {width}×{height} = {_megapixels(pixels)}; "
                                       f"at most {_megapixels(MAX_IMAGE_PIXELS)} per page are read")
        total += pixels
    if total > MAX_TOTAL_PIXELS:
        raise PayloadTooLargeError(f"content: {what} has {len(sizes)} pages of {_megapixels(total)} in all; at most "
                                   f"{_megapixels(MAX_TOTAL_PIXELS)} are read in one save (split it)")


def image_sizes(data: bytes) -> list[tuple[int, int]]:
    """(width, height) of every frame that would be read (a TIFF's pages, a GIF's first frame),
    from the headers. One more than MAX_PAGES at most: enough to refuse."""
    from PIL import Image, UnidentifiedImageError

    try:
        with bounded_pillow(), Image.open(io.BytesIO(data)) as image:
            if image.format != "TIFF":
                return [image.size]
            sizes = []
            for index in range(MAX_PAGES + 1):
                try:
                    image.seek(index)
                except EOFError:
                    break
                sizes.append(image.size)
            return sizes
    except Image.DecompressionBombError:
        raise PayloadTooLargeError(f"content: the image is larger than {_megapixels(MAX_IMAGE_PIXELS)} "
                                   "per page; at most that is read") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise InvalidInputError("content", f"is not a readable image: {exc}") from exc


def check_image(data: bytes) -> None:
    """413 when reading this image (every frame of a TIFF) would cost more than one save may."""
    _check_pages(image_sizes(data), "the image")


# A page's pictures are found by walking its resources the way pypdf does (image XObjects, and
# the form XObjects that hold more, to any depth), reading dictionaries only, never a stream.
MAX_FORM_DEPTH = 16
MAX_XOBJECTS_PER_PAGE = 1000  # entries read on one page; a real scan has a handful


@dataclass(frozen=True)
class PagePicture:
    """An image XObject a page shows: where it is (the names from the page's resources down through
    forms, as pypdf's `page.images` keys it), its size from its dictionary, and the object itself."""

    path: tuple[str, ...]
    width: int
    height: int
    xobject: Any

    @property
    def pixels(self) -> int:
        return self.width * self.height


def _xobjects(holder: Any) -> Any:
    """The /XObject dictionary of a page's or a form's resources ({} when it has none)."""
    resources: Any = holder.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    xobjects: Any = resources.get("/XObject") if hasattr(resources, "get") else None
    xobjects = xobjects.get_object() if xobjects is not None else None
    return xobjects if hasattr(xobjects, "items") else {}


def page_pictures(page: Any) -> list[PagePicture]:
    """Every image XObject on `page`, in forms too, each form walked once (pypdf decodes an image
    under each name it is given; memlane decodes one picture a page: `largest_picture`)."""
    found: list[PagePicture] = []
    seen: set[int] = set()
    budget = [MAX_XOBJECTS_PER_PAGE]

    def walk(holder: Any, path: tuple[str, ...]) -> None:
        for name, ref in list(_xobjects(holder).items()):
            if budget[0] <= 0:
                return
            budget[0] -= 1
            obj = ref.get_object()
            subtype = obj.get("/Subtype")
            if subtype == "/Image":
                width, height = obj.get("/Width", 0), obj.get("/Height", 0)
                if isinstance(width, int) and isinstance(height, int):
                    found.append(PagePicture((*path, str(name)), max(0, width), max(0, height), obj))
            elif subtype == "/Form" and len(path) < MAX_FORM_DEPTH and id(obj) not in seen:
                seen.add(id(obj))
                walk(obj, (*path, str(name)))

    try:
        walk(page, ())
    except Exception:  # noqa: BLE001 - a malformed dictionary shows no (more) pictures
        return found
    return found


def largest_picture(page: Any) -> PagePicture | None:
    """The picture a scanned page is read from: its largest (a scan is one full-page picture)."""
    return max(page_pictures(page), key=lambda p: p.pixels, default=None)


def pdf_scan_sizes(pdf: bytes, pages: Sequence[int]) -> list[tuple[int, int]]:
    """For each scanned page that would be read, the size of the picture that is decoded there."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    out = []
    for number in pages[: MAX_PAGES + 1]:
        try:
            picture = largest_picture(reader.pages[number])
        except (IndexError, KeyError):
            picture = None
        out.append((picture.width, picture.height) if picture is not None else (0, 0))
    return out


def check_pdf_scan(pdf: bytes, pages: Sequence[int]) -> None:
    """413 when OCR of these scanned pages would cost more than one save may."""
    if len(pages) > MAX_PAGES:
        raise PayloadTooLargeError(f"content: the PDF has {len(pages)} scanned pages; at most {MAX_PAGES} are read "
                                   "in one save (split it)")
    _check_pages(pdf_scan_sizes(pdf, pages), "the scanned PDF")
