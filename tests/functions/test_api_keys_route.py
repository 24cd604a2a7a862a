"""POST/DELETE /v3/keys through the API function on AWS (moto): a key created from the web app is
registered in the per-key usage plan exactly as the admin function's keys are (the same
KeyRegistry), the plan found by the name the stack gives the API function."""

from __future__ import annotations

import hashlib
import json

import pytest
from fn_support import ORG_ID, Deployment, context, load_event

from functions.invoke import invoke
from memlane.adapters.aws.api_keys import GATEWAY_KEY_ATTRIBUTE
from memlane.aws import compose
from memlane.domain.models import Organization
from memlane.services.keys import create_key


@pytest.fixture
def plan_by_name(deployment: Deployment, monkeypatch: pytest.MonkeyPatch) -> Deployment:
    """The API function's environment: the usage plan's name, not its id."""
    monkeypatch.delenv("MEMLANE_USAGE_PLAN_ID")
    monkeypatch.setenv("MEMLANE_USAGE_PLAN_NAME", "memlane-dev-per-key")
    compose.reset_aws_services()
    return deployment


def call(method: str, path: str, key_id: str, manages: bool, body: dict | None = None) -> tuple[int, dict]:
    event = load_event("api_list_projects.json")
    event.update(httpMethod=method, path=path, resource="/{proxy+}", pathParameters={"proxy": path.lstrip("/")},
                 body=json.dumps(body) if body is not None else None)
    event["requestContext"].update(httpMethod=method, path=path)
    event["requestContext"]["authorizer"].update(key_id=key_id, can_manage_keys="true" if manages else "false")
    if body is not None:
        event["headers"]["Content-Type"] = "application/json"
    result = invoke("api", event, context("api"))
    return result["statusCode"], json.loads(result["body"] or "null")


def test_a_key_created_through_the_api_joins_the_usage_plan_and_leaves_it_when_revoked(
        plan_by_name: Deployment, org: Organization) -> None:
    deployment = plan_by_name
    _, manager, _ = create_key(deployment.services().metadata, "default", "admin", can_manage_keys=True)
    # When a managing key creates a key through the API function
    status, body = call("POST", "/v3/keys", manager.id, True, {"name": "laptop"})
    # Then the secret is answered once, and API Gateway knows the key by its SHA-256 in the plan
    assert status == 201, body
    digest = hashlib.sha256(body["secret"].encode()).hexdigest()
    (gateway_key,) = deployment.apigateway.get_api_keys(includeValues=True)["items"]
    assert gateway_key["value"] == digest
    plan_keys = deployment.apigateway.get_usage_plan_keys(usagePlanId=deployment.usage_plan_id)["items"]
    assert [k["id"] for k in plan_keys] == [gateway_key["id"]]
    item = deployment.dynamodb.get_item(TableName="memlane-fn-test",
                                        Key={"pk": {"S": f"KEY#{digest}"}, "sk": {"S": "KEY"}})["Item"]
    assert item[GATEWAY_KEY_ATTRIBUTE]["S"] == gateway_key["id"]
    assert item["organization_id"]["S"] == ORG_ID and item["can_manage_keys"]["BOOL"] is False
    # When it is revoked, Then its gateway twin is gone too
    status, _ = call("DELETE", f"/v3/keys/{body['key']['id']}", manager.id, True)
    assert status == 200
    assert deployment.apigateway.get_api_keys()["items"] == []


def test_a_key_that_may_not_manage_keys_creates_nothing(plan_by_name: Deployment, org: Organization) -> None:
    status, body = call("POST", "/v3/keys", "plain-key", False, {"name": "sneaky"})
    assert status == 403 and "may not manage keys" in body["error"]
    assert plan_by_name.apigateway.get_api_keys()["items"] == []
