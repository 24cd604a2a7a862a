"""What the port contract suites share: one moto mock and one osmem-server per test module (the
slow parts), and a fresh table, bucket, queue or index clone per test (milliseconds), so every
case starts empty whichever adapter runs it.

Each suite parametrises its store over three adapters: the embedded default (SQLite), the AWS adapter
(moto; osmem-server for OpenSearch) and the in-memory fake of tests/memory_stores.py.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.dynamo_schema import table_definition
from memlane.adapters.local.sqlite_db import SqliteDatabase

REGION = "us-east-1"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def aws() -> Iterator[None]:
    """Fake credentials and moto, once per module (starting moto is the slow part)."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": REGION,
        }.items():
            env.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
            env.delenv(name, raising=False)
        with mock_aws():
            yield


@pytest.fixture(scope="module")
def dynamodb(aws: None) -> Any:
    return new_client("dynamodb")


class AtomicWrites:
    """DynamoDB applies each write atomically; moto does not serialise concurrent calls, so the
    cases that write from several threads call it through this lock, as DynamoDB would."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        operation = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return operation(*args, **kwargs)

        return call


@pytest.fixture(scope="module")
def atomic_dynamodb(dynamodb: Any) -> AtomicWrites:
    return AtomicWrites(dynamodb)


@pytest.fixture
def table(dynamodb: Any) -> Iterator[str]:
    """A new metadata table, declared as the CDK stack declares it, for one test."""
    name = unique("memlane")
    dynamodb.create_table(**table_definition(name))
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def s3(aws: None) -> Any:
    return new_client("s3")


@pytest.fixture
def bucket(s3: Any) -> str:
    """A new versioned bucket (the content bucket is versioned in the stack)."""
    name = unique("memlane-content")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


@pytest.fixture(scope="module")
def sqs(aws: None) -> Any:
    return new_client("sqs")


@pytest.fixture
def queue_url(sqs: Any) -> Iterator[str]:
    url = str(sqs.create_queue(QueueName=unique("memlane-ingest"))["QueueUrl"])
    yield url
    sqs.delete_queue(QueueUrl=url)


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[SqliteDatabase]:
    db = SqliteDatabase(tmp_path / "memlane.sqlite3")
    yield db
    db.close()
