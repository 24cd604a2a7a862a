"""Small media files for tests that save images and recordings (no fixtures on disk)."""

from __future__ import annotations

import io
import wave


def wav() -> bytes:
    """A tenth of a second of silence: a recording memlane hands to a transcriber."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 800)
    return out.getvalue()


def blank_image(pages: int = 1) -> bytes:
    """A white 64x48 PNG, or a TIFF of `pages` such pages (a scan: more than a few pages are read later)."""
    from PIL import Image

    out = io.BytesIO()
    frames = [Image.new("RGB", (64, 48), "white") for _ in range(pages)]
    frames[0].save(out, format="TIFF" if pages > 1 else "PNG", save_all=pages > 1, append_images=frames[1:])
    return out.getvalue()
