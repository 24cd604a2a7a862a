"""The API handler and the REQUEST authorizer, invoked with the events/ files under moto."""

from __future__ import annotations

import fnmatch
import hashlib
import json
from datetime import timedelta

import pytest
from fn_support import ORG_ID, T0, Deployment, context, load_event

from memlane.domain.models import DocumentStatus, IngestJob, Organization
from memlane.services.keys import create_key

DEPLOYMENT: dict = {}


@pytest.fixture(autouse=True)
def _deployment(deployment: Deployment) -> None:
    DEPLOYMENT["current"] = deployment


def call_api(event: dict) -> tuple[int, dict, dict]:
    result = DEPLOYMENT["current"].invoke("api", event, context("api"))
    return result["statusCode"], json.loads(result["body"] or "null"), result.get("headers") or {}


def with_key(event: dict, secret: str, header: str = "Authorization") -> dict:
    headers = {k: v for k, v in event["headers"].items() if k.lower() not in ("authorization", "x-api-key")}
    headers[header] = f"Bearer {secret}" if header == "Authorization" else secret
    event["headers"] = headers
    event["multiValueHeaders"] = {k: [v] for k, v in headers.items()}
    return event


# --------------------------------------------------------------------------- API


def test_a_small_save_is_written_in_the_request_and_answered_201(deployment: Deployment,
                                                                  org: Organization) -> None:
    # Given the sample POST /v3/memory event, as API Gateway passes it after the authorizer
    event = load_event("api_post_memory.json")
    # When the API function handles it
    status, body, headers = call_api(event)
    # Then it was written in the request, as the local server does: 201, and no summary (the two-sentence
    # note is no longer than a summary: it is its own)
    assert status == 201
    assert body["status"] == "ready" and body["title"] == "Miso meds" and body["chunk_count"] == 1
    assert body["summary"] is None
    assert headers["RateLimit-Limit"] == "100" and headers["RateLimit-Remaining"] == "99"
    doc = deployment.services().metadata.get_document(ORG_ID, body["id"])
    assert doc.status == DocumentStatus.READY and doc.metadata["tags"] == ["pets", "health"]
    recall = load_event("api_recall.json")
    recall["body"] = json.dumps({"query": "thyroid pill for the cat"})
    status, found, _ = call_api(recall)
    assert status == 200 and found["results"][0]["document_id"] == body["id"]
    # and its safety net is one delayed ingest message (nothing to run now), which the consumer
    # drops when it arrives, since the document was written after it was queued
    attributes = deployment.sqs.get_queue_attributes(QueueUrl=deployment.ingest_queue_url,
                                                     AttributeNames=["All"])["Attributes"]
    assert (attributes["ApproximateNumberOfMessages"], attributes["ApproximateNumberOfMessagesDelayed"]) == \
        ("0", "1")
    job = IngestJob(document_id=body["id"], organization_id=ORG_ID, created_at=T0, not_before=T0)
    sqs = load_event("ingest_consumer_single.json")
    sqs["Records"][0]["body"] = job.model_dump_json()
    assert DEPLOYMENT["current"].invoke("ingest_consumer", sqs) == {"batchItemFailures": []}
    assert deployment.executions() == []


def test_a_save_over_the_inline_limit_is_queued_with_202_and_one_ingest_message(
        deployment: Deployment, org: Organization) -> None:
    event = load_event("api_post_memory.json")
    event["body"] = json.dumps({"content": "The greenhouse log. " + "Vent opened at noon. " * 1200,
                                "title": "Greenhouse log"})
    status, body, _ = call_api(event)
    assert status == 202
    assert body["status"] == "queued" and body["title"] == "Greenhouse log" and body["chunk_count"] == 0
    (message,) = deployment.ingest_messages()
    job = IngestJob.model_validate_json(message["Body"])
    assert (job.document_id, job.organization_id) == (body["id"], ORG_ID)


def test_same_content_twice_is_a_duplicate_not_a_second_write(deployment: Deployment,
                                                              org: Organization) -> None:
    first = call_api(load_event("api_post_memory.json"))
    second = call_api(load_event("api_post_memory.json"))
    assert first[0] == 201 and second[0] == 200
    assert second[1]["duplicate"] is True and second[1]["id"] == first[1]["id"]
    assert deployment.services().metadata.get_chunks(ORG_ID, first[1]["id"])[0].chunk_index == 0
    assert len(deployment.search.document_ids(ORG_ID)) == 1


def test_health_projects_document_and_recall_routes(deployment: Deployment, org: Organization) -> None:
    status, body, _ = call_api(load_event("api_health.json"))
    assert status == 200 and body["status"] == "ok" and body["embedder"] == "test/hash/256"

    status, body, _ = call_api(load_event("api_list_projects.json"))
    assert status == 200
    assert [(p["name"], p["is_default"]) for p in body["projects"]] == [("Default", True)]

    status, body, _ = call_api(load_event("api_get_document.json"))  # a document that does not exist
    assert status == 404 and "not found" in body["error"]

    status, body, _ = call_api(load_event("api_recall.json"))  # nothing indexed yet
    assert status == 200 and body["results"] == [] and body["total"] == 0


def test_rate_limit_is_counted_in_dynamodb_and_answers_429(deployment: Deployment, org: Organization) -> None:
    # Given a key limited to 2 requests a minute (the authorizer passes the limit as context)
    event = load_event("api_list_projects.json")
    event["requestContext"]["authorizer"]["rate_limit"] = "2"
    # When it makes three requests within the minute
    statuses = [call_api(json.loads(json.dumps(event)))[0] for _ in range(3)]
    # Then the third is refused with Retry-After, and another key is unaffected
    assert statuses == [200, 200, 429]
    status, body, headers = call_api(json.loads(json.dumps(event)))
    assert status == 429 and int(headers["Retry-After"]) >= 1 and "rate limit of 2" in body["error"]
    other = json.loads(json.dumps(event))
    other["requestContext"]["authorizer"]["key_id"] = "another-key"
    assert call_api(other)[0] == 200
    # and a new minute starts a new window
    deployment.clock.advance(seconds=61)
    assert call_api(json.loads(json.dumps(event)))[0] == 200


# --------------------------------------------------------------------------- authorizer


@pytest.fixture
def secret(deployment: Deployment, org: Organization) -> str:
    value, key, _ = create_key(deployment.services().metadata, "default", "laptop", rate_limit_per_minute=250)
    return value


def authorize(event: dict) -> dict:
    return DEPLOYMENT["current"].invoke("authorizer", event, context("authorizer"))


@pytest.mark.parametrize(("event_file", "header"), [("authorizer_bearer.json", "Authorization"),
                                                    ("authorizer_x_api_key.json", "x-api-key")])
def test_authorizer_allows_a_valid_key_on_every_route(deployment: Deployment, secret: str, event_file: str,
                                                      header: str) -> None:
    # Given the REQUEST event with the key in either header
    event = with_key(load_event(event_file), secret, header)
    # When the authorizer runs
    response = authorize(event)
    # Then it allows one policy that covers every method and path of the stage
    (statement,) = response["policyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and statement["Action"] == "execute-api:Invoke"
    (resource,) = statement["Resource"]
    assert resource == "arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5/dev/*/*"
    for method, path in [("POST", "v3/recall"), ("GET", "v3/documents/abc"), ("DELETE", "v3/documents/abc"),
                         ("POST", "index"), ("GET", "v3/projects")]:
        route = f"arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5/dev/{method}/{path}"
        assert fnmatch.fnmatchcase(route, resource)
    # with the caller's identity as context (strings, as API Gateway passes them on)
    store = deployment.services().metadata
    key = store.find_api_key_by_hash(hashlib.sha256(secret.encode()).hexdigest())
    assert response["context"] == {"organization_id": ORG_ID, "key_id": key.id, "user_id": "api",
                                   "rate_limit": "250", "can_manage_keys": "false", "via": "key"}
    assert response["principalId"] == key.id
    # and the usage plan's key value: the SHA-256 of the memlane key
    assert response["usageIdentifierKey"] == hashlib.sha256(secret.encode()).hexdigest()


@pytest.mark.parametrize("event_file", ["authorizer_bearer.json", "authorizer_missing_key.json"])
def test_authorizer_refuses_unknown_and_missing_keys(deployment: Deployment, secret: str,
                                                     event_file: str) -> None:
    # The sample events carry no real key (or none at all): API Gateway turns this into a 401
    with pytest.raises(Exception, match="^Unauthorized$"):
        authorize(load_event(event_file))


def test_revoked_key_is_refused_on_its_next_request(deployment: Deployment, secret: str) -> None:
    event = with_key(load_event("authorizer_bearer.json"), secret)
    assert authorize(json.loads(json.dumps(event)))["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    store = deployment.services().metadata
    key = store.find_api_key_by_hash(hashlib.sha256(secret.encode()).hexdigest())
    assert store.revoke_api_key(key.id, deployment.clock.now() + timedelta(seconds=1))
    with pytest.raises(Exception, match="^Unauthorized$"):
        authorize(event)


def test_authorizer_output_is_what_the_api_reads(deployment: Deployment, secret: str) -> None:
    # Given the authorizer's context placed into the proxy event, as API Gateway does
    context_values = authorize(with_key(load_event("authorizer_bearer.json"), secret))["context"]
    event = load_event("api_list_projects.json")
    event["requestContext"]["authorizer"] = {**context_values, "principalId": context_values["key_id"]}
    # Then the API serves that organization, with that key's limit
    status, body, headers = call_api(event)
    assert status == 200 and body["projects"][0]["name"] == "Default"
    assert headers["RateLimit-Limit"] == "250"


def test_the_api_function_flushes_its_counts_as_cloudwatch_emf(deployment: Deployment, org: Organization,
                                                              capsys, monkeypatch) -> None:
    # Given the namespace the stack sets on every function, and its service name: Powertools reads
    # POWERTOOLS_SERVICE_NAME once, when functions._handler is first imported, which an earlier test
    # (tests/infra's trace of every handler) may have done without the stack's environment
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "memlane")
    from functions import _handler

    monkeypatch.setattr(_handler.metrics.provider, "service", "memlane")
    # When a save is handled
    call_api(load_event("api_post_memory.json"))
    # Then one EMF document on stdout carries its counts in memlane's namespace
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    (document,) = [d for d in emf if "MemorySaved" in d]
    (directive,) = document["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "memlane"
    assert {m["Name"] for m in directive["Metrics"]} >= {"MemorySaved", "DocumentsWritten"}
    assert document["MemorySaved"] in (1.0, [1.0]) and document["service"] == "memlane"
