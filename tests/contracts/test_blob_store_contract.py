"""The BlobStore contract: bytes by key, overwritten in place, listed by prefix in key order, and
deletes that leave nothing behind - on the versioned S3 bucket too, where a plain DeleteObject
would only add a delete marker over the old versions."""

from __future__ import annotations

from typing import Any

import pytest
from memory_stores import MemoryBlobStore

from memlane.adapters.aws.blob_store import S3BlobStore
from memlane.adapters.local.blob_store import SqliteBlobStore

pytestmark = pytest.mark.integration
ADAPTERS = ["sqlite", "aws", "memory"]  # the fixtures they need are in tests/contracts/conftest.py


class Store:
    def __init__(self, blobs: Any, versions: Any = None) -> None:
        self.blobs = blobs
        self._versions = versions  # every stored version of a key, where the store keeps versions

    def versions(self, prefix: str) -> list[str]:
        """What is still stored under the prefix, old versions and delete markers included."""
        return self._versions(prefix) if self._versions else self.blobs.keys(prefix)


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "sqlite":
        return Store(SqliteBlobStore(request.getfixturevalue("sqlite_db")))
    if request.param == "aws":
        s3, bucket = request.getfixturevalue("s3"), request.getfixturevalue("bucket")

        def versions(prefix: str) -> list[str]:
            page = s3.list_object_versions(Bucket=bucket, Prefix=prefix)
            return sorted(v["Key"] for v in (*page.get("Versions", []), *page.get("DeleteMarkers", [])))

        return Store(S3BlobStore(bucket, client=s3), versions)
    return Store(MemoryBlobStore())


def test_a_blob_reads_back_as_written_and_a_second_put_replaces_it(store: Store) -> None:
    payload = bytes(range(256)) * 40  # binary, not text
    store.blobs.put("raw/org-a/doc-1", payload)
    assert store.blobs.get("raw/org-a/doc-1") == payload
    store.blobs.put("raw/org-a/doc-1", b"second")
    assert store.blobs.get("raw/org-a/doc-1") == b"second"
    assert store.blobs.keys("raw/") == ["raw/org-a/doc-1"]
    store.blobs.put("raw/org-a/empty", b"")
    assert store.blobs.get("raw/org-a/empty") == b""
    assert store.blobs.get("raw/org-a/missing") is None


def test_keys_are_listed_by_prefix_in_key_order(store: Store) -> None:
    for key in (
        "work/org-a/doc-2/x",
        "work/org-a/doc-1/b",
        "work/org-a/doc-1/a",
        "raw/org-a/doc-1",
        "work/org-a/doc-10/a",
        "work/org-b/doc-1/a",
    ):
        store.blobs.put(key, b"x")
    assert store.blobs.keys("work/org-a/doc-1/") == ["work/org-a/doc-1/a", "work/org-a/doc-1/b"]
    assert store.blobs.keys("work/org-a/") == [
        "work/org-a/doc-1/a",
        "work/org-a/doc-1/b",
        "work/org-a/doc-10/a",
        "work/org-a/doc-2/x",
    ]
    assert len(store.blobs.keys()) == 6
    assert store.blobs.keys("nothing/") == []


def test_a_delete_leaves_no_version_of_the_key_and_only_that_key(store: Store) -> None:
    store.blobs.put("raw/org-a/doc-1", b"v1")
    store.blobs.put("raw/org-a/doc-1", b"v2")  # an overwrite: on S3 the first is an old version
    store.blobs.put("raw/org-a/doc-10", b"kept")
    store.blobs.delete("raw/org-a/doc-1")
    store.blobs.delete("raw/org-a/doc-1")  # a retried delete is harmless
    store.blobs.delete("raw/org-a/never-written")
    assert store.blobs.get("raw/org-a/doc-1") is None
    assert store.versions("raw/org-a/doc-1") == ["raw/org-a/doc-10"]
    assert store.blobs.get("raw/org-a/doc-10") == b"kept"


def test_deleting_a_prefix_removes_every_key_and_version_under_it(store: Store) -> None:
    for key in (
        "work/org-a/doc-1/run-1/text",
        "work/org-a/doc-1/run-1/chunks",
        "work/org-a/doc-1/run-2/text",
        "work/org-a/doc-10/run-1/text",
        "raw/org-a/doc-1",
    ):
        store.blobs.put(key, b"x")
    store.blobs.put("work/org-a/doc-1/run-1/text", b"rewritten")
    assert store.blobs.delete_prefix("work/org-a/doc-1/") == 3
    assert store.versions("work/org-a/doc-1/") == []
    assert store.blobs.keys() == ["raw/org-a/doc-1", "work/org-a/doc-10/run-1/text"]
    assert store.blobs.delete_prefix("work/org-a/doc-1/") == 0
    # An empty prefix would empty the store: refused
    with pytest.raises(ValueError):
        store.blobs.delete_prefix("")
    assert len(store.blobs.keys()) == 2


def test_versions_counts_what_is_still_stored_until_the_key_is_deleted(store: Store) -> None:
    # A deletion receipt reads this: zero only when no version of anything under the prefix is left
    store.blobs.put("media/org-a/doc-1", b"v1")
    store.blobs.put("media/org-a/doc-1", b"v2")
    store.blobs.put("media/org-a/doc-2", b"other")
    assert store.blobs.versions("media/org-a/doc-1") == len(store.versions("media/org-a/doc-1")) >= 1
    store.blobs.delete("media/org-a/doc-1")
    assert store.blobs.versions("media/org-a/doc-1") == 0
    assert store.blobs.versions("media/org-a/doc-2") == 1
    assert store.blobs.versions("media/org-a/never") == 0
