"""The keys admin function: memlane keys and their API Gateway twins in the usage plan."""

from __future__ import annotations

import hashlib

import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber
from fn_support import ORG_ID, Deployment, context, load_event

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.api_keys import GATEWAY_KEY_ATTRIBUTE, ApiGatewayKeyRegistry
from memlane.domain.models import Organization


def admin(deployment: Deployment, event: dict, **overrides) -> dict:
    return deployment.invoke("admin_keys", event, context("keys"), **overrides)


def test_create_shows_the_secret_once_and_registers_it_with_the_usage_plan(deployment: Deployment,
                                                                         org: Organization) -> None:
    # When the operator runs the stack output's command: {"action":"create","org":"default"}
    created = admin(deployment, load_event("admin_keys_create.json"))
    # Then the secret is in the answer (once), for the existing default organization
    secret = created["secret"]
    assert secret.startswith("mlk_") and created["organization_id"] == ORG_ID
    assert created["key"]["prefix"] == secret[:12] and created["key"]["active"] is True
    digest = hashlib.sha256(secret.encode()).hexdigest()
    # and API Gateway knows the key by its SHA-256, in the per-key usage plan
    gateway_key = deployment.apigateway.get_api_key(apiKey=created["gateway_key_id"], includeValue=True)
    assert gateway_key["value"] == digest and gateway_key["enabled"] is True
    plan_keys = deployment.apigateway.get_usage_plan_keys(usagePlanId=deployment.usage_plan_id)["items"]
    assert [k["id"] for k in plan_keys] == [created["gateway_key_id"]]
    # and memlane's key record remembers the gateway's id (for revoking)
    item = deployment.dynamodb.get_item(TableName="memlane-fn-test",
                                        Key={"pk": {"S": f"KEY#{digest}"}, "sk": {"S": "KEY"}})["Item"]
    assert item[GATEWAY_KEY_ATTRIBUTE]["S"] == created["gateway_key_id"]
    assert "secret" not in str(item) and secret not in str(item)


def test_list_never_shows_secrets(deployment: Deployment, org: Organization) -> None:
    created = admin(deployment, load_event("admin_keys_create.json"))
    listed = admin(deployment, load_event("admin_keys_list.json"))
    assert [k["id"] for k in listed["keys"]] == [created["key"]["id"]]
    assert "secret" not in listed and created["secret"] not in str(listed)
    assert admin(deployment, {"action": "list", "org": "default"})["keys"][0]["organization_id"] == ORG_ID
    assert admin(deployment, {"action": "list", "org": "nobody"}) == {"error": "org: organization 'nobody' not found"}


def test_revoke_deletes_the_gateway_key_and_the_authorizer_refuses_it(deployment: Deployment,
                                                                    org: Organization) -> None:
    created = admin(deployment, load_event("admin_keys_create.json"))
    event = load_event("admin_keys_revoke.json")
    event["key_id"] = created["key"]["id"]
    assert admin(deployment, event) == {"action": "revoke", "message": f"revoked {created['key']['id']}"}
    assert deployment.apigateway.get_api_keys()["items"] == []
    request = load_event("authorizer_bearer.json")
    request["headers"]["Authorization"] = f"Bearer {created['secret']}"
    with pytest.raises(Exception, match="^Unauthorized$"):
        deployment.invoke("authorizer", request, context("authorizer"))
    # revoking again is harmless; an unknown key is a clear error rather than a crash
    assert admin(deployment, event)["message"] == f"revoked {created['key']['id']}"
    assert admin(deployment, {"action": "revoke", "key_id": "nope"}) == {"error": "key_id: no key 'nope'"}


def test_a_key_the_gateway_cannot_register_is_revoked_again(deployment: Deployment, org: Organization,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Given API Gateway creates the key but then refuses to attach it to the usage plan
    apigateway = new_client("apigateway")
    stub = Stubber(apigateway)
    stub.add_response("create_api_key", {"id": "gw-key-1", "enabled": True},
                      {"name": ANY, "description": ANY, "enabled": True, "value": ANY})
    stub.add_client_error("create_usage_plan_key", "NotFoundException", "Invalid Usage Plan ID", 404)
    stub.add_response("delete_api_key", {}, {"apiKey": "gw-key-1"})
    registry = ApiGatewayKeyRegistry(deployment.usage_plan_id, "memlane-fn-test", apigateway=apigateway)
    # When a key is created
    with stub, pytest.raises(ClientError, match="NotFoundException"):
        admin(deployment, load_event("admin_keys_create.json"), registry=registry)
    # Then the half-made gateway key was deleted and the memlane key revoked: nothing is left that
    # would be accepted by the authorizer but refused by the usage plan
    stub.assert_no_pending_responses()
    keys = deployment.services().metadata.list_api_keys()
    assert len(keys) == 1 and keys[0].active is False


@pytest.mark.parametrize(("payload", "message"), [
    ({"action": "explode"}, "action: Input should be 'create', 'list' or 'revoke'"),
    ({"action": "revoke"}, "payload: Value error, key_id: required to revoke a key"),
    ({"action": "create", "rate_limit_per_minute": 0}, "rate_limit_per_minute: Input should be greater"),
])
def test_bad_payloads_are_answered_not_raised(deployment: Deployment, payload: dict, message: str) -> None:
    assert admin(deployment, payload)["error"].startswith(message)
