"""The ingest queue consumer: partial batch failures, idempotent starts, faults (rows 3 and 4)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from botocore.stub import Stubber
from fn_support import ORG_ID, T0, Deployment, context, load_event

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.job_queue import StepFunctionsStarter, execution_name
from memlane.domain.models import Document, DocumentStatus, IngestJob

CONSUMER: dict = {}  # the deployment of the running test, for consume()


@pytest.fixture(autouse=True)
def queued_documents(deployment: Deployment) -> Deployment:
    """The documents the sample messages name, saved and queued (as POST /v3/memory leaves them)."""
    CONSUMER["deployment"] = deployment
    for name in ("ingest_consumer_batch.json", "ingest_consumer_single.json"):
        for record in load_event(name)["Records"]:
            try:
                job = IngestJob.model_validate_json(record["body"])
            except ValueError:
                continue  # the poison message
            deployment.services().metadata.put_document(Document(
                id=job.document_id, organization_id=job.organization_id, project_id="p", user_id="api",
                title="queued", content="a large note", content_hash=f"h-{job.document_id}",
                created_at=T0, updated_at=T0, status=DocumentStatus.QUEUED))
    return deployment


def consume(event: dict, **overrides) -> dict:
    return CONSUMER["deployment"].invoke("ingest_consumer", event, context("consumer"), **overrides)


def test_one_poison_message_fails_alone_and_the_other_nine_start(deployment: Deployment) -> None:
    # Given the sample batch of 10 ingest messages, the 7th of which is not an IngestJob
    event = load_event("ingest_consumer_batch.json")
    poison = event["Records"][6]["messageId"]
    # When the consumer handles it
    response = consume(event)
    # Then only the poison message is reported (SQS retries it, then moves it to the DLQ)
    assert response == {"batchItemFailures": [{"itemIdentifier": poison}]}
    # and the other nine each started one execution, named after document and job
    good = [json.loads(r["body"]) for i, r in enumerate(event["Records"]) if i != 6]
    expected = {execution_name(j["document_id"], j["id"]) for j in good}
    executions = deployment.executions()
    assert {e["name"] for e in executions} == expected and len(executions) == 9
    started = deployment.sfn.describe_execution(executionArn=executions[0]["executionArn"])
    body = json.loads(started["input"])
    assert body["organization_id"] == ORG_ID and set(body) == {"job_id", "document_id", "organization_id"}


def test_a_redelivered_batch_starts_nothing_twice(deployment: Deployment) -> None:
    # Given the same messages delivered twice (SQS is at least once)
    event = load_event("ingest_consumer_batch.json")
    first = consume(event)
    second = consume(load_event("ingest_consumer_batch.json"))
    # Then the second delivery succeeds for the same nine and starts no new execution
    assert first == second
    assert len(deployment.executions()) == 9


def test_throttled_start_fails_only_that_message_and_its_retry_succeeds(deployment: Deployment,
                                                                       monkeypatch) -> None:
    # Given Step Functions throttles the first StartExecution (after botocore's own retries)
    client = new_client("stepfunctions")
    stub = Stubber(client)
    stub.add_client_error("start_execution", "ThrottlingException", "Rate exceeded", 400)
    starter = StepFunctionsStarter(deployment.state_machine_arn, client=client)
    event = load_event("ingest_consumer_single.json")
    with stub:
        response = consume(event, starter=starter)
    # Then that message is reported for redelivery
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert deployment.executions() == []
    # and when SQS delivers it again (StartExecution answers), it starts once
    assert consume(load_event("ingest_consumer_single.json")) == {"batchItemFailures": []}
    assert [e["name"] for e in deployment.executions()] == [
        "doc-3f2e1d0c-9b8a-4765-8432-10fedcba9876-4b3a2918-0f1e-4d2c-8b3a-291807f6e5d4"]


def test_server_errors_on_start_are_retried_by_botocore_before_failing_the_record(
        deployment: Deployment, monkeypatch) -> None:
    # Given two 500s from Step Functions, then success, on the wire (below botocore's retry handler)
    attempts: list[str] = []

    def flaky(request, **_):
        attempts.append(request.url)
        if len(attempts) <= 2:
            from botocore.awsrequest import AWSResponse

            return AWSResponse(request.url, 500, {"x-amzn-ErrorType": "InternalFailure"},
                               _Raw(b'{"__type":"InternalFailure","message":"boom"}'))
        return None

    client = new_client("stepfunctions")
    client.meta.events.register("before-send.states.StartExecution", flaky)
    monkeypatch.setattr("time.sleep", lambda s: None)  # botocore's backoff between attempts
    # When the consumer starts the execution
    starter = StepFunctionsStarter(deployment.state_machine_arn, client=client)
    assert consume(load_event("ingest_consumer_single.json"), starter=starter) == {"batchItemFailures": []}
    # Then botocore retried the 5xx (standard mode) and the third attempt started it
    assert len(attempts) == 3 and len(deployment.executions()) == 1


class _Raw:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_):
        yield self.data


def test_a_job_whose_document_was_written_since_or_deleted_starts_nothing(deployment: Deployment) -> None:
    # Given the safety-net message of a save that was written in its request after the job was
    # queued, and a message for a document deleted since
    event = load_event("ingest_consumer_batch.json")
    jobs = [IngestJob.model_validate_json(r["body"]) for i, r in enumerate(event["Records"]) if i != 6]
    md = deployment.services().metadata
    written = md.get_document(ORG_ID, jobs[0].document_id)
    md.put_document(written.model_copy(update={"status": DocumentStatus.READY,
                                               "updated_at": jobs[0].created_at + timedelta(seconds=1)}))
    md.delete_document(ORG_ID, jobs[1].document_id)
    # and one that was ready *before* its job was queued (a repair asks for it to be written again)
    repaired = md.get_document(ORG_ID, jobs[2].document_id)
    md.put_document(repaired.model_copy(update={"status": DocumentStatus.READY,
                                                "updated_at": jobs[2].created_at - timedelta(days=1)}))
    # When the consumer handles the batch
    assert consume(event)["batchItemFailures"] == [{"itemIdentifier": event["Records"][6]["messageId"]}]
    # Then only the documents that still need writing get an execution
    started = {e["name"] for e in deployment.executions()}
    assert started == {execution_name(j.document_id, j.id) for j in jobs[2:]}
