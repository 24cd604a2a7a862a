"""Connections on AWS, on moto: the OAuth flow through the AWS adapters (DynamoDB, KMS, the OAuth
clients in Secrets Manager), the 15-minute schedule sending due connections to the sync queue, and
the sync function syncing a fake GitHub on loopback into DynamoDB and the search index."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fn_support import ORG_ID, Deployment, context, load_event

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "connections"))

from fake_github import FakeGitHub  # noqa: E402
from fake_provider import CLIENT_ID, CLIENT_SECRET  # noqa: E402

from functions.invoke import invoke  # noqa: E402
from memlane.adapters.aws._boto import new_client  # noqa: E402
from memlane.aws import compose  # noqa: E402
from memlane.connections import service  # noqa: E402
from memlane.connections.schemas import ConnectionIn  # noqa: E402
from memlane.domain.connections import ConnectionStatus  # noqa: E402
from memlane.domain.models import Organization  # noqa: E402
from memlane.domain.principal import Principal  # noqa: E402

REPO = "acme/ops"


@pytest.fixture(scope="module")
def fake():
    f = FakeGitHub().start()
    f.repo(REPO).files.update({"README.md": b"# Ops\n\nPager rotation starts Mondays.\n",
                               "scripts/rotate.py": b"def rotate(team):\n    return team[1:] + team[:1]\n"})
    f.add_issue(REPO, 1, "Pager fatigue", "Too many night pages.")
    yield f
    f.stop()


@pytest.fixture
def connections(deployment: Deployment, monkeypatch: pytest.MonkeyPatch, fake) -> dict:
    """What the stack adds for connections (the KMS key, the sync queue, the OAuth clients' secret)
    and the services the functions would compose from that environment."""
    key = new_client("kms").create_key(Description="memlane connections")["KeyMetadata"]["Arn"]
    queue = deployment.sqs.create_queue(QueueName="memlane-dev-SyncQueue")["QueueUrl"]
    new_client("secretsmanager").create_secret(Name="memlane/connections", SecretString=json.dumps({"github": {
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "authorize_url": f"{fake.url}/oauth/authorize",
        "token_url": f"{fake.url}/oauth/token", "api_url": fake.url}}))
    for name, value in {"MEMLANE_CONNECTIONS_KEY": key, "MEMLANE_SYNC_QUEUE_URL": queue,
                        "MEMLANE_CONNECTIONS_SECRET": "memlane/connections",
                        "MEMLANE_PUBLIC_URL": "https://abc123.execute-api.us-east-1.amazonaws.com/dev/"}.items():
        monkeypatch.setenv(name, value)
    services = compose.compose_aws(compose.AwsSettings.from_env(), compose.memlane_settings(),
                                   embedder=deployment.embedder, index=deployment.search, clock=deployment.clock)
    return {"key": key, "queue": queue, "services": services}


def drain(deployment: Deployment, queue: str) -> list[dict]:
    messages: list[dict] = []
    while batch := deployment.sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages"):
        messages += batch
        deployment.sqs.delete_message_batch(QueueUrl=queue, Entries=[
            {"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in batch])
    return messages


def test_schedule_and_sync_function_sync_a_connection_on_aws(deployment: Deployment, org: Organization,
                                                            connections, fake) -> None:
    svc = connections["services"]
    who = Principal(organization_id=ORG_ID, key_id="k1")

    # Given a GitHub connection made through the AWS adapters (KMS-sealed tokens, clients from Secrets Manager)
    started = service.start_connection(svc, who, ConnectionIn(provider="github", options={"repositories": [REPO]}))
    location = urlsplit(httpx.get(started.authorization_url, follow_redirects=False).headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == \
        "https://abc123.execute-api.us-east-1.amazonaws.com/dev/oauth/callback"
    back = {k: v[0] for k, v in parse_qs(location.query).items()}
    out = service.complete_authorization(svc, who, state=back["state"], code=back["code"])
    stored = svc.connections.store.get_connection(ORG_ID, out.id)
    assert stored.status == ConnectionStatus.ACTIVE and stored.sealed_tokens.startswith("kms1.")
    # and a paused connection of another organization
    other = svc.connections.store.get_connection(ORG_ID, out.id).model_copy(
        update={"id": "c0440000-0000-4000-8000-0000000000ff", "organization_id": "other-org",
                "status": ConnectionStatus.PAUSED})
    svc.connections.store.put_connection(other)
    assert [json.loads(m["Body"])["connection_id"] for m in drain(deployment, connections["queue"])] == [out.id], \
        "the callback asked for a first sync"

    # When the 15-minute schedule fires
    report = invoke("connection_schedule", load_event("connection_schedule.json"), context("connection-schedule"),
                    services=svc)

    # Then exactly the due connection is on the sync queue
    assert (report["due"], report["sent"]) == (1, 1)
    messages = drain(deployment, connections["queue"])
    assert [json.loads(m["Body"]) for m in messages] == [{"organization_id": ORG_ID, "connection_id": out.id}]

    # When the sync function receives it
    event = load_event("connection_sync_batch.json")
    record = copy.deepcopy(event["Records"][0])
    event["Records"] = [{**record, "messageId": m["MessageId"], "body": m["Body"]} for m in messages]
    answer = invoke("connection_sync", event, context("connection-sync"), services=svc)

    # Then the repository's files and its issue are documents in DynamoDB and the search index
    assert answer == {"batchItemFailures": []}
    synced = svc.connections.store.get_connection(ORG_ID, out.id)
    assert (synced.last_result.added, synced.last_result.errors) == (3, [])
    titles = {d.title for d in svc.metadata.list_documents(ORG_ID, synced.project_id)}
    assert titles == {"README.md", "scripts/rotate.py", "acme/ops#1: Pager fatigue"}
    assert len(deployment.search.document_ids(ORG_ID)) == 3

    # and a schedule right after finds nothing due
    again = invoke("connection_schedule", load_event("connection_schedule.json"), context("connection-schedule"),
                   services=svc)
    assert again["due"] == 0 and drain(deployment, connections["queue"]) == []


def test_a_malformed_sync_message_is_the_only_one_retried(deployment: Deployment, org: Organization,
                                                           connections) -> None:
    event = load_event("connection_sync_batch.json")
    good = event["Records"][0]  # names a connection that does not exist: nothing to do, not an error
    bad = {**good, "messageId": "bad-1", "body": "{\"connection\": 1}"}
    event["Records"] = [good, bad]
    answer = invoke("connection_sync", event, context("connection-sync"), services=connections["services"])
    assert answer == {"batchItemFailures": [{"itemIdentifier": "bad-1"}]}
