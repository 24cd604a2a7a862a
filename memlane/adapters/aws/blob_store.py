"""S3 implementation of BlobStore: raw and cleaned content by key.

Encryption is the bucket's default (SSE-S3 or SSE-KMS set by the CDK stack), so no per-request
header is sent; a bucket policy that demands one would be the place to change that.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws._boto import error_code, is_transient, new_client
from memlane.domain.errors import TransientError

_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


class S3BlobStore:
    def __init__(self, bucket: str, client: Any | None = None) -> None:
        self.bucket = bucket
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = new_client("s3")
        return self._client

    def put(self, key: str, data: bytes) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        except ClientError as exc:
            raise _translate(exc, f"s3 put {key}") from exc

    def get(self, key: str) -> bytes | None:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in _MISSING_CODES:
                return None
            raise _translate(exc, f"s3 get {key}") from exc
        body = response["Body"]
        try:
            return bytes(body.read())
        finally:
            body.close()

    def delete(self, key: str) -> None:
        # S3 answers 204 for a key that is not there, so deleting twice is harmless.
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            raise _translate(exc, f"s3 delete {key}") from exc


def _translate(exc: ClientError, what: str) -> Exception:
    if is_transient(exc):
        return TransientError(f"{what}: {error_code(exc)}")
    return exc
