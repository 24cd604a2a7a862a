"""The data directory is private to the user who runs memlane: the directory 0700, every file in it
0600, whatever the umask. Files are created with that mode from the start (never written first and
tightened afterwards), and `memlane doctor` reports and repairs anything that drifted (an install
made before this rule, a file copied in by hand).

SQLite creates `-wal`, `-shm` and `-journal` files with the mode of the database file, so creating
the database file 0600 before SQLite opens it is what keeps its companions private too."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) 0700. An existing directory is left as it is: widening
    or narrowing an operator's directory is `memlane doctor --repair`'s call, not a side effect."""
    path = Path(path)
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            return path
        os.chmod(path, DIR_MODE)  # the umask may have removed bits the owner needs
    return path


def _open_private(path: Path, flags: int) -> int:
    fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # an existing file keeps its old mode through O_CREAT
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_private_file(path: Path) -> None:
    """Make sure `path` exists as an empty 0600 file when it does not exist yet (the database file,
    before SQLite opens it). An existing file is not touched."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def open_private(path: Path) -> BinaryIO:
    """`path` opened for writing from its start (truncated), 0600 before the first byte is written:
    for writers that take a file object (NumPy's save)."""
    return os.fdopen(_open_private(Path(path), os.O_WRONLY | os.O_TRUNC), "wb")


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path`, 0600 before the first byte is written."""
    with open_private(path) as f:
        f.write(data)


def lock_file(path: Path) -> int:
    """A descriptor on `path` (created 0600 when missing) to take a lock on."""
    return _open_private(Path(path), os.O_RDWR)


def wrong_modes(data_dir: Path) -> list[str]:
    """Every path under `data_dir` (itself included) that others can read, write or enter, or that
    does not have exactly the private mode, as 'path (mode)'."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        return []
    found: list[str] = []
    for path in [data_dir, *sorted(data_dir.rglob("*"))]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = DIR_MODE if path.is_dir() else FILE_MODE
        if mode != want:
            found.append(f"{path} ({oct(mode)}, want {oct(want)})")
    return found


def repair_modes(data_dir: Path) -> list[str]:
    """Set the private modes on everything `wrong_modes` reports; returns what it changed."""
    data_dir = Path(data_dir)
    found = wrong_modes(data_dir)
    if not found:
        return []
    for path in [data_dir, *sorted(data_dir.rglob("*"))]:
        if path.is_symlink():
            continue
        os.chmod(path, DIR_MODE if path.is_dir() else FILE_MODE)
    return found
