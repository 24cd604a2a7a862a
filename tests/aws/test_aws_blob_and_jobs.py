"""S3BlobStore, SqsIngestQueue and StepFunctionsStarter against moto."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from memlane.adapters.aws._boto import DEFAULT_CLIENT_CONFIG, new_client
from memlane.adapters.aws.blob_store import S3BlobStore
from memlane.adapters.aws.job_queue import SqsIngestQueue, StepFunctionsStarter, execution_name
from memlane.domain.errors import InvalidInputError, TransientError
from memlane.domain.models import IngestJob

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


# --------------------------------------------------------------------------- S3


def test_blob_store_put_get_delete(blob_store: S3BlobStore) -> None:
    data = "contenu • ünïcode\n".encode() * 1000
    blob_store.put("content/org-a/doc-1.txt", data)
    assert blob_store.get("content/org-a/doc-1.txt") == data
    blob_store.delete("content/org-a/doc-1.txt")
    assert blob_store.get("content/org-a/doc-1.txt") is None
    blob_store.delete("content/org-a/doc-1.txt")  # deleting twice is harmless


def test_delete_on_a_versioned_bucket_leaves_no_version_behind(s3: Any, blob_store: S3BlobStore) -> None:
    """The stack's content bucket is versioned: a forget must not leave the text in an old version."""
    s3.put_bucket_versioning(Bucket=blob_store.bucket, VersioningConfiguration={"Status": "Enabled"})
    key = "content/org-a/doc-1.txt"
    blob_store.put(key, b"first secret")
    blob_store.put(key, b"second secret")
    blob_store.put(key + ".neighbour", b"kept")
    blob_store.delete(key)
    left = s3.list_object_versions(Bucket=blob_store.bucket, Prefix="content/")
    kept = [(v["Key"]) for v in left.get("Versions", [])]
    assert kept == [key + ".neighbour"]
    assert not left.get("DeleteMarkers")
    assert blob_store.get(key + ".neighbour") == b"kept"


def test_delete_prefix_and_keys(s3: Any, blob_store: S3BlobStore) -> None:
    s3.put_bucket_versioning(Bucket=blob_store.bucket, VersioningConfiguration={"Status": "Enabled"})
    for name in ("exec-1/text.txt", "exec-1/chunks.json", "exec-2/text.txt"):
        blob_store.put(f"work/org-a/doc-1/{name}", b"staged")
    blob_store.put("work/org-a/doc-10/exec-1/text.txt", b"another document")
    assert blob_store.keys("work/org-a/doc-1/") == [
        "work/org-a/doc-1/exec-1/chunks.json",
        "work/org-a/doc-1/exec-1/text.txt",
        "work/org-a/doc-1/exec-2/text.txt",
    ]
    assert blob_store.delete_prefix("work/org-a/doc-1/") == 3
    assert blob_store.keys("work/") == ["work/org-a/doc-10/exec-1/text.txt"]
    assert [v["Key"] for v in s3.list_object_versions(Bucket=blob_store.bucket).get("Versions", [])] == [
        "work/org-a/doc-10/exec-1/text.txt"
    ]
    with pytest.raises(ValueError, match="prefix"):
        blob_store.delete_prefix("")


def test_blob_store_get_of_missing_key_is_none(blob_store: S3BlobStore) -> None:
    assert blob_store.get("content/org-a/never-written.txt") is None


def test_blob_store_slow_down_becomes_transient_error(aws_credentials: None) -> None:
    client = boto3.client("s3", config=DEFAULT_CLIENT_CONFIG)
    with Stubber(client) as stubber:
        stubber.add_client_error("get_object", "SlowDown", http_status_code=503)
        with pytest.raises(TransientError):
            S3BlobStore("bucket", client=client).get("k")


def test_blob_store_creates_its_client_lazily(s3: Any) -> None:
    store = S3BlobStore("memlane-test-content")
    assert not store.client.built  # nothing is created at construction
    store.put("k", b"v")
    assert store.get("k") == b"v"


# --------------------------------------------------------------------------- SQS


def test_send_puts_the_job_json_on_the_queue(sqs_queue_url: str) -> None:
    # Given a job
    job = IngestJob(id="job-1", document_id="doc-1", organization_id="org-a", created_at=T0, not_before=T0)
    queue = SqsIngestQueue(sqs_queue_url)
    # When it is sent
    message_id = queue.send(job)
    # Then a consumer receives exactly its JSON
    received = new_client("sqs").receive_message(QueueUrl=sqs_queue_url, MaxNumberOfMessages=10)["Messages"]
    assert [m["MessageId"] for m in received] == [message_id]
    assert json.loads(received[0]["Body"]) == json.loads(job.model_dump_json())
    assert SqsIngestQueue.parse(received[0]["Body"]) == job


def test_future_not_before_becomes_a_delay(sqs_queue_url: str) -> None:
    queue = SqsIngestQueue(sqs_queue_url)
    queue.send(
        IngestJob(
            document_id="doc-1", organization_id="org-a", not_before=datetime.now(UTC) + timedelta(hours=1)
        )
    )
    # Delayed for SQS's maximum of 15 minutes: counted as pending, not yet receivable
    assert queue.pending_count() == 1
    assert queue.claim(datetime.now(UTC), lease_seconds=30) is None


def test_claim_complete_and_retry_later(sqs_queue_url: str) -> None:
    queue = SqsIngestQueue(sqs_queue_url)
    job = IngestJob(id="job-1", document_id="doc-1", organization_id="org-a", not_before=T0)
    queue.enqueue(job)

    claimed = queue.claim(datetime.now(UTC), lease_seconds=60)
    assert claimed is not None and claimed.id == "job-1" and claimed.attempts == 1
    assert queue.claim(datetime.now(UTC), lease_seconds=60) is None  # hidden while leased

    # When it is put back for now, it is received again, both receives counted
    queue.retry_later("job-1", "embedder down", datetime.now(UTC))
    again = queue.claim(datetime.now(UTC), lease_seconds=60)
    assert again is not None and again.id == "job-1" and again.attempts == 2

    queue.complete("job-1")
    assert queue.pending_count() == 0
    queue.complete("job-1")  # completing twice is harmless


# --------------------------------------------------------------------------- Step Functions


def test_start_twice_runs_one_execution(state_machine_arn: str) -> None:
    starter = StepFunctionsStarter(state_machine_arn)
    first = starter.start("doc-1", "org-a", {"content_key": "raw/org-a/doc-1"})
    # A redelivered message: same document, even with a different input
    second = starter.start("doc-1", "org-a", {"content_key": "raw/org-a/doc-1"})
    third = starter.start("doc-1", "org-a", {"content_key": "raw/org-a/doc-1", "attempt": 2})

    executions = new_client("stepfunctions").list_executions(stateMachineArn=state_machine_arn)["executions"]
    assert [e["name"] for e in executions] == ["doc-doc-1"]
    assert first == second == third == executions[0]["executionArn"]
    described = new_client("stepfunctions").describe_execution(executionArn=first)
    assert json.loads(described["input"]) == {
        "content_key": "raw/org-a/doc-1",
        "document_id": "doc-1",
        "organization_id": "org-a",
    }


def test_a_new_revision_starts_a_new_execution(state_machine_arn: str) -> None:
    starter = StepFunctionsStarter(state_machine_arn)
    starter.start("doc-1", "org-a", {}, revision="job-1")
    starter.start("doc-1", "org-a", {}, revision="job-1")
    starter.start("doc-1", "org-a", {}, revision="job-2")
    executions = new_client("stepfunctions").list_executions(stateMachineArn=state_machine_arn)["executions"]
    assert sorted(e["name"] for e in executions) == ["doc-doc-1-job-1", "doc-doc-1-job-2"]


def test_execution_names_follow_step_functions_rules() -> None:
    uuid = "0b8f3c1e-8a61-4d5e-9a53-6d656d6c616e"
    assert execution_name(uuid) == f"doc-{uuid}"
    long_name = execution_name("x" * 200)
    assert len(long_name) == 80 and long_name.startswith("doc-xxx")
    odd = execution_name("a/b:c d")
    assert odd.startswith("doc-a-b-c-d-") and len(odd) <= 80
    assert execution_name("a/b") != execution_name("a:b")  # replaced characters do not collide
    assert all(c.isalnum() or c in "-_" for c in long_name + odd)


def test_oversized_input_is_refused(state_machine_arn: str) -> None:
    with pytest.raises(InvalidInputError):
        StepFunctionsStarter(state_machine_arn).start("doc-1", "org-a", {"content": "x" * 300_000})
