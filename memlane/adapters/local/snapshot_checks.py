"""What makes a saved vector index trustworthy when it is loaded again: a checksum of every file it
names and of its manifest, recorded when it is saved and compared when it is read
(memlane.adapters.local.vector_ann for the graphs, memlane.adapters.local.search_snapshot for the
projection; memlane.adapters.local.search_index also checks both against each other and against
SQLite). A saved index that fails is *damaged*: it is discarded and rebuilt from SQLite, with a
warning and a `memlane doctor` line, never searched as it is.

CRC-32 (zlib), not a cryptographic hash: the checks are against damage (a disk, a copy cut short,
an edit by hand), at ~1.7 GB/s, a second or so for the ~1.2 GB a million chunks save; someone who
can rewrite these files can rewrite the database beside them too."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any, BinaryIO

CHECKSUM = "checksum"  # the manifest's own, over every other key
_BLOCK = 8 << 20


class SnapshotDamaged(Exception):  # noqa: N818 - a state of the saved files, handled, not raised to a caller
    """A saved index whose files or manifest fail their checks; the message says which and how."""


def file_crc(path: Path) -> str:
    crc = 0
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


class CrcWriter:
    """A binary file that keeps the CRC-32 of what is written through it (np.save writes through)."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.crc = 0

    def write(self, data: Any) -> int:
        self.crc = zlib.crc32(data, self.crc)
        return self.out.write(data)

    def flush(self) -> None:
        self.out.flush()

    @property
    def digest(self) -> str:
        return f"{self.crc:08x}"


def _manifest_crc(manifest: dict[str, Any]) -> str:
    body = json.dumps({k: v for k, v in manifest.items() if k != CHECKSUM}, sort_keys=True, separators=(",", ":"))
    return f"{zlib.crc32(body.encode()):08x}"


def sealed(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with its own checksum."""
    return {**manifest, CHECKSUM: _manifest_crc(manifest)}


def check_manifest(manifest: dict[str, Any], what: str) -> None:
    if manifest.get(CHECKSUM) != _manifest_crc(manifest):
        raise SnapshotDamaged(f"the {what} manifest does not match its checksum")


def check_file(path: Path, expected: str | None, what: str) -> None:
    if expected is None:
        raise SnapshotDamaged(f"the {what} manifest records no checksum for {path.name}")
    if not path.is_file():
        raise SnapshotDamaged(f"{path.name}, named by the {what} manifest, is missing")
    if file_crc(path) != expected:
        raise SnapshotDamaged(f"{path.name} does not match its checksum")
