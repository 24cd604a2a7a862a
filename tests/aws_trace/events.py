"""The events Lambda hands memlane's functions, built from the samples in events/ (the shapes API
Gateway, SQS and EventBridge Scheduler send)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from aws_trace.needs import queue_arn

EVENTS = Path(__file__).resolve().parents[2] / "events"


def load(name: str) -> Any:
    return copy.deepcopy(json.loads((EVENTS / name).read_text()))


def sqs_event(queue_url: str, messages: list[dict[str, Any]], region: str) -> dict[str, Any]:
    template = load("ingest_consumer_single.json")["Records"][0]
    records = []
    for message in messages:
        attributes = {**template["attributes"], **message.get("Attributes", {})}
        records.append({**template, "messageId": message["MessageId"], "receiptHandle": message["ReceiptHandle"],
                        "body": message["Body"], "attributes": attributes, "md5OfBody": message["MD5OfBody"],
                        "eventSourceARN": queue_arn(queue_url), "awsRegion": region})
    return {"Records": records}


def authorizer_event(key: str, method: str, path: str, api_id: str, stage: str, region: str) -> dict[str, Any]:
    event = load("authorizer_bearer.json")
    event.update(path=path, httpMethod=method)
    event["headers"]["Authorization"] = f"Bearer {key}"
    event["multiValueHeaders"]["Authorization"] = [f"Bearer {key}"]
    event["methodArn"] = f"arn:aws:execute-api:{region}:123456789012:{api_id}/{stage}/{method}{path}"
    return event


def api_event(method: str, path: str, *, authorizer: dict[str, Any] | None, body: Any = None,
              query: dict[str, str] | None = None, stage: str = "dev", raw_body: str | None = None,
              headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A REST API proxy event as API Gateway sends it after the authorizer (its context in
    requestContext.authorizer), or for a public route (no authorizer)."""
    event = load("api_post_memory.json")
    text = raw_body if raw_body is not None else (json.dumps(body) if body is not None else None)
    event.update(httpMethod=method, path=path, body=text, queryStringParameters=query,
                 multiValueQueryStringParameters={k: [v] for k, v in query.items()} if query else None,
                 pathParameters={"proxy": path.lstrip("/")})
    for name, value in (headers or {}).items():
        event["headers"][name] = value
        event["multiValueHeaders"][name] = [value]
    context = event["requestContext"]
    context.update(httpMethod=method, path=f"/{stage}{path}", stage=stage)
    if authorizer is None:
        context.pop("authorizer", None)
        event["headers"].pop("Authorization", None)
        event["multiValueHeaders"].pop("Authorization", None)
    else:
        context["authorizer"] = {**authorizer, "principalId": authorizer.get("key_id", "")}
    return event


def scheduled(job: str) -> dict[str, Any]:
    return load(f"{job}_schedule.json") if job != "connections" else load("connection_schedule.json")
