"""Shared by the Lambda handler tests (tests/functions): the ids the events/ files use, the
moto deployment they run against, event loading.

Lambda handlers are invoked with the events/ files under moto.

moto is started before any client exists; memlane's AWS composition is reset around each test, so
every handler composes its adapters against this test's moto account. Two ports are replaced, by
patching the composition's factories, never the handlers: the embedder (HashEmbedder, the same
fake the local-mode tests use) and the search engine (the local SqliteSearchIndex: moto has no
OpenSearch). Everything else is the real AWS adapter talking to moto.
"""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # `functions` is a top-level package beside memlane
    sys.path.insert(0, str(REPO_ROOT))

from fakes import FixedClock, HashEmbedder  # noqa: E402

from functions.invoke import LocalLambdaContext  # noqa: E402
from memlane.adapters.aws import compose  # noqa: E402
from memlane.adapters.local.search_index import SqliteSearchIndex  # noqa: E402

EVENTS = REPO_ROOT / "events"
REGION = "us-east-1"
TABLE = "memlane-fn-test"
BUCKET = "memlane-fn-test-content"
# The ids the events/ files use.
ORG_ID = "6d1f2b8e-3c4a-4e5f-9a7b-1c2d3e4f5a6b"
DOC_ID = "3f2e1d0c-9b8a-4765-8432-10fedcba9876"
T0 = datetime(2026, 11, 22, 3, 0, 0, tzinfo=UTC)


def load_event(name: str) -> Any:
    return copy.deepcopy(json.loads((EVENTS / name).read_text()))


def context(name: str = "test") -> LocalLambdaContext:
    return LocalLambdaContext(function_name=f"memlane-{name}")


@dataclass
class Deployment:
    """What the CDK stack would have created, in moto, and the clients to look at it."""

    dynamodb: Any
    s3: Any
    sqs: Any
    sfn: Any
    apigateway: Any
    ingest_queue_url: str
    page_queue_url: str
    state_machine_arn: str
    usage_plan_id: str
    clock: FixedClock
    search: SqliteSearchIndex
    embedder: HashEmbedder

    def services(self):
        return compose.build_aws_services()

    def ingest_messages(self) -> list[dict[str, Any]]:
        response = self.sqs.receive_message(QueueUrl=self.ingest_queue_url, MaxNumberOfMessages=10,
                                            AttributeNames=["All"])
        return response.get("Messages", [])

    def executions(self) -> list[dict[str, Any]]:
        return self.sfn.list_executions(stateMachineArn=self.state_machine_arn)["executions"]
