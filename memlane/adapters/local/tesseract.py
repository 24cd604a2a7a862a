"""ImageReader with Tesseract (Debian's `tesseract-ocr`), for the embedded default: OCR on this
machine, no account, no network.

The `tesseract` command is called directly (PNG on stdin, text on stdout) rather than through a
wrapper such as pytesseract: that wrapper runs the same command through temporary files and adds
a dependency without adding anything memlane uses. The language packs installed decide what it
reads (`eng` by default; MEMLANE_OCR_LANGUAGES=eng+deu for more).
"""

from __future__ import annotations

import shutil
import subprocess

from memlane.domain.errors import MemlaneError, TransientError

TIMEOUT_S = 120.0  # one page; a 7 MB scan takes a few seconds


class TesseractReader:
    def __init__(self, command: str = "tesseract", languages: str = "eng", timeout_s: float = TIMEOUT_S) -> None:
        self.command = command
        self.languages = languages
        self.timeout_s = timeout_s

    @classmethod
    def available(cls, command: str = "tesseract") -> bool:
        return shutil.which(command) is not None

    @property
    def id(self) -> str:
        return "tesseract"

    def read_text(self, png: bytes) -> str:
        if not png:
            return ""
        try:
            done = subprocess.run(  # noqa: S603 - a fixed command; the image arrives on stdin
                [self.command, "stdin", "stdout", "-l", self.languages, "--psm", "3"],
                input=png, capture_output=True, timeout=self.timeout_s, check=False,
            )
        except FileNotFoundError as exc:
            raise MemlaneError("OCR: the tesseract command is not installed (apt-get install tesseract-ocr)") from exc
        except subprocess.TimeoutExpired as exc:
            raise TransientError(f"OCR: tesseract took longer than {self.timeout_s:g} s") from exc
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise MemlaneError(f"OCR: tesseract failed: {detail[-1] if detail else done.returncode}")
        return done.stdout.decode("utf-8", "replace").replace("\f", "\n")
