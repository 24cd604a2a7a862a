"""The ingestion workflow definition (synthesized from infra) checked against its step handlers,
and a full save → ingest → recall through the Lambda handlers compared with local mode.

moto cannot run our Lambda code inside a state machine (that needs Docker), so the check is done
by asl.execute: it walks the synthesized definition and feeds each step handler exactly the
payload Step Functions builds (Parameters, ResultPath, Retry, Catch), then asserts on what each
handler read and wrote.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from asl import Synthesized, execute
from fakes import FixedClock, HashEmbedder
from fn_support import ORG_ID, T0, Deployment, context, load_event
from numeric import assert_ranking_close

from infra import constants as c
from memlane.api.app import MemlaneApi
from memlane.config import Settings
from memlane.documents import workflow as steps
from memlane.domain import errors as domain_errors
from memlane.domain.models import Document, DocumentStatus, IngestJob, Organization
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.services.keys import create_key

pytestmark = pytest.mark.infra


DEPLOYMENT: dict = {}


@pytest.fixture(autouse=True)
def _deployment(deployment: Deployment) -> None:
    DEPLOYMENT["current"] = deployment


class CapturingStarter:
    """Records the execution input the consumer would start (what StepFunctionsStarter sends)."""

    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, Any]]] = []

    def start(self, document_id: str, org_id: str, input: dict[str, Any], *,
              revision: str | None = None) -> str:
        from memlane.adapters.aws.job_queue import execution_name

        payload = {**input, "document_id": document_id, "organization_id": org_id}
        name = execution_name(document_id, revision)
        self.started.append((name, json.loads(json.dumps(payload))))
        return f"arn:aws:states:us-east-1:123456789012:execution:memlane:{name}"


def queueing_api(deployment: Deployment) -> MemlaneApi:
    """The API function as it treats a document over the inline limit: queued for the workflow."""
    svc = deployment.services()
    return MemlaneApi(dataclasses.replace(svc, settings=svc.settings.model_copy(update={"inline_max_chars": 0})),
                      docsets=deployment.docsets)


def save(deployment: Deployment, content: str, title: str) -> Document:
    event = load_event("api_post_memory.json")
    event["body"] = json.dumps({"content": content, "title": title})
    result = deployment.invoke("api", event, context("api"), api=queueing_api(deployment))
    assert result["statusCode"] == 202, result["body"]
    return deployment.services().metadata.get_document(ORG_ID, json.loads(result["body"])["id"])


def start_for(doc: Document) -> tuple[str, dict[str, Any]]:
    starter = CapturingStarter()
    steps.start_ingestion(starter, DEPLOYMENT["current"].services(),
                          IngestJob(document_id=doc.id, organization_id=doc.organization_id, created_at=T0))
    return starter.started[0]


# --------------------------------------------------------------------------- the definition's shape


def test_every_task_runs_a_handler_that_exists_with_the_retries_the_code_raises(
        synthesized: Synthesized) -> None:
    definition = synthesized.definition
    assert definition["StartAt"] == "Start"
    lambdas = {name: handler for name, handler in synthesized.handlers.items() if not handler.startswith("aws-sdk:")}
    assert lambdas == {name: spec.handler for name, spec in
                       (*c.INGESTION_STEPS, ("Transcribed", c.TRANSCRIBED_FUNCTION), ("MarkFailed", c.MARK_FAILED_FUNCTION))}
    # Amazon Transcribe is driven by the state machine itself (SDK integration), not by a Lambda
    assert {name: h for name, h in synthesized.handlers.items() if h.startswith("aws-sdk:")} == {
        "StartTranscription": "aws-sdk:transcribe:startTranscriptionJob",
        "GetTranscription": "aws-sdk:transcribe:getTranscriptionJob"}
    for state_name, handler in lambdas.items():
        module, _, attr = handler.rpartition(".")
        assert callable(getattr(importlib.import_module(module), attr)), handler
        state = definition["States"][state_name]
        retried = set(state["Retry"][0]["ErrorEquals"])
        # Step Functions matches error names exactly: the names must be the classes memlane raises
        assert {"TransientError", "DependencyUnavailableError"} <= retried
        for name in retried - set(c.LAMBDA_SERVICE_ERRORS):
            assert issubclass(getattr(domain_errors, name), domain_errors.TransientError)
        if state_name != "MarkFailed":
            assert state["Catch"] == [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error",
                                       "Next": "MarkFailed"}]
            assert state["ResultPath"] == f"$.artifacts.{state_name.lower()}"


# --------------------------------------------------------------------------- happy path


def test_each_step_gets_what_it_reads_and_its_result_lands_where_the_next_reads_it(
        synthesized: Synthesized, deployment: Deployment, org: Organization, monkeypatch) -> None:
    # Given a document saved through the API (queued, as on AWS) and the consumer's execution input
    doc = save(deployment, "Sourdough starter: feed it flour and water every twelve hours.", "Starter")
    name, execution_input = start_for(doc)
    # and a record of which earlier artifact fields each step reads
    reads: list[tuple[str, str, str]] = []
    original = steps.StepInput.artifact

    def spy(self: steps.StepInput, step: str, field: str) -> Any:
        reads.append((self.step, step, field))
        return original(self, step, field)

    monkeypatch.setattr(steps.StepInput, "artifact", spy)
    # When the synthesized state machine runs, each Task calling its handler
    run = execute(synthesized, execution_input, name, deployment.run_handler)
    # Then it succeeds through every step in order
    assert run.status == "SUCCEEDED", (run.error, run.cause)
    assert run.visited == ["Start", "Extract", "NeedsTranscription", "Prepare", "Embed", "Write"]
    # each payload is the contract {step, document, artifacts, execution}, artifacts of earlier steps only
    tasks = [s for s in run.visited if s in synthesized.handlers]
    for i, state in enumerate(tasks):
        payload = run.payloads[state]
        assert set(payload) == {"step", "document", "artifacts", "execution"}
        assert payload["step"] == state.lower() and payload["execution"] == name
        assert payload["document"] == execution_input
        assert list(payload["artifacts"]) == [s.lower() for s in tasks[:i]]
        steps.StepInput.model_validate(payload)
    # every field a step reads was written by the step before it, under $.artifacts.<step>
    assert sorted(set(reads)) == sorted({
        ("embed", "prepare", "chunks_key"), ("write", "prepare", "chunks_key"), ("write", "embed", "vectors_key")})
    artifacts = run.output["artifacts"]
    assert set(artifacts) == {"extract", "prepare", "embed", "write"}
    # states carry keys and counts, never content: the whole state stays tiny
    assert len(json.dumps(run.output)) < 4_000
    assert "feed it flour and water" not in json.dumps(run.output).lower()
    ready = deployment.services().metadata.get_document(ORG_ID, doc.id)
    assert ready.status == DocumentStatus.READY and ready.chunk_count == artifacts["write"]["chunk_count"] == 1


def test_the_same_document_run_twice_is_one_document_with_one_set_of_chunks(
        synthesized: Synthesized, deployment: Deployment, org: Organization) -> None:
    doc = save(deployment, "The boiler pressure should stay between 1 and 2 bar.", "Boiler")
    name, execution_input = start_for(doc)
    assert execute(synthesized, execution_input, name, deployment.run_handler).status == "SUCCEEDED"
    md = deployment.services().metadata
    chunks = md.get_chunks(ORG_ID, doc.id)
    # a second run of the workflow for the same job (e.g. redriven) finds it ready and changes nothing
    again = execute(synthesized, execution_input, name, deployment.run_handler)
    assert again.status == "SUCCEEDED"
    assert again.output["artifacts"]["prepare"] == {"skip": "document already ready", "count": 0, "tags": [],
                                                    "keyphrases": []}
    assert md.get_chunks(ORG_ID, doc.id) == chunks
    assert deployment.search.document_ids(ORG_ID) == {doc.id}


# --------------------------------------------------------------------------- failure paths


def test_a_failing_step_is_caught_and_mark_failed_records_why(
        synthesized: Synthesized, deployment: Deployment, org: Organization, monkeypatch) -> None:
    doc = save(deployment, "Tyre pressure for the bike: 4.5 bar front, 5 bar rear.", "Bike")
    name, execution_input = start_for(doc)

    def refuse(texts):
        raise domain_errors.EmbedderMismatchError("the index was built with another embedder")

    monkeypatch.setattr(deployment.embedder, "embed_documents", refuse)
    run = execute(synthesized, execution_input, name, deployment.run_handler)
    # Catch → MarkFailed (with $.error) → Fail with the step's error name
    assert run.visited == ["Start", "Extract", "NeedsTranscription", "Prepare", "Embed", "MarkFailed",
                           "IngestionFailed"]
    assert run.attempts["Embed"] == 1  # not a retryable error
    error = run.payloads["MarkFailed"]["error"]
    assert error["Error"] == "EmbedderMismatchError"
    assert json.loads(error["Cause"])["errorMessage"] == "the index was built with another embedder"
    assert (run.status, run.error) == ("FAILED", "EmbedderMismatchError")
    failed = deployment.services().metadata.get_document(ORG_ID, doc.id)
    assert failed.status == DocumentStatus.FAILED
    assert failed.status_reason == "EmbedderMismatchError: the index was built with another embedder"


def test_transient_errors_are_retried_by_the_state_machine(
        synthesized: Synthesized, deployment: Deployment, org: Organization) -> None:
    doc = save(deployment, "Water the fern twice a week, mist daily in summer.", "Fern")
    name, execution_input = start_for(doc)
    deployment.embedder.fail_times = 2  # two 503s from the embedding service, then it answers
    run = execute(synthesized, execution_input, name, deployment.run_handler)
    assert run.status == "SUCCEEDED" and run.attempts["Embed"] == 3
    done = deployment.services().metadata.get_document(ORG_ID, doc.id)
    assert done.status == DocumentStatus.READY and done.status_reason is None

    doc = save(deployment, "The dog's vaccination is due in March.", "Dog")
    name, execution_input = start_for(doc)
    deployment.embedder.fail_times = 100  # down for longer than the retries
    run = execute(synthesized, execution_input, name, deployment.run_handler)
    assert run.attempts["Embed"] == 1 + c.STEP_RETRY_MAX_ATTEMPTS
    assert run.error == "TransientError"
    failed = deployment.services().metadata.get_document(ORG_ID, doc.id)
    assert failed.status == DocumentStatus.FAILED
    assert failed.status_reason == "TransientError: embedding service returned 503"


# --------------------------------------------------------------------------- end to end vs local mode

NOTES = [
    ("Miso meds", "Our cat Miso needs her thyroid pill every morning with food."),
    ("Spare key", "The spare key is under the blue flowerpot by the back door."),
    ("Boiler", "The boiler pressure should stay between 1 and 2 bar; top up through the filling loop."),
    ("Sourdough", "Feed the sourdough starter flour and water every twelve hours; keep it warm."),
    ("Vet visit", "The vet said Miso's thyroid levels are stable; next blood test in six months."),
]
QUERIES = ["what pill does the cat take", "where is the spare key", "thyroid blood test", "boiler pressure"]


def test_save_ingest_recall_through_the_handlers_matches_local_mode(
        synthesized: Synthesized, deployment: Deployment, org: Organization, tmp_path: Path) -> None:
    # Given a real key, authorized by the authorizer function
    secret, _, _ = create_key(deployment.services().metadata, "default", "e2e")
    request = load_event("authorizer_bearer.json")
    request["headers"]["Authorization"] = f"Bearer {secret}"
    authorized = deployment.invoke("authorizer", request, context("authorizer"))
    assert authorized["usageIdentifierKey"] == hashlib.sha256(secret.encode()).hexdigest()

    def api(event: dict) -> dict:
        event["requestContext"]["authorizer"] = {**authorized["context"],
                                                 "principalId": authorized["principalId"]}
        return deployment.invoke("api", event, context("api"), api=queueing_api(deployment))

    # When notes are saved through the API function, queued (202) as documents over the inline
    # limit are
    for title, content in NOTES:
        event = load_event("api_post_memory.json")
        event["body"] = json.dumps({"content": content, "title": title})
        assert api(event)["statusCode"] == 202
    # and the ingest queue's real messages are handed to the consumer as an SQS event
    messages = deployment.ingest_messages()
    assert len(messages) == len(NOTES)
    sqs_event = load_event("ingest_consumer_single.json")
    template = sqs_event["Records"][0]
    sqs_event["Records"] = [{**template, "messageId": m["MessageId"], "body": m["Body"],
                             "receiptHandle": m["ReceiptHandle"]} for m in messages]
    assert deployment.invoke("ingest_consumer", sqs_event, context("consumer")) == {"batchItemFailures": []}
    # and each execution the consumer started runs through the step functions
    executions = deployment.executions()
    assert len(executions) == len(NOTES)
    for execution in executions:
        described = deployment.sfn.describe_execution(executionArn=execution["executionArn"])
        run = execute(synthesized, json.loads(described["input"]), execution["name"], deployment.run_handler)
        assert run.status == "SUCCEEDED", (run.error, run.cause)
    # Then recall through the API function answers like the embedded default does with the same
    # notes, embedder, summarizer and clock.
    local = _local_mode(tmp_path)
    expected = {query: local(query) for query in QUERIES}
    for query in QUERIES:
        on_aws = json.loads(api(_recall_event(query))["body"])["results"]
        here = expected[query]
        assert here, query
        # Same documents, same scores, same order, within the suite's float tolerance (the two stores
        # compute cosines by different code, summed in different orders); documents whose scores tie
        # (here: no match but recency) are ordered by id, which differs between the two stores, so
        # tied documents may trade places.
        assert_ranking_close([(r["title"], r["score"]) for r in on_aws], [(r["title"], r["score"]) for r in here],
                             where=query)
        assert sorted(r["summary"] or "" for r in on_aws) == sorted(r["summary"] or "" for r in here)
        chunks = {r["title"]: [ch["content"] for ch in r["chunks"]] for r in on_aws}
        assert chunks == {r["title"]: [ch["content"] for ch in r["chunks"]] for r in here}
    first = json.loads(api(_recall_event("what pill does the cat take"))["body"])["results"][0]
    assert first["title"] == "Miso meds"


def _recall_event(query: str) -> dict:
    event = load_event("api_recall.json")
    event["body"] = json.dumps({"query": query, "limit": 10})  # all notes: no tie cut at the limit
    return event


def _local_mode(tmp_path: Path):
    """The embedded default with the same embedder, summarizer and clock, fed the same notes
    (processed in the request: local mode's inline path)."""
    stack = build_local(Settings(data_dir=tmp_path / "local"), embedder=HashEmbedder(),
                        summarizer=LocalSummarizer())
    stack.services = replace(stack.services, clock=FixedClock(T0))
    secret, key, org = create_key(stack.metadata, "default", "local")
    api = MemlaneApi(stack.services)
    ctx = {"organization_id": org.id, "key_id": key.id, "user_id": "api", "rate_limit": "1000"}
    for title, content in NOTES:
        event = load_event("api_post_memory.json")
        event["body"] = json.dumps({"content": content, "title": title})
        event["requestContext"]["authorizer"] = ctx
        assert api.handle(event)["statusCode"] == 201

    def recall(query: str) -> list[dict]:
        event = _recall_event(query)
        event["requestContext"]["authorizer"] = ctx
        return json.loads(api.handle(event)["body"])["results"]

    return recall
