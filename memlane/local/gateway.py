"""What API Gateway does in front of the Lambda, done locally: authorize the request with the
same logic as the Lambda authorizer, then build the REST proxy event and call the same handler."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

from memlane.api.app import PUBLIC_ROUTES, MemlaneApi
from memlane.api.auth import authorizer_context
from memlane.api.errors import error_body
from memlane.domain.errors import AuthenticationError
from memlane.services.context import Services
from memlane.services.keys import authenticate


@dataclass
class GatewayResponse:
    status: int
    headers: dict[str, str]
    body: bytes


def build_event(method: str, path: str, query: str, headers: Mapping[str, str], body: bytes,
                authorizer: Mapping[str, str] | None, source_ip: str = "127.0.0.1") -> dict:
    try:
        text = body.decode("utf-8")
        is_b64 = False
    except UnicodeDecodeError:
        text = base64.b64encode(body).decode()
        is_b64 = True
    pairs = parse_qsl(query, keep_blank_values=True)
    multi: dict[str, list[str]] = {}
    for k, v in pairs:
        multi.setdefault(k, []).append(v)
    request_id = str(uuid.uuid4())
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": dict(headers),
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi.items()} or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/{proxy+}",
            "httpMethod": method,
            "path": path,
            "stage": "local",
            "requestId": request_id,
            "requestTimeEpoch": int(time.time() * 1000),
            "identity": {"sourceIp": source_ip},
            "authorizer": dict(authorizer) if authorizer else None,
        },
        "body": text or None,
        "isBase64Encoded": is_b64,
    }


class LocalGateway:
    def __init__(self, api: MemlaneApi, services: Services) -> None:
        self.api = api
        self.services = services

    def handle(self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes,
               source_ip: str = "127.0.0.1") -> GatewayResponse:
        authorizer = None
        if (method.upper(), path) not in PUBLIC_ROUTES and method.upper() != "OPTIONS":
            try:
                authorizer = authorizer_context(authenticate(self.services.metadata, headers))
            except AuthenticationError as exc:
                return GatewayResponse(401, {"Content-Type": "application/json",
                                             "WWW-Authenticate": 'Bearer realm="memlane"'},
                                       error_body(exc.message).encode())
        event = build_event(method.upper(), path, query, headers, body, authorizer, source_ip)
        result = self.api.handle(event, None)
        out_headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
        for k, values in (result.get("multiValueHeaders") or {}).items():
            if values:
                out_headers[k] = ", ".join(str(v) for v in values)
        raw = result.get("body") or ""
        payload = base64.b64decode(raw) if result.get("isBase64Encoded") else raw.encode("utf-8")
        return GatewayResponse(int(result["statusCode"]), out_headers, payload)
