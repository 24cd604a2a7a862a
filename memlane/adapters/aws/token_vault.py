"""TokenVault on AWS: KMS Encrypt/Decrypt with a customer managed key the stack creates for
connections, the organization and connection as the encryption context.

The encryption context binds a sealed token to its connection (KMS refuses to decrypt it under
another context) and is recorded in CloudTrail with every Decrypt, so who read which connection's
tokens is auditable. Token sets are a few hundred bytes, well under Encrypt's 4 KB limit.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws._boto import call, error_code, lazy_client
from memlane.domain.errors import MemlaneError

_PREFIX = "kms1."
MAX_PLAINTEXT_BYTES = 4096  # KMS Encrypt's limit


class KmsTokenVault:
    def __init__(self, key_id: str, client: Any | None = None) -> None:
        if not key_id:
            raise MemlaneError("connections: no KMS key configured (MEMLANE_CONNECTIONS_KEY)")
        self.key_id = key_id
        self.client = lazy_client(client, "kms")

    def seal(self, context: Mapping[str, str], plaintext: bytes) -> str:
        if len(plaintext) > MAX_PLAINTEXT_BYTES:
            raise MemlaneError(f"connections: a secret of {len(plaintext)} bytes is over KMS's {MAX_PLAINTEXT_BYTES}")
        answer = call(self.client, "encrypt", "kms", KeyId=self.key_id, Plaintext=plaintext,
                      EncryptionContext=dict(context))
        return _PREFIX + base64.b64encode(answer["CiphertextBlob"]).decode("ascii")

    def open(self, context: Mapping[str, str], sealed: str) -> bytes:
        if not sealed.startswith(_PREFIX):
            raise MemlaneError("sealed secret: unknown format")
        try:
            answer = call(self.client, "decrypt", "kms", CiphertextBlob=base64.b64decode(sealed[len(_PREFIX):]),
                          EncryptionContext=dict(context), KeyId=self.key_id)
        except ClientError as exc:
            if error_code(exc) in ("InvalidCiphertextException", "IncorrectKeyException"):
                raise MemlaneError("sealed secret does not open with this key and context "
                                   "(another connection's secret?)") from exc
            raise
        return answer["Plaintext"]
