"""A recording saved through the API on AWS: queued, then transcribed by an Amazon Transcribe job
that the synthesized state machine starts and polls (Wait ⇄ GetTranscriptionJob, no Lambda
waiting), then written like any document. The SDK tasks are answered by a botocore Stubber, so
the requests the definition builds are validated against Transcribe's service model."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from asl import execute
from botocore.stub import Stubber
from fn_support import BUCKET, ORG_ID, T0, Deployment, context, load_event
from media_samples import wav
from test_workflow import CapturingStarter

from memlane.adapters.aws._boto import new_client
from memlane.documents import workflow as steps
from memlane.documents.media_budget import CacheMediaBudget
from memlane.domain.models import Document, DocumentStatus, IngestJob

pytestmark = pytest.mark.infra


def save_recording(deployment: Deployment) -> Document:
    event = load_event("api_post_memory.json")
    event["body"] = json.dumps({"content": base64.b64encode(wav()).decode(), "content_type": "audio",
                                "title": "Standup"})
    result = deployment.invoke("api", event, context("api"))
    assert result["statusCode"] == 202, result["body"]
    return deployment.services().metadata.get_document(ORG_ID, json.loads(result["body"])["id"])


def start_for(deployment: Deployment, doc: Document) -> tuple[str, dict[str, Any]]:
    starter = CapturingStarter()
    steps.start_ingestion(starter, deployment.services(),
                          IngestJob(document_id=doc.id, organization_id=doc.organization_id, created_at=T0))
    return starter.started[0]


OUTPUT = {"jobName": "j", "accountId": "123456789012", "status": "COMPLETED", "results": {
    "language_code": "en-US", "transcripts": [{"transcript": "The release train leaves on Tuesday."}],
    "items": [], "audio_segments": [{"id": 0, "transcript": "The release train leaves on Tuesday.",
                                     "start_time": "0.2", "end_time": "2.9", "items": []}]}}


class TranscribeService:
    """Answers the workflow's SDK tasks through a stubbed Transcribe client; on start, the "job"
    writes its output where the request asked, as Transcribe does."""

    def __init__(self, deployment: Deployment, statuses: list[str]) -> None:
        self.deployment = deployment
        self.client = new_client("transcribe")
        self.stub = Stubber(self.client)
        self.s3 = deployment.s3
        self.statuses = statuses
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, handler: str, payload: dict[str, Any]) -> Any:
        if not handler.startswith("aws-sdk:transcribe:"):
            return self.deployment.run_handler(handler, payload)
        action = handler.rsplit(":", 1)[1]
        # The definition names the content bucket by a CloudFormation reference: resolve it.
        payload = json.loads(re.sub(r"<StorageContentBucket[^<>]*>", BUCKET, json.dumps(payload)))
        self.requests.append((action, payload))
        job = {"TranscriptionJobName": payload["TranscriptionJobName"]}
        if action == "startTranscriptionJob":
            self.stub.add_response("start_transcription_job", {"TranscriptionJob": {
                **job, "TranscriptionJobStatus": "IN_PROGRESS"}}, payload)
            with self.stub:  # validates the request against Transcribe's model
                response = self.client.start_transcription_job(**payload)
            self.s3.put_object(Bucket=payload["OutputBucketName"], Key=payload["OutputKey"],
                               Body=json.dumps(OUTPUT).encode())
            return response
        status = self.statuses.pop(0)
        self.stub.add_response("get_transcription_job", {"TranscriptionJob": {
            **job, "TranscriptionJobStatus": status}}, payload)
        with self.stub:
            return self.client.get_transcription_job(**payload)


def test_a_recording_is_transcribed_by_a_job_the_workflow_polls(synthesized, deployment, org) -> None:
    # Given a recording saved through the API (queued: it needs a transcript) and its execution
    doc = save_recording(deployment)
    assert doc.status == DocumentStatus.QUEUED and doc.media.pending
    name, execution_input = start_for(deployment, doc)
    transcribe = TranscribeService(deployment, ["IN_PROGRESS", "COMPLETED"])
    # When the synthesized state machine runs
    run = execute(synthesized, execution_input, name, transcribe)
    # Then it starts one job on the stored recording, waits and polls until done, then writes
    assert run.status == "SUCCEEDED", (run.error, run.cause)
    assert run.visited[:4] == ["Start", "Extract", "NeedsTranscription", "StartTranscription"]
    assert run.visited.count("GetTranscription") == 2 and run.waits == 2
    assert run.visited[-4:] == ["Transcribed", "Prepare", "Embed", "Write"]
    (start_action, start), *_ = transcribe.requests
    assert start_action == "startTranscriptionJob"
    assert start["Media"]["MediaFileUri"] == f"s3://{BUCKET}/media/{ORG_ID}/{doc.id}"
    assert start["OutputBucketName"] == BUCKET and start["OutputKey"].startswith(f"work/{ORG_ID}/{doc.id}/")
    assert start["TranscriptionJobName"].startswith("memlane-")
    # the state carries the job's status only, never the job description or the transcript
    # (the summary's short keyphrase tags may quote it; the text itself stays in S3)
    assert "The release train leaves on Tuesday" not in json.dumps(run.output)
    assert "transcripts" not in json.dumps(run.output)
    ready = deployment.services().metadata.get_document(ORG_ID, doc.id)
    assert ready.status == DocumentStatus.READY and ready.content == "The release train leaves on Tuesday."
    assert ready.media.extracted_by == "transcribe"
    (chunk,) = deployment.services().metadata.get_chunks(ORG_ID, doc.id)
    assert (chunk.start_seconds, chunk.end_seconds) == (0.2, 2.9)


def test_a_failed_transcription_job_fails_the_document_with_the_reason(synthesized, deployment, org) -> None:
    doc = save_recording(deployment)
    name, execution_input = start_for(deployment, doc)
    run = execute(synthesized, execution_input, name, TranscribeService(deployment, ["FAILED"]))
    assert run.status == "FAILED" and run.error == "TranscriptionFailed"
    failed = deployment.services().metadata.get_document(ORG_ID, doc.id)
    assert failed.status == DocumentStatus.FAILED
    assert "Amazon Transcribe could not transcribe" in failed.status_reason



def test_a_recording_over_the_organizations_budget_waits_for_it_instead_of_failing(
    synthesized, deployment, org
) -> None:
    # Given a recording queued while its organization has spent today's Transcribe minutes
    doc = save_recording(deployment)
    svc = deployment.services()
    budget = CacheMediaBudget(svc.cache)
    limit = svc.settings.media_transcribe_minutes_per_day
    budget.charge(ORG_ID, "transcribe_minutes", limit, svc.clock.now())
    name, execution_input = start_for(deployment, doc)
    transcribe = TranscribeService(deployment, ["COMPLETED"])
    attempts = 0

    def invoke(handler: str, payload: dict[str, Any]) -> Any:
        nonlocal attempts
        if payload.get("step") == "extract":
            attempts += 1
            if attempts == 3:  # the budget is there again (what the next UTC day brings: a new count)
                now = svc.clock.now()
                svc.cache.set(budget.key(ORG_ID, "transcribe_minutes", now), b"0.0", 3600, now)
        return transcribe(handler, payload)

    # The definition retries Extract on the budget error every hour, for two days, before failing
    rules = synthesized.definition["States"]["Extract"]["Retry"]
    (rule,) = [r for r in rules if r["ErrorEquals"] == ["MediaBudgetDeferred"]]
    assert (rule["IntervalSeconds"], rule["MaxAttempts"], rule["BackoffRate"]) == (3600, 48, 1)
    # When the state machine runs: Extract is deferred twice, then goes on, and nothing failed
    run = execute(synthesized, execution_input, name, invoke)
    assert run.status == "SUCCEEDED", (run.error, run.cause)
    assert run.attempts["Extract"] == 3 and "MarkFailed" not in run.visited
    assert transcribe.requests[0][0] == "startTranscriptionJob"
    ready = svc.metadata.get_document(ORG_ID, doc.id)
    assert ready.status == DocumentStatus.READY


def test_a_budget_that_stays_spent_fails_the_document_with_the_reason_after_the_retries(
    synthesized, deployment, org
) -> None:
    doc = save_recording(deployment)
    svc = deployment.services()
    CacheMediaBudget(svc.cache).charge(ORG_ID, "transcribe_minutes", svc.settings.media_transcribe_minutes_per_day,
                                       svc.clock.now())
    name, execution_input = start_for(deployment, doc)
    run = execute(synthesized, execution_input, name, TranscribeService(deployment, []))
    assert run.status == "FAILED" and run.attempts["Extract"] == 49  # the first try and 48 retries
    failed = svc.metadata.get_document(ORG_ID, doc.id)
    assert failed.status == DocumentStatus.FAILED and "budget" in (failed.status_reason or "")
