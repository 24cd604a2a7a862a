"""Connection syncs on AWS: one SQS message per connection to sync (the sync queue), consumed by
the sync function (functions/connection_sync) with partial batch failures.

`SqsSyncDispatcher` is the connections' SyncDispatcher here, and only I/O: "sync now", an OAuth
callback, a delete that goes on in the background and the 15-minute schedule each send a message;
what a message does is memlane.connections.sync's `sync_connection`, the sync the local runner
runs. Two messages for one connection are harmless: the second finds the lease taken, or nothing
new.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from memlane.adapters.aws._boto import call, lazy_client

SQS_BATCH = 10  # SendMessageBatch's maximum


class SyncMessage(BaseModel):
    """The body of a sync-queue message."""

    model_config = ConfigDict(extra="forbid")

    organization_id: str
    connection_id: str


class SqsSyncDispatcher:
    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        self.queue_url = queue_url
        self.client = lazy_client(client, "sqs")

    def request_sync(self, org_id: str, connection_id: str) -> None:
        self.send_many([SyncMessage(organization_id=org_id, connection_id=connection_id)])

    def send_many(self, messages: Sequence[SyncMessage]) -> int:
        for start in range(0, len(messages), SQS_BATCH):
            group = messages[start : start + SQS_BATCH]
            answer = call(self.client, "send_message_batch", "sqs", QueueUrl=self.queue_url, Entries=[
                {"Id": str(i), "MessageBody": m.model_dump_json()} for i, m in enumerate(group)])
            if answer.get("Failed"):
                from memlane.domain.errors import TransientError

                raise TransientError(f"sqs send_message_batch: {len(answer['Failed'])} sync messages not sent")
        return len(messages)
