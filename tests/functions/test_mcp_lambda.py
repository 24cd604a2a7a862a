"""MCP over Streamable HTTP through the Lambda functions, under moto: the official SDK's client talks
to the API handler through an API Gateway stand-in (gateway_standin.py) that runs the REQUEST
authorizer first, with API keys and with OAuth access tokens."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import anyio
import pytest
from fn_support import ORG_ID, Deployment, context, load_event
from gateway_standin import BASE_URL, ApiGatewayStandIn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from oauth_fakes import TokenIssuer

from memlane.config.oauth import OAuthVariables
from memlane.domain.models import Organization
from memlane.mcp.definitions import BEHAVIOUR
from memlane.mcp.formatting import DATA_NOTICE
from memlane.services.keys import create_key
from memlane.services.oauth import OAuthSettings, TokenValidator

MCP_URL = f"{BASE_URL}/mcp"
OAUTH_ENV = ("MEMLANE_OAUTH_ISSUER", "MEMLANE_OAUTH_CLIENT_IDS", "MEMLANE_OAUTH_DOMAIN",
             "MEMLANE_OAUTH_RATE_LIMIT_PER_MINUTE", "MEMLANE_PUBLIC_URL")


@pytest.fixture
def gateway(deployment: Deployment, org: Organization, monkeypatch: pytest.MonkeyPatch) -> ApiGatewayStandIn:
    for name in OAUTH_ENV:
        monkeypatch.delenv(name, raising=False)
    return ApiGatewayStandIn(deployment)


@pytest.fixture
def key(deployment: Deployment, org: Organization) -> str:
    return create_key(deployment.services().metadata, "default", "claude")[0]


def session(gateway: ApiGatewayStandIn, credential: str | None) -> Client:
    return Client(streamable_http_client(MCP_URL, http_client=gateway.client(credential)), mode="legacy")


def text(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


def test_keys_save_recall_isolation_and_refusal_through_the_api_function(deployment: Deployment, gateway,
                                                                          key, monkeypatch) -> None:
    other = create_key(deployment.services().metadata, "Other org", "bot")[0]

    async def scenario() -> None:
        async with session(gateway, key) as c:
            # Given the tools listed by the API function, annotated as locally
            tools = (await c.list_tools()).tools
            assert {t.name: t.annotations.read_only_hint for t in tools} == {
                name: b.read_only for name, b in BEHAVIOUR.items()}
            # When a memory is saved (a small save is written in the request, on AWS too)
            saved = await c.call_tool("memory", {"content": "The boiler service is due every October.",
                                                 "title": "Boiler", "project": "House"})
            assert "searchable now" in text(saved)
            # Then it is recalled, quoted, for the same organization
            found = await c.call_tool("recall", {"query": "when is the boiler service due"})
            assert text(found).startswith(f'Found 1 memory for "when is the boiler service due". {DATA_NOTICE}')
            assert "\n> The boiler service is due every October." in text(found)
            who = text(await c.call_tool("whoAmI", {}))
            assert who.startswith(f'Organization "default" (id {ORG_ID}); user api; key ')
            docs = await c.call_tool("search_docs", {"query": "boiler"})
            assert text(docs) == 'No documentation snippets found for "boiler".'
        # one API invocation per MCP message: initialize, initialized, tools/list and four tool calls
        assert gateway.api_calls == 7

        # and another organization's key sees nothing of it
        async with session(gateway, other) as c:
            assert text(await c.call_tool("whoAmI", {})).startswith('Organization "Other org" (id ')
            assert text(await c.call_tool("recall", {"query": "boiler service"})) == (
                'No memories found for "boiler service".')
            named = await c.call_tool("recall", {"query": "boiler", "project": "House"})
            assert named.is_error and 'no project named "House"' in text(named)
            assert "House" not in text(await c.call_tool("listProjects", {}))

        # Without a valid key the authorizer refuses, and the gateway response carries the challenge
        async with gateway.client("mlk_wrong") as http:
            r = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert r.status_code == 401
            assert r.headers["WWW-Authenticate"] == (
                f'Bearer resource_metadata="{BASE_URL}/.well-known/oauth-protected-resource"')
            meta = await http.get("/.well-known/oauth-protected-resource")
            assert meta.json() == {"resource": MCP_URL, "resource_name": "memlane",
                                   "bearer_methods_supported": ["header"]}

        # Browser origins: the allow-list holds on AWS too (the API function checks it, preflights included)
        async with gateway.client(key) as http:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            evil = await http.post("/mcp", json=ping, headers={"Origin": "https://evil.example"})
            assert evil.status_code == 403
            pre = await http.options("/mcp", headers={"Origin": "http://localhost:6274",
                                                      "Access-Control-Request-Method": "POST"})
            assert pre.status_code == 204 and pre.headers["Access-Control-Allow-Origin"] == "http://localhost:6274"
            assert "MCP-Protocol-Version" in pre.headers["Access-Control-Allow-Headers"]
            # origins configured for the deployment (MEMLANE_ALLOWED_ORIGINS) are accepted too
            extension = "chrome-extension://" + "abcdefghijklmnopabcdefghijklmnop"
            assert (await http.post("/mcp", json=ping, headers={"Origin": extension})).status_code == 403
            monkeypatch.setenv("MEMLANE_ALLOWED_ORIGINS", extension)
            # a running function read its settings when it started: the change is not seen...
            assert (await http.post("/mcp", json=ping, headers={"Origin": extension})).status_code == 403
            # ...until the next cold start
            deployment.cold_start()
            allowed = await http.post("/mcp", json=ping, headers={"Origin": extension})
            assert allowed.status_code == 200 and allowed.headers["Access-Control-Allow-Origin"] == extension

    anyio.run(scenario)
    # The sample event (events/api_mcp_tools_list.json, as API Gateway passes it after the authorizer)
    listed = deployment.invoke("api", load_event("api_mcp_tools_list.json"), context("api"))
    assert listed["statusCode"] == 200
    assert len(json.loads(listed["body"])["result"]["tools"]) == len(BEHAVIOUR)
    # and the API function itself, reached without an authorizer context, answers the same way
    event = load_event("api_recall.json")
    event.update(path="/mcp", body='{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    event["requestContext"]["authorizer"] = None
    result = deployment.invoke("api", event, context("api"))
    assert result["statusCode"] == 401
    assert result["multiValueHeaders"]["WWW-Authenticate"] == [
        f'Bearer resource_metadata="{BASE_URL}/.well-known/oauth-protected-resource"']


# --------------------------------------------------------------------------- OAuth


@pytest.fixture
def issuer(monkeypatch: pytest.MonkeyPatch) -> Iterator[TokenIssuer]:
    """The stack with OAuth on: the functions' environment names the (stand-in) user pool."""
    i = TokenIssuer()
    for name, value in i.environment(public_url=BASE_URL).items():
        monkeypatch.setenv(name, value)
    yield i
    i.close()


@pytest.fixture
def oauth_gateway(deployment: Deployment, org: Organization, issuer: TokenIssuer) -> ApiGatewayStandIn:
    deployment.cold_start()  # the functions start with the pool in their environment
    settings = OAuthVariables.from_env(os.environ).settings()
    assert settings is not None
    return ApiGatewayStandIn(deployment, validator=TokenValidator(settings))


def test_an_access_token_from_the_pool_works_at_mcp_only_and_discovery_names_the_pool(
        issuer: TokenIssuer, oauth_gateway: ApiGatewayStandIn) -> None:
    gateway = oauth_gateway
    token = issuer.token(audience=MCP_URL)

    async def scenario() -> None:
        # Given a token the pool issued for <API>/mcp to a user of group org:default
        async with session(gateway, token) as c:
            # Then the MCP client works as that organization and user
            who = text(await c.call_tool("whoAmI", {}))
            assert who.startswith(f'Organization "default" (id {ORG_ID}); user ada; key oauth:')
            saved = await c.call_tool("memory", {"content": "Tokens work too.", "title": "OAuth"})
            assert not saved.is_error
        async with gateway.client(token) as http:
            # but the REST API is not its audience
            assert (await http.get("/v3/projects")).status_code == 401
            # and tokens for another resource, expired, or from another issuer are refused at /mcp
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            for bad in (issuer.token(audience="https://elsewhere.example/mcp"), issuer.token(expires_in=-300),
                        issuer.token(issuer="https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other"),
                        issuer.token(audience=None)):
                r = await http.post("/mcp", json=ping, headers={"Authorization": f"Bearer {bad}"})
                assert r.status_code == 401 and "resource_metadata=" in r.headers["WWW-Authenticate"]

        # What a client reads first: the metadata names memlane's base URL as the authorization server...
        async with gateway.client(None) as http:
            prm = ProtectedResourceMetadata.model_validate((await http.get("/.well-known/oauth-protected-resource")).json())
            assert str(prm.resource) == MCP_URL
            assert [str(a).rstrip("/") for a in prm.authorization_servers] == [BASE_URL]
            assert prm.scopes_supported == [f"{MCP_URL}/tools"]
            # ...whose metadata, where clients look for an issuer with a path (the stage), has PKCE S256
            for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
                document = (await http.get(path)).json()
                meta = OAuthMetadata.model_validate(document)
                assert str(meta.issuer).rstrip("/") == BASE_URL
                assert meta.code_challenge_methods_supported == ["S256"]
                assert document["jwks_uri"] == f"{issuer.issuer}/.well-known/jwks.json"

    anyio.run(scenario)


def test_a_cognito_token_without_resource_binding_is_refused(deployment: Deployment, gateway,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A real (moto) Cognito user pool: its access tokens are signed by the pool and carry the
    user's groups, but without a resource indicator they have no audience, so memlane refuses them."""
    import boto3
    import jwt
    import requests

    from memlane.domain.errors import AuthenticationError
    from memlane.services.oauth import authenticate_token

    cognito = boto3.client("cognito-idp", region_name="us-east-1")  # moto, started by `deployment`
    pool = cognito.create_user_pool(PoolName="memlane-dev-users")["UserPool"]["Id"]
    client = cognito.create_user_pool_client(UserPoolId=pool, ClientName="memlane-dev-mcp-clients",
                                             ExplicitAuthFlows=["ADMIN_NO_SRP_AUTH"])["UserPoolClient"]["ClientId"]
    cognito.create_group(UserPoolId=pool, GroupName="org:default")
    cognito.admin_create_user(UserPoolId=pool, Username="ada", TemporaryPassword="Temp-Passw0rd!x")
    cognito.admin_set_user_password(UserPoolId=pool, Username="ada", Password="Real-Passw0rd!x", Permanent=True)
    cognito.admin_add_user_to_group(UserPoolId=pool, Username="ada", GroupName="org:default")
    tokens = cognito.admin_initiate_auth(UserPoolId=pool, ClientId=client, AuthFlow="ADMIN_NO_SRP_AUTH",
                                         AuthParameters={"USERNAME": "ada", "PASSWORD": "Real-Passw0rd!x"})
    access = tokens["AuthenticationResult"]["AccessToken"]
    issuer = f"https://cognito-idp.us-east-1.amazonaws.com/{pool}"
    keys = jwt.PyJWKSet.from_dict(requests.get(f"{issuer}/.well-known/jwks.json", timeout=5).json())
    settings = OAuthSettings(issuer=issuer, public_url=BASE_URL, client_ids=frozenset({client}),
                             auth_domain="https://memlane-dev.auth.us-east-1.amazoncognito.com")
    validator = TokenValidator(settings, key_for=lambda token: keys[jwt.get_unverified_header(token)["kid"]].key)
    # The pool signed it and it is an access token of memlane's client, for a user of org:default...
    claims = jwt.decode(access, validator._key_for(access), algorithms=["RS256"], issuer=issuer,
                        options={"verify_aud": False})
    assert (claims["token_use"], claims["client_id"], claims["cognito:groups"]) == ("access", client, ["org:default"])
    # ...but it names no audience, so it is not a token for memlane's MCP endpoint
    with pytest.raises(AuthenticationError, match='Token is missing the "aud" claim'):
        authenticate_token(deployment.services().metadata, validator, access)
