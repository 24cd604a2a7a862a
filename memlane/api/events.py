"""The API Gateway REST proxy event the resolver reads, built for a request that did not come
through API Gateway: the local server's gateway (memlane.local.gateway), and the requests that
the MCP tools and the CLI send to the resolver in process (memlane.api.inprocess)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from urllib.parse import parse_qsl

# The largest request body memlane accepts (API Gateway's own limit is 10 MB too).
MAX_BODY_BYTES = 10 * 1024 * 1024
LOCAL_STAGE = "local"  # the stage an event built here names (API Gateway's is the deployed stage)


def build_event(
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: bytes,
    authorizer: Mapping[str, str] | None,
    source_ip: str = "127.0.0.1",
    received_at_ms: int = 0,
) -> dict:
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
            "stage": LOCAL_STAGE,
            "requestId": request_id,
            "requestTimeEpoch": received_at_ms,
            "identity": {"sourceIp": source_ip},
            "authorizer": dict(authorizer) if authorizer else None,
        },
        "body": text or None,
        "isBase64Encoded": is_b64,
    }
