"""The S3 Vectors bucket's custom resource (functions/vector_bucket): CloudFormation's Create makes the
bucket's default index mode ENHANCED, a dev stack's Delete empties the bucket so it can be deleted, a
retained stack's Delete leaves every index, and a failure is answered FAILED with its reason (not an
hour of waiting). CloudFormation's pre-signed response URL is a server on 127.0.0.1 here."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from fn_support import context
from s3vectors_fake import FakeS3Vectors

from functions.invoke import invoke
from memlane.adapters.aws._boto import new_client

BUCKET = "memlane-dev-vectors"


class Responses:
    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return

            def do_PUT(self) -> None:  # noqa: N802 - the stdlib's name
                outer.answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/response?X-Amz-Signature=x"


@pytest.fixture
def responses() -> Iterator[Responses]:
    r = Responses()
    yield r
    r.server.shutdown()


@pytest.fixture
def fake(aws_env: None) -> Iterator[FakeS3Vectors]:
    from moto import mock_aws

    with mock_aws():
        client = FakeS3Vectors(new_client("s3vectors"))
        client.create_vector_bucket(vectorBucketName=BUCKET)
        yield client


def handler(event: dict[str, Any], ctx: Any, client: Any) -> Any:
    # imported when called (after aws_env), never at collection: functions._handler's shared Metrics
    # takes the service name from the environment when it is first imported
    return invoke("vector-bucket", event, ctx, client=client)


def event(kind: str, url: str, **props: str) -> dict[str, Any]:
    return {"RequestType": kind, "ResponseURL": url, "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1",
            "RequestId": f"req-{kind}", "LogicalResourceId": "SearchBucketSetup", "ResourceType": "Custom::MemlaneVectorBucket",
            "ResourceProperties": {"ServiceToken": "arn", "VectorBucketName": BUCKET, **props},
            **({"PhysicalResourceId": BUCKET} if kind != "Create" else {})}


def test_create_makes_the_bucket_enhanced_and_answers_success(fake, responses):
    handler(event("Create", responses.url), context("vector-bucket"), client=fake)
    (answer,) = responses.answers
    assert answer["Status"] == "SUCCESS" and answer["PhysicalResourceId"] == BUCKET
    assert answer["Data"] == {"VectorBucketName": BUCKET, "DefaultIndexMode": "ENHANCED"}
    assert ("PutVectorBucketDefaultIndexMode", {"vectorBucketName": BUCKET, "defaultIndexMode": "ENHANCED"}) in fake.calls
    # an index created afterwards is ENHANCED
    fake.create_index(vectorBucketName=BUCKET, indexName="memlane-chunks-x", dataType="float32", dimension=4,
                      distanceMetric="cosine")
    assert fake.get_index(vectorBucketName=BUCKET, indexName="memlane-chunks-x")["index"]["indexMode"] == "ENHANCED"


def test_delete_of_a_dev_stack_empties_the_bucket_so_it_can_go_and_a_retained_one_keeps_it(fake, responses):
    for name in ("memlane-chunks-a", "memlane-chunks-b"):
        fake.create_index(vectorBucketName=BUCKET, indexName=name, dataType="float32", dimension=4,
                          distanceMetric="cosine")
    handler(event("Delete", responses.url, EmptyOnDelete="false"), context("vector-bucket"), client=fake)
    assert len(fake.list_indexes(vectorBucketName=BUCKET)["indexes"]) == 2  # retained data stays
    handler(event("Delete", responses.url, EmptyOnDelete="true"), context("vector-bucket"), client=fake)
    assert [a["Status"] for a in responses.answers] == ["SUCCESS", "SUCCESS"]
    assert responses.answers[1]["Data"] == {"IndexesDeleted": "2"}
    fake.delete_vector_bucket(vectorBucketName=BUCKET)  # moto refuses a bucket that still has indexes
    # and a Delete after the bucket is gone (a rollback) still answers SUCCESS
    handler(event("Delete", responses.url, EmptyOnDelete="true"), context("vector-bucket"), client=fake)
    assert responses.answers[2]["Status"] == "SUCCESS"


def test_a_failure_is_answered_failed_with_its_reason(fake, responses):
    bad = event("Create", responses.url)
    bad["ResourceProperties"]["VectorBucketName"] = "no-such-bucket"
    handler(bad, context("vector-bucket"), client=fake)
    (answer,) = responses.answers
    assert answer["Status"] == "FAILED" and "NotFoundException" in answer["Reason"]
