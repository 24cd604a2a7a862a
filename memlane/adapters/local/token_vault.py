"""TokenVault for the embedded default: AES-256-GCM with a key kept in the data directory, in a file
only its owner can read (mode 0600, created on first use).

The context (organization and connection) is the cipher's associated data, so a sealed token
copied onto another connection's record does not open. The database holds only sealed values:
a copy of memlane.sqlite3 without the key file reveals no token.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import stat
import threading
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from memlane.adapters.local.private_files import private_dir
from memlane.domain.errors import MemlaneError

KEY_FILE = "connection-secrets.key"
_PREFIX = "v1."
_NONCE_BYTES = 12


def associated_data(context: Mapping[str, str]) -> bytes:
    return json.dumps(dict(sorted(context.items())), separators=(",", ":")).encode()


class FileTokenVault:
    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / KEY_FILE
        self._key: bytes | None = None
        self._lock = threading.Lock()

    def _load_key(self) -> bytes:
        with self._lock:
            if self._key is None:
                self._key = self._read_or_create()
            return self._key

    def _read_or_create(self) -> bytes:
        private_dir(self.path.parent)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        except FileExistsError:
            mode = stat.S_IMODE(self.path.stat().st_mode)
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise MemlaneError(f"{self.path} is readable by others (mode {oct(mode)}); "
                                   f"run: chmod 600 {self.path}") from None
            key = base64.b64decode(self.path.read_bytes().strip())
            if len(key) != 32:
                raise MemlaneError(f"{self.path} does not hold a 256-bit key") from None
            return key
        key = secrets.token_bytes(32)
        with os.fdopen(fd, "wb") as f:
            f.write(base64.b64encode(key) + b"\n")
        return key

    def seal(self, context: Mapping[str, str], plaintext: bytes) -> str:
        nonce = secrets.token_bytes(_NONCE_BYTES)
        sealed = AESGCM(self._load_key()).encrypt(nonce, plaintext, associated_data(context))
        return _PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def open(self, context: Mapping[str, str], sealed: str) -> bytes:
        if not sealed.startswith(_PREFIX):
            raise MemlaneError("sealed secret: unknown format")
        raw = base64.urlsafe_b64decode(sealed[len(_PREFIX):])
        try:
            return AESGCM(self._load_key()).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], associated_data(context))
        except InvalidTag as exc:
            raise MemlaneError("sealed secret does not open with this data directory's key "
                               "(another key, or another connection's secret)") from exc
