"""API: REST API, REQUEST authorizer accepting either key header, public health/spec routes,
per-key usage plan, access logs and tracing."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match
from infra_helpers import as_list, function_by_handler, function_role, join_to_text, role_policies

from infra import constants as c
from memlane.adapters.aws.api_keys import API_KEY_STAGE_TAG

pytestmark = pytest.mark.infra


def _methods(synth):
    """{(http method, path part): properties} for every API Gateway method."""
    resources = synth.of_type("AWS::ApiGateway::Resource")
    found = {}
    for method in synth.of_type("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        resource = props["ResourceId"]
        path = resources[resource["Ref"]]["Properties"]["PathPart"] if "Ref" in resource else "/"
        found[(props["HttpMethod"], path)] = props
    return found


def test_authorizer_is_a_request_authorizer_that_accepts_either_header(dev):
    (authorizer,) = dev.of_type("AWS::ApiGateway::Authorizer").values()
    props = authorizer["Properties"]
    assert props["Type"] == "REQUEST"
    # Identity sources are mandatory at the gateway: listing Authorization and x-api-key would reject
    # requests that carry only one of them. None are listed, so the authorizer sees every request...
    assert "IdentitySource" not in props
    # ...and, without identity sources, caching must be off (a revoked key fails on the next request).
    assert props["AuthorizerResultTtlInSeconds"] == 0
    assert props["AuthorizerResultTtlInSeconds"] <= 60
    authorizer_id, _ = function_by_handler(dev, c.AUTHORIZER_FUNCTION.handler)
    assert authorizer_id in json.dumps(props["AuthorizerUri"])


def test_every_method_requires_the_authorizer_and_a_key_except_the_public_routes(dev):
    methods = _methods(dev)
    (authorizer_id,) = dev.of_type("AWS::ApiGateway::Authorizer")
    public = {("GET", "health"), ("GET", "openapi.json"), ("GET", "healthz"), ("GET", "capabilities"),
              # OAuth discovery for /mcp, under /.well-known/
              ("GET", "oauth-protected-resource"), ("GET", "mcp"), ("GET", "oauth-authorization-server"),
              ("GET", "openid-configuration"),
              ("GET", "callback"), ("POST", "github")}  # /oauth/callback, /webhooks/github (connections)
    preflight = {("OPTIONS", "/"), ("OPTIONS", "{proxy+}")}
    assert set(methods) == {("ANY", "/"), ("ANY", "{proxy+}")} | public | preflight
    for key, props in methods.items():
        if key in public | preflight:
            assert props["AuthorizationType"] == "NONE", key
            assert props.get("ApiKeyRequired", False) is False, key
        else:
            assert props["AuthorizationType"] == "CUSTOM", key
            assert props["AuthorizerId"] == {"Ref": authorizer_id}
            assert props["ApiKeyRequired"] is True, key


def test_every_method_is_a_proxy_to_the_api_function(dev):
    api_id, _ = function_by_handler(dev, c.API_FUNCTION.handler)
    for key, props in _methods(dev).items():
        integration = props["Integration"]
        assert integration["Type"] == "AWS_PROXY", key
        assert api_id in json.dumps(integration["Uri"]), key


def test_usage_plan_throttles_each_key_to_100_requests_a_minute(dev, serverless):
    plan = dev.template
    plan.has_resource_properties(
        "AWS::ApiGateway::UsagePlan",
        {
            "Throttle": {"RateLimit": 1.67, "BurstLimit": c.DEFAULT_BURST_LIMIT},
            "ApiStages": [Match.object_like({"ApiId": Match.any_value(), "Stage": Match.any_value()})],
        },
    )
    (props,) = [p["Properties"] for p in dev.of_type("AWS::ApiGateway::UsagePlan").values()]
    assert "Quota" not in props
    serverless.template.has_resource_properties(
        "AWS::ApiGateway::UsagePlan", {"Quota": {"Limit": 10000, "Period": "DAY"}}
    )


def test_api_keys_come_from_the_authorizer(dev):
    dev.template.has_resource_properties(
        "AWS::ApiGateway::RestApi",
        {"ApiKeySourceType": "AUTHORIZER", "EndpointConfiguration": {"Types": ["REGIONAL"]}},
    )


def test_stage_traces_logs_access_and_never_logs_bodies(dev):
    (stage,) = dev.of_type("AWS::ApiGateway::Stage").values()
    props = stage["Properties"]
    assert props["StageName"] == "dev"
    assert props["TracingEnabled"] is True
    destination = join_to_text(props["AccessLogSetting"]["DestinationArn"])
    log_group = destination.rsplit(":log-group:", 1)[1].strip("<>")
    assert dev.resources[log_group]["Type"] == "AWS::Logs::LogGroup"
    access_format = json.loads(props["AccessLogSetting"]["Format"])
    assert access_format["requestId"] == "$context.requestId"
    assert access_format["organizationId"] == "$context.authorizer.organization_id"
    (settings,) = props["MethodSettings"]
    assert settings["HttpMethod"] == "*"
    assert settings["ResourcePath"] == "/*"
    assert settings["LoggingLevel"] == "ERROR"
    assert settings["DataTraceEnabled"] is False
    assert settings["ThrottlingRateLimit"] == c.STAGE_THROTTLE_RATE_LIMIT


def test_gateway_errors_use_memlanes_error_shape_and_throttling_says_when_to_retry(dev):
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in dev.of_type("AWS::ApiGateway::GatewayResponse").values()
    }
    for response in responses.values():
        assert response["ResponseTemplates"] == {
            "application/json": '{"error": $context.error.messageString}'
        }
    assert responses["THROTTLED"]["StatusCode"] == "429"
    assert responses["THROTTLED"]["ResponseParameters"]["gatewayresponse.header.Retry-After"] == "'1'"
    assert responses["UNAUTHORIZED"]["StatusCode"] == "401"
    assert responses["MISSING_AUTHENTICATION_TOKEN"]["StatusCode"] == "404"


def test_authorizer_may_only_read_one_item(dev):
    _, authorizer = function_by_handler(dev, c.AUTHORIZER_FUNCTION.handler)
    data_actions = {
        a
        for s in role_policies(dev, function_role(authorizer))
        for a in as_list(s["Action"])
        if not a.startswith(("logs:", "xray:"))
    }
    assert data_actions == {"dynamodb:GetItem"}


def test_keys_function_manages_api_gateway_keys_of_its_usage_plan(dev):
    keys_id, keys = function_by_handler(dev, c.KEYS_FUNCTION.handler)
    (plan_id,) = dev.of_type("AWS::ApiGateway::UsagePlan")
    assert keys["Properties"]["Environment"]["Variables"][c.ENV_USAGE_PLAN_ID] == {"Ref": plan_id}
    statements = role_policies(dev, function_role(keys))
    posts = [join_to_text(r) for s in statements if s["Action"] == "apigateway:POST" for r in as_list(s["Resource"])]
    assert any(r.endswith("::/apikeys") for r in posts)
    assert any(r.endswith(f"::/usageplans/<{plan_id}>/keys") for r in posts)


@pytest.mark.parametrize("handler", [c.KEYS_FUNCTION.handler, c.API_FUNCTION.handler])
def test_api_key_grants_reach_only_the_keys_this_stack_tags(dev, handler):
    # Given the functions that create and revoke API Gateway keys (the keys function, the API's /v3/keys)
    _, function = function_by_handler(dev, handler)
    statements = role_policies(dev, function_role(function))
    on_keys = [s for s in statements if any(join_to_text(r).endswith(("::/apikeys", "::/apikeys/*", "::/tags/*"))
                                            for r in as_list(s["Resource"]))]
    tag = f"aws:RequestTag/{API_KEY_STAGE_TAG}"
    # Then a key may be created (and tagged on create) only with this stage's tag, and nothing else tagged
    for statement in [s for s in on_keys if s["Action"] in ("apigateway:POST", "apigateway:PUT")]:
        assert statement["Condition"] == {"StringEquals": {tag: "dev"},
                                          "ForAllValues:StringEquals": {"aws:TagKeys": [API_KEY_STAGE_TAG]}}
    # and deleted only when it carries that tag: never another stack's key, or any other key of the account
    (delete,) = [s for s in on_keys if s["Action"] == "apigateway:DELETE"]
    assert delete["Condition"] == {"StringEquals": {f"aws:ResourceTag/{API_KEY_STAGE_TAG}": "dev"}}
    assert {s["Action"] for s in on_keys} == {"apigateway:POST", "apigateway:PUT", "apigateway:DELETE"}


def test_outputs_give_the_url_and_the_first_key_command(dev):
    outputs = dev.template_json["Outputs"]
    assert "ApiUrl" in outputs
    command = join_to_text(outputs["CreateFirstKeyCommand"]["Value"])
    keys_id, _ = function_by_handler(dev, c.KEYS_FUNCTION.handler)
    assert command.startswith("aws lambda invoke --region <AWS::Region> --function-name ")
    assert f"<{keys_id}>" in command
    assert command.endswith(
        '--cli-binary-format raw-in-base64-out --payload \'{"action":"create","org":"default"}\' /dev/stdout'
    )


def test_account_level_cloudwatch_role_is_optional(dev, prod):
    assert len(dev.of_type("AWS::ApiGateway::Account")) == 1
    assert not prod.of_type("AWS::ApiGateway::Account")


def test_api_gateway_may_invoke_only_the_api_and_authorizer_functions_of_this_api(dev):
    api_id, _ = function_by_handler(dev, c.API_FUNCTION.handler)
    authorizer_id, _ = function_by_handler(dev, c.AUTHORIZER_FUNCTION.handler)
    (rest_api_id,) = dev.of_type("AWS::ApiGateway::RestApi")
    permissions = dev.of_type("AWS::Lambda::Permission").values()
    assert len(permissions) == len(_methods(dev)) + 1  # one per method, one for the authorizer
    for permission in permissions:
        props = permission["Properties"]
        assert props["Principal"] == "apigateway.amazonaws.com"
        source = join_to_text(props["SourceArn"])
        assert f":<{rest_api_id}>/" in source
        target = props["FunctionName"]["Fn::GetAtt"][0]
        if target == authorizer_id:
            assert "/authorizers/" in source
        else:
            assert target == api_id


def test_the_stage_serves_the_current_deployment(dev):
    (deployment_id,) = dev.of_type("AWS::ApiGateway::Deployment")
    (stage,) = dev.of_type("AWS::ApiGateway::Stage").values()
    assert stage["Properties"]["DeploymentId"] == {"Ref": deployment_id}
