"""MCP at /mcp on AWS: the 401 challenge every refusal carries, the public discovery routes, and
with `oauth=true` (the prod variant) the Cognito user pool that issues tokens bound to /mcp."""

from __future__ import annotations

import pytest
from infra_helpers import function_by_handler, join_to_text

from infra import constants as c
from memlane.domain import oauth

pytestmark = pytest.mark.infra

API = "<ApiRestApiE35FEAFE>"
PUBLIC_URL = f"https://{API}.execute-api.<AWS::Region>.<AWS::URLSuffix>/{{stage}}"


def _env(synth, spec) -> dict[str, str]:
    _, function = function_by_handler(synth, spec.handler)
    return {k: join_to_text(v) for k, v in function["Properties"]["Environment"]["Variables"].items()}


def _unauthorized(synth) -> dict:
    (response,) = [r["Properties"] for r in synth.of_type("AWS::ApiGateway::GatewayResponse").values()
                   if r["Properties"]["ResponseType"] == "UNAUTHORIZED"]
    return response


def _methods_by_path(synth) -> dict[tuple[str, str], dict]:
    resources = synth.of_type("AWS::ApiGateway::Resource")

    def path(ref: str) -> str:
        props = resources[ref]["Properties"]
        parent = props["ParentId"]
        prefix = path(parent["Ref"]) if "Ref" in parent else ""
        return f"{prefix}/{props['PathPart']}"

    found = {}
    for method in synth.of_type("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        resource = props["ResourceId"]
        found[(props["HttpMethod"], path(resource["Ref"]) if "Ref" in resource else "/")] = props
    return found


def test_every_refusal_names_the_protected_resource_metadata(dev, prod) -> None:
    for synth, stage in ((dev, "dev"), (prod, "prod")):
        response = _unauthorized(synth)
        assert response["StatusCode"] == "401"
        challenge = join_to_text(response["ResponseParameters"]["gatewayresponse.header.WWW-Authenticate"])
        assert challenge == (f"'Bearer resource_metadata=\"{PUBLIC_URL.format(stage=stage)}"
                             "/.well-known/oauth-protected-resource\"'")


def test_discovery_documents_are_public_and_the_functions_know_the_public_url(dev) -> None:
    methods = _methods_by_path(dev)
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                 "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        assert methods[("GET", path)]["AuthorizationType"] == "NONE", path
    # without OAuth, /mcp is one more path of {proxy+}: authorizer and usage-plan key, like REST
    assert not [p for _, p in methods if p == "/mcp"]
    assert not dev.of_type("AWS::Cognito::UserPool")
    for spec in (c.API_FUNCTION, c.AUTHORIZER_FUNCTION):
        env = _env(dev, spec)
        assert env["MEMLANE_PUBLIC_URL"] == PUBLIC_URL.format(stage="dev")
        assert oauth.ENV_ISSUER not in env


def test_the_user_pool_is_an_oauth_server_with_pkce_mfa_and_resource_binding(prod) -> None:
    (pool_id, pool), = prod.of_type("AWS::Cognito::UserPool").items()
    props = pool["Properties"]
    # Essentials: managed login and resource binding (aud = the resource indicator)
    assert props["UserPoolTier"] == "ESSENTIALS"
    assert props["AdminCreateUserConfig"] == {"AllowAdminCreateUserOnly": True}
    assert props["MfaConfiguration"] == "ON" and props["EnabledMfas"] == ["SOFTWARE_TOKEN_MFA"]
    policy = props["Policies"]["PasswordPolicy"]
    assert policy["MinimumLength"] >= 12 and all(
        policy[k] for k in ("RequireLowercase", "RequireUppercase", "RequireNumbers", "RequireSymbols"))
    assert props["DeletionProtection"] == "ACTIVE" and pool["DeletionPolicy"] == "Retain"  # prod keeps users

    (domain,) = prod.of_type("AWS::Cognito::UserPoolDomain").values()
    assert domain["Properties"]["ManagedLoginVersion"] == 2
    assert join_to_text(domain["Properties"]["Domain"]) == "memlane-prod-<AWS::AccountId>"
    (server,) = prod.of_type("AWS::Cognito::UserPoolResourceServer").values()
    resource = PUBLIC_URL.format(stage="prod") + "/mcp"
    assert join_to_text(server["Properties"]["Identifier"]) == resource
    assert server["Properties"]["Scopes"][0]["ScopeName"] == "tools"

    (client_id, client), = prod.of_type("AWS::Cognito::UserPoolClient").items()
    cp = client["Properties"]
    # a public client (PKCE, no secret), authorization code only, back to the configured clients
    assert cp["GenerateSecret"] is False and cp["AllowedOAuthFlows"] == ["code"]
    assert cp["CallbackURLs"] == ["https://claude.ai/api/mcp/auth_callback", "http://localhost:8765/callback"]
    scopes = [join_to_text(s) for s in cp["AllowedOAuthScopes"]]
    assert "openid" in scopes and any(s.endswith("/tools") for s in scopes)
    (branding,) = prod.of_type("AWS::Cognito::ManagedLoginBranding").values()
    assert branding["Properties"]["ClientId"] == {"Ref": client_id}
    (group,) = prod.of_type("AWS::Cognito::UserPoolGroup").values()
    assert group["Properties"]["GroupName"] == "org:default"

    # the authorizer and the API know the pool, its client and the public URL tokens are bound to
    for spec in (c.API_FUNCTION, c.AUTHORIZER_FUNCTION):
        env = _env(prod, spec)
        assert env[oauth.ENV_ISSUER] == f"https://cognito-idp.<AWS::Region>.<AWS::URLSuffix>/<{pool_id}>"
        assert env[oauth.ENV_CLIENT_IDS] == f"<{client_id}>"
        assert env[oauth.ENV_AUTH_DOMAIN].startswith("https://") and ".auth." in env[oauth.ENV_AUTH_DOMAIN]
        assert env["MEMLANE_PUBLIC_URL"] == PUBLIC_URL.format(stage="prod")


def test_with_oauth_mcp_needs_the_authorizer_but_no_api_gateway_key(prod) -> None:
    methods = _methods_by_path(prod)
    mcp = methods[("ANY", "/mcp")]
    (authorizer_id,) = prod.of_type("AWS::ApiGateway::Authorizer")
    assert mcp["AuthorizationType"] == "CUSTOM" and mcp["AuthorizerId"] == {"Ref": authorizer_id}
    assert mcp.get("ApiKeyRequired", False) is False
    # every other route still requires a key, so a token (which the authorizer limits to /mcp) is no API key
    assert methods[("ANY", "/{proxy+}")]["ApiKeyRequired"] is True
    outputs = prod.template_json["Outputs"]
    assert {"McpUrl", "OAuthClientId", "OAuthUserPoolId", "OAuthLoginDomain"} <= set(outputs)
