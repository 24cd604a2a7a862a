"""Fixtures of the Lambda handler tests: moto started before any client exists, the resources
the CDK stack would create, memlane's AWS composition reset around each test (see fn_support)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import FixedClock, HashEmbedder  # noqa: E402
from fn_support import (  # noqa: E402
    BUCKET,
    ORG_ID,
    REGION,
    T0,
    TABLE,
    Deployment,
)

from memlane.adapters.aws._boto import new_client  # noqa: E402
from memlane.adapters.aws.dynamo_schema import TTL_ATTRIBUTE, table_definition  # noqa: E402
from memlane.adapters.local.search_index import SqliteSearchIndex  # noqa: E402
from memlane.adapters.local.sqlite_db import SqliteDatabase  # noqa: E402
from memlane.aws import compose  # noqa: E402
from memlane.domain.models import Organization, Project  # noqa: E402


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
        "MEMLANE_TABLE": TABLE, "MEMLANE_BUCKET": BUCKET, "MEMLANE_EMBEDDER": "bedrock",
        "MEMLANE_SEARCH_ENDPOINT": "search-memlane-dev.us-east-1.es.amazonaws.com",
        "MEMLANE_SEARCH_KIND": "managed", "MEMLANE_SEARCH_INDEX": "memlane-chunks",
        "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_SERVICE_NAME": "memlane",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "MEMLANE_INLINE_MAX_CHARS", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _state_machine(sfn: Any, iam: Any) -> str:
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                     "Principal": {"Service": "states.amazonaws.com"}}]}
    role = iam.create_role(RoleName="memlane-ingestion", AssumeRolePolicyDocument=json.dumps(trust))
    role = role["Role"]["Arn"]
    definition = {"StartAt": "Prepare", "States": {"Prepare": {"Type": "Pass", "End": True}}}
    return sfn.create_state_machine(name="memlane-dev-ingestion", definition=json.dumps(definition),
                                    roleArn=role)["stateMachineArn"]


@pytest.fixture
def deployment(aws_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Deployment]:
    with mock_aws():
        dynamodb = new_client("dynamodb")
        dynamodb.create_table(**table_definition(TABLE))
        dynamodb.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={
            "Enabled": True, "AttributeName": TTL_ATTRIBUTE})
        s3 = new_client("s3")
        s3.create_bucket(Bucket=BUCKET)
        sqs = new_client("sqs")
        ingest_url = sqs.create_queue(QueueName="memlane-dev-IngestQueue")["QueueUrl"]
        page_url = sqs.create_queue(QueueName="memlane-dev-PageQueue")["QueueUrl"]
        sfn = new_client("stepfunctions")
        machine = _state_machine(sfn, new_client("iam"))
        apigateway = new_client("apigateway")
        api_id = apigateway.create_rest_api(name="memlane-dev")["id"]
        plan = apigateway.create_usage_plan(name="memlane-dev-per-key",
                                            apiStages=[{"apiId": api_id, "stage": "dev"}],
                                            throttle={"rateLimit": 1.67, "burstLimit": 20})["id"]
        monkeypatch.setenv("MEMLANE_INGEST_QUEUE_URL", ingest_url)
        monkeypatch.setenv("MEMLANE_PAGE_QUEUE_URL", page_url)
        monkeypatch.setenv("MEMLANE_STATE_MACHINE_ARN", machine)
        monkeypatch.setenv("MEMLANE_USAGE_PLAN_ID", plan)

        clock = FixedClock(T0)
        embedder = HashEmbedder()
        search = SqliteSearchIndex(SqliteDatabase(tmp_path / "search.sqlite3"), embedder.dimension)
        aws = compose.AwsSettings.from_env()
        services = compose.compose_aws(aws, compose.memlane_settings(), embedder=embedder, index=search,
                                       clock=clock)
        yield Deployment(dynamodb=dynamodb, s3=s3, sqs=sqs, sfn=sfn, apigateway=apigateway,
                         ingest_queue_url=ingest_url, page_queue_url=page_url, state_machine_arn=machine,
                         usage_plan_id=plan, clock=clock, search=search, embedder=embedder, composed=services,
                         docsets=compose.build_docset_context(aws, services=services),
                         registry=compose.build_key_registry(aws), starter=compose.build_starter(aws))


@pytest.fixture
def org(deployment: Deployment) -> Organization:
    """The organization the events/ files name, with its default project."""
    store = deployment.services().metadata
    organization = store.create_organization(Organization(id=ORG_ID, name="default", slug="default",
                                                           created_at=T0, updated_at=T0))
    store.create_project(Project(organization_id=ORG_ID, name="Default", slug="default", is_default=True,
                                 created_at=T0, updated_at=T0))
    return organization


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The default deployment's state machine, synthesized once for every workflow test (a synth
    takes most of a minute)."""
    from asl import synthesize

    return synthesize(tmp_path_factory.mktemp("workflow-synth"))
