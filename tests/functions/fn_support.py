"""Shared by the Lambda handler tests (tests/functions): the ids the events/ files use, the
moto deployment they run against, event loading.

Lambda handlers are invoked with the events/ files under moto.

moto is started before any client exists. Each test composes memlane's AWS adapters once against
its moto account (compose.compose_aws) and hands them to every handler it calls, as the handlers'
optional arguments (`Deployment.invoke`): nothing of the composition is patched. Three things
differ from a deployment: the embedder (HashEmbedder, the fake the local-mode tests use), the
search engine (the local SqliteSearchIndex: moto has no OpenSearch) and the clock (FixedClock).
Everything else is the real AWS adapter talking to moto.
"""

from __future__ import annotations

import copy
import dataclasses
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

from functions.invoke import LocalLambdaContext, handler_module, invoke  # noqa: E402
from memlane.adapters.local.search_index import SqliteSearchIndex  # noqa: E402
from memlane.api.app import MemlaneApi  # noqa: E402
from memlane.ports import Services  # noqa: E402

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
    composed: Services
    docsets: Any  # DocsetContext
    registry: Any  # KeyRegistry
    starter: Any  # WorkflowStarter

    def services(self) -> Services:
        return self.composed

    def cold_start(self) -> None:
        """What a new execution environment would compose: memlane's settings read again from the
        environment as it is now (a running one read them once, when it started)."""
        from memlane.aws import compose

        self.composed = dataclasses.replace(self.composed, settings=compose.memlane_settings())

    def dependencies(self, function: str) -> dict[str, Any]:
        """What the handler would compose from its environment, composed for this test."""
        module = handler_module(function)
        if module == "functions.api.handler":
            return {"api": MemlaneApi(self.composed, docsets=self.docsets)}
        if module == "functions.authorizer.handler":
            return {"store": self.composed.metadata}
        if module == "functions.admin_keys.handler":
            return {"store": self.composed.metadata, "registry": self.registry, "clock": self.clock}
        if module == "functions.ingest_consumer.handler":
            return {"starter": self.starter, "services": self.composed}
        if module in ("functions.refresh_job.handler", "functions.page_worker.handler"):
            return {"docsets": self.docsets}
        return {"services": self.composed}  # the ingestion steps, the forget job

    def invoke(self, function: str, event: Any, ctx: Any = None, **overrides: Any) -> Any:
        return invoke(function, event, ctx or context(function), **{**self.dependencies(function), **overrides})

    def run_handler(self, handler: str, payload: dict[str, Any]) -> Any:
        """What a state machine Task does: call the function named by its handler path."""
        return self.invoke(handler.rsplit(".", 1)[0], payload)

    def ingest_messages(self) -> list[dict[str, Any]]:
        response = self.sqs.receive_message(QueueUrl=self.ingest_queue_url, MaxNumberOfMessages=10,
                                            AttributeNames=["All"])
        return response.get("Messages", [])

    def executions(self) -> list[dict[str, Any]]:
        return self.sfn.list_executions(stateMachineArn=self.state_machine_arn)["executions"]
