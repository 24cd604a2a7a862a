"""API Gateway between an HTTP client and memlane's Lambda functions, for the function tests: an
httpx2 transport that, for each request, runs the REQUEST authorizer function (with the test's
moto deployment as its dependencies) with the event API Gateway builds, answers a refusal with the UNAUTHORIZED gateway response the stack configures
(401 + WWW-Authenticate), checks the returned policy allows the route, and hands the API function
the REST proxy event with the authorizer's context. So the official MCP client can talk to the
API Lambda handler exactly as it would to the deployed stack."""

from __future__ import annotations

import copy
import fnmatch
import json
from typing import Any

import anyio
import httpx2
from fn_support import Deployment, context, load_event

from memlane.api.app import PUBLIC_ROUTES
from memlane.api.auth import www_authenticate

API_ID = "a1b2c3d4e5"
STAGE = "dev"
HOST = f"{API_ID}.execute-api.us-east-1.amazonaws.com"
BASE_URL = f"https://{HOST}/{STAGE}"
ARN = f"arn:aws:execute-api:us-east-1:123456789012:{API_ID}/{STAGE}"


class ApiGatewayStandIn:
    def __init__(self, deployment: Deployment, **authorizer_dependencies: Any) -> None:
        """`authorizer_dependencies`: what the stack would give the authorizer beyond the store
        (with OAuth: the token validator)."""
        self.deployment = deployment
        self.authorizer_dependencies = authorizer_dependencies
        self.api_calls = 0

    def transport(self) -> httpx2.MockTransport:
        async def handle(request: httpx2.Request) -> httpx2.Response:
            body = await request.aread()
            # The handlers run their own event loop (the MCP transport): off this one, as on Lambda.
            return await anyio.to_thread.run_sync(self.exchange, request.method, request.url.path,
                                                  dict(request.headers), body)

        return httpx2.MockTransport(handle)

    def client(self, key: str | None) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx2.AsyncClient(transport=self.transport(), headers=headers, base_url=BASE_URL)

    def exchange(self, method: str, url_path: str, headers: dict[str, str], body: bytes) -> httpx2.Response:
        path = url_path.removeprefix(f"/{STAGE}") or "/"
        headers = {**headers, "Host": HOST}
        authorizer = self._authorize(method, path, headers)
        if isinstance(authorizer, httpx2.Response):
            return authorizer
        event = load_event("api_recall.json")
        event.update(path=path, httpMethod=method, headers=headers,
                     multiValueHeaders={k: [v] for k, v in headers.items()},
                     pathParameters={"proxy": path.lstrip("/")}, body=body.decode("utf-8") if body else None)
        event["requestContext"].update(path=f"/{STAGE}{path}", httpMethod=method, authorizer=authorizer,
                                       requestId=f"req-{self.api_calls}")
        self.api_calls += 1
        result = self.deployment.invoke("api", event, context("api"))
        out_headers = dict(result.get("headers") or {})
        for k, values in (result.get("multiValueHeaders") or {}).items():
            out_headers[k] = ", ".join(values)
        return httpx2.Response(result["statusCode"], headers=out_headers,
                               content=(result.get("body") or "").encode("utf-8"))

    def _authorize(self, method: str, path: str, headers: dict[str, str]) -> dict[str, Any] | httpx2.Response:
        if method == "OPTIONS" or (method, path) in PUBLIC_ROUTES:  # methods without the authorizer
            return {}
        event = copy.deepcopy(load_event("authorizer_bearer.json"))
        event.update(path=path, httpMethod=method, headers=headers,
                     multiValueHeaders={k: [v] for k, v in headers.items()},
                     methodArn=f"{ARN}/{method}{path}")
        try:
            response = self.deployment.invoke("authorizer", event, context("authorizer"),
                                              **self.authorizer_dependencies)
        except Exception as exc:
            if str(exc) != "Unauthorized":
                raise
            return httpx2.Response(401, headers={"Content-Type": "application/json",
                                                 "WWW-Authenticate": www_authenticate(BASE_URL)},
                                   content=json.dumps({"error": "Unauthorized"}).encode())
        (statement,) = response["policyDocument"]["Statement"]
        if statement["Effect"] != "Allow" or not any(
                fnmatch.fnmatchcase(f"{ARN}/{method}{path}", r) for r in statement["Resource"]):
            return httpx2.Response(403, json={"error": "User is not authorized to access this resource"})
        return {**response["context"], "principalId": response["principalId"]}
