"""The AWS side of ingestion jobs: an SQS standard queue of IngestJob messages, and the starter
of one Step Functions execution per job.

On AWS the queue is consumed by a Lambda event source (batch item failures reported, DLQ after
max receives); claim/complete/retry_later exist so that SqsIngestQueue also satisfies JobQueue
for a worker that drains the queue itself (the CLI). Idempotency does not come from SQS (a
standard queue delivers at least once) but from the execution name and deterministic ids.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws._boto import call, error_code, is_transient, lazy_client
from memlane.domain.errors import InvalidInputError, TransientError
from memlane.domain.models import IngestJob
from memlane.ports import Clock, SystemClock

SQS_MAX_DELAY_SECONDS = 900
SQS_MAX_VISIBILITY_SECONDS = 43_200
SFN_MAX_INPUT_BYTES = 256 * 1024
SFN_MAX_NAME_LENGTH = 80
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class SqsIngestQueue:
    """IngestJob messages on an SQS standard queue; the body is the job's JSON."""

    def __init__(self, queue_url: str, client: Any | None = None, clock: Clock | None = None) -> None:
        self.queue_url = queue_url
        self.clock = clock or SystemClock()
        self.client = lazy_client(client, "sqs")
        self._receipts: dict[str, str] = {}  # job id → receipt handle of the message claimed

    def _call(self, operation: str, **kwargs: Any) -> Any:
        return call(self.client, operation, "sqs", **kwargs)

    @staticmethod
    def parse(body: str) -> IngestJob:
        """The job in a message body (what the Lambda consumer calls on each record)."""
        return IngestJob.model_validate_json(body)

    def send(self, job: IngestJob) -> str:
        """Sends the job; a `not_before` in the future becomes DelaySeconds (SQS caps it at 15
        minutes; a consumer that receives the job early puts it back with retry_later).
        Returns the SQS message id."""
        kwargs: dict[str, Any] = {"QueueUrl": self.queue_url, "MessageBody": job.model_dump_json()}
        wait = (job.not_before - self.clock.now()).total_seconds()
        if wait > 0:
            kwargs["DelaySeconds"] = min(SQS_MAX_DELAY_SECONDS, math.ceil(wait))
        return str(self._call("send_message", **kwargs)["MessageId"])

    # JobQueue

    def enqueue(self, job: IngestJob) -> None:
        self.send(job)

    def claim(self, now: datetime, lease_seconds: int) -> IngestJob | None:
        """Receives one job and hides it for `lease_seconds` (the message's visibility timeout)."""
        response = self._call(
            "receive_message",
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=1,
            VisibilityTimeout=max(0, min(SQS_MAX_VISIBILITY_SECONDS, lease_seconds)),
            WaitTimeSeconds=0,
            MessageSystemAttributeNames=["ApproximateReceiveCount"],
        )
        messages = response.get("Messages", [])
        if not messages:
            return None
        message = messages[0]
        job = self.parse(message["Body"])
        received = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
        # this receive and the earlier ones that did not complete, as the local queue counts its
        # claims: the worker gives up once attempts reach its maximum
        job.attempts += max(1, received)
        self._receipts[job.id] = message["ReceiptHandle"]
        return job

    def complete(self, job_id: str) -> None:
        receipt = self._receipts.pop(job_id, None)
        if receipt is not None:
            self._call("delete_message", QueueUrl=self.queue_url, ReceiptHandle=receipt)

    def retry_later(self, job_id: str, error: str, not_before: datetime) -> None:
        """Makes the claimed message visible again at `not_before` (at most 12 hours away).
        SQS cannot rewrite a message, so `error` is not kept; the consumer logs it."""
        receipt = self._receipts.pop(job_id, None)
        if receipt is None:
            return
        wait = math.ceil((not_before - self.clock.now()).total_seconds())
        self._call(
            "change_message_visibility",
            QueueUrl=self.queue_url,
            ReceiptHandle=receipt,
            VisibilityTimeout=max(0, min(SQS_MAX_VISIBILITY_SECONDS, wait)),
        )

    def pending_count(self) -> int:
        """Messages waiting, in flight or delayed (SQS's approximate counts)."""
        names = [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ]
        attributes = self._call("get_queue_attributes", QueueUrl=self.queue_url, AttributeNames=names)
        return sum(int(attributes.get("Attributes", {}).get(name, "0")) for name in names)


def execution_name(document_id: str, revision: str | None = None) -> str:
    """`doc-{document_id}[-{revision}]` within Step Functions' rules (1-80 characters of
    A-Z a-z 0-9 - _). When characters had to be replaced or the name cut, a digest of the
    original is appended so two documents never share a name."""
    raw = f"doc-{document_id}" + (f"-{revision}" if revision else "")
    safe = _NAME_UNSAFE.sub("-", raw)
    if safe == raw and len(safe) <= SFN_MAX_NAME_LENGTH:
        return safe
    digest = hashlib.sha256(raw.encode()).hexdigest()[:16]
    return f"{safe[: SFN_MAX_NAME_LENGTH - len(digest) - 1]}-{digest}"


class StepFunctionsStarter:
    """Starts the ingestion state machine for one document, at most once per name.

    The execution name is derived from the document id (and the optional revision, e.g. the
    ingest job id, so that re-ingesting an edited document within Step Functions' 90-day name
    retention starts a new execution). A redelivered SQS message therefore asks for a name that
    exists: Step Functions answers with the running execution or ExecutionAlreadyExists, and both
    count as success.
    """

    def __init__(self, state_machine_arn: str, client: Any | None = None) -> None:
        self.state_machine_arn = state_machine_arn
        self.client = lazy_client(client, "stepfunctions")

    def execution_arn(self, name: str) -> str:
        # arn:aws:states:{region}:{account}:stateMachine:{machine} → …:execution:{machine}:{name}
        prefix, _, machine = self.state_machine_arn.rpartition(":stateMachine:")
        return f"{prefix}:execution:{machine}:{name}"

    def start(
        self, document_id: str, org_id: str, input: dict[str, Any], *, revision: str | None = None
    ) -> str:
        """Starts (or finds) the execution; returns its ARN. The payload carries keys, never
        content: Step Functions refuses input over 256 KB."""
        payload = json.dumps({**input, "document_id": document_id, "organization_id": org_id}, default=str)
        if len(payload.encode()) > SFN_MAX_INPUT_BYTES:
            raise InvalidInputError("input", "execution input exceeds 256 KB; pass S3 keys, not content")
        name = execution_name(document_id, revision)
        try:
            response = self.client.start_execution(
                stateMachineArn=self.state_machine_arn, name=name, input=payload
            )
        except ClientError as exc:
            if error_code(exc) == "ExecutionAlreadyExists":
                return self.execution_arn(name)
            if is_transient(exc):
                raise TransientError(f"stepfunctions start_execution: {error_code(exc)}") from exc
            raise
        return str(response["executionArn"])
