"""S3 implementation of BlobStore: raw and cleaned content by key.

Encryption is the bucket's default (SSE-S3 or SSE-KMS set by the CDK stack), so no per-request
header is sent; a bucket policy that demands one would be the place to change that.

The content bucket is versioned (an overwrite can be undone), so a plain DeleteObject would only
add a delete marker and keep the content for the noncurrent-version lifetime. A memlane delete is
a forget: it lists the key's versions and delete markers and removes each of them
(s3:ListBucketVersions, s3:DeleteObjectVersion; the stack grants both with content deletes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws._boto import error_code, is_transient, lazy_client
from memlane.domain.errors import TransientError

_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
DELETE_OBJECTS_LIMIT = 1000  # DeleteObjects' maximum per request


class S3BlobStore:
    def __init__(self, bucket: str, client: Any | None = None) -> None:
        self.bucket = bucket
        self.client = lazy_client(client, "s3")

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
        """Every version of exactly this key; deleting a key that is not there is harmless."""
        self._delete_versions(v for v in self._versions(key) if v["Key"] == key)

    def delete_prefix(self, prefix: str) -> int:
        """Every version of every key under the prefix; returns how many keys were removed."""
        if not prefix:
            raise ValueError("delete_prefix needs a prefix; refusing to empty the bucket")
        versions = list(self._versions(prefix))
        self._delete_versions(versions)
        return len({v["Key"] for v in versions})

    def keys(self, prefix: str = "") -> list[str]:
        """Current keys under the prefix, in key order (the doctor's inventory)."""
        found: list[str] = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            ):
                found.extend(obj["Key"] for obj in page.get("Contents", []))
        except ClientError as exc:
            raise _translate(exc, f"s3 list {prefix}") from exc
        return found

    def versions(self, prefix: str) -> int:
        """Every version and delete marker under the prefix, current or not."""
        return sum(1 for _ in self._versions(prefix))

    def _versions(self, prefix: str) -> Iterator[dict[str, str]]:
        try:
            pages = self.client.get_paginator("list_object_versions").paginate(
                Bucket=self.bucket, Prefix=prefix
            )
            for page in pages:
                for entry in (*page.get("Versions", []), *page.get("DeleteMarkers", [])):
                    yield {"Key": entry["Key"], "VersionId": entry["VersionId"]}
        except ClientError as exc:
            raise _translate(exc, f"s3 list versions {prefix}") from exc

    def _delete_versions(self, versions: Iterator[dict[str, str]] | list[dict[str, str]]) -> None:
        batch: list[dict[str, str]] = []
        for version in versions:
            batch.append(version)
            if len(batch) == DELETE_OBJECTS_LIMIT:
                self._delete_batch(batch)
                batch = []
        if batch:
            self._delete_batch(batch)

    def _delete_batch(self, objects: list[dict[str, str]]) -> None:
        try:
            response = self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True}
            )
        except ClientError as exc:
            raise _translate(exc, f"s3 delete {objects[0]['Key']}") from exc
        errors = response.get("Errors") or []
        if errors:
            first = errors[0]
            raise TransientError(
                f"s3 delete {first.get('Key')}: {first.get('Code')} ({len(errors)} not deleted)"
            )


def _translate(exc: ClientError, what: str) -> Exception:
    if is_transient(exc):
        return TransientError(f"{what}: {error_code(exc)}")
    return exc
