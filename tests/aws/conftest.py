"""Fixtures for the AWS adapter tests: moto started before any client exists, fake credentials,
and the table, bucket, queue and state machine created as the CDK stack declares them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from moto import mock_aws

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.blob_store import S3BlobStore
from memlane.adapters.aws.dynamo_schema import table_definition
from memlane.adapters.aws.metadata_store import DynamoMetadataStore
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, chunk_id_for

REGION = "us-east-1"
TABLE = "memlane-test"
BUCKET = "memlane-test-content"
T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def aws(aws_credentials: None) -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = new_client("dynamodb")
    client.create_table(**table_definition(TABLE))
    return client


@pytest.fixture
def s3(aws: None) -> Any:
    client = new_client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def blob_store(s3: Any) -> S3BlobStore:
    return S3BlobStore(BUCKET, client=s3)


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def store(dynamodb: Any, blob_store: S3BlobStore, sleeps: list[float]) -> DynamoMetadataStore:
    return DynamoMetadataStore(TABLE, client=dynamodb, blob_store=blob_store, sleep=sleeps.append)


@pytest.fixture
def sqs_queue_url(aws: None) -> str:
    client = new_client("sqs")
    return str(client.create_queue(QueueName="memlane-ingest")["QueueUrl"])


@pytest.fixture
def state_machine_arn(aws: None) -> str:
    iam = new_client("iam")
    role = iam.create_role(
        RoleName="memlane-ingestion",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "states.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )["Role"]["Arn"]
    definition = {"StartAt": "Extract", "States": {"Extract": {"Type": "Pass", "End": True}}}
    sfn = new_client("stepfunctions")
    return str(
        sfn.create_state_machine(name="memlane-ingestion", definition=json.dumps(definition), roleArn=role)[
            "stateMachineArn"
        ]
    )


# --------------------------------------------------------------------------- factories


@pytest.fixture
def make_document() -> Callable[..., Document]:
    def make(org_id: str, project_id: str, **overrides: Any) -> Document:
        fields: dict[str, Any] = {
            "organization_id": org_id,
            "project_id": project_id,
            "user_id": "user-1",
            "title": "Retry policies",
            "content": "Exponential backoff with jitter spreads retries over time.",
            "summary": "How to retry.",
            "content_type": ContentType.MARKDOWN,
            "source_url": "https://docs.example.com/retries",
            "metadata": {"tags": ["aws", "retries"], "score": 0.75, "nested": {"depth": 2}},
            "content_hash": "hash-" + str(overrides.get("id", "default")),
            "created_at": T0,
            "updated_at": T0,
            "status": DocumentStatus.READY,
            "chunk_count": 0,
            "embedder": "bedrock/amazon.titan-embed-text-v2:0/1024",
        }
        fields.update(overrides)
        return Document(**fields)

    return make


@pytest.fixture
def make_chunks() -> Callable[..., list[Chunk]]:
    def make(doc: Document, count: int) -> list[Chunk]:
        return [
            Chunk(
                id=chunk_id_for(doc.id, i),
                document_id=doc.id,
                organization_id=doc.organization_id,
                project_id=doc.project_id,
                content=f"chunk {i} of {doc.title}",
                chunk_index=i,
                chunk_count=count,
                start_offset=i * 100,
                end_offset=i * 100 + 99,
                heading_path=["Guide", f"Section {i}"],
                title=doc.title,
                content_type=doc.content_type,
                source_url=doc.source_url,
                tags=doc.tags,
                created_at=doc.created_at,
                forget_after=doc.forget_after,
            )
            for i in range(count)
        ]

    return make


@pytest.fixture(scope="module")
def osmem() -> Iterator[Any]:
    """osmem-server (an OpenSearch-compatible server in memory) on loopback, one per test module;
    without it installed, every test that uses it skips (`make test` installs it)."""
    osmem_server = pytest.importorskip(
        "osmem_server",
        reason="osmem-server is not installed (pip install osmem-server): no local OpenSearch to test on",
    )
    server = osmem_server.OsmemServer.start(japanese=False)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        yield server
    finally:
        server.close()
