"""SQS queues the way memlane uses them: encrypted, TLS-only, each work queue with its DLQ."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c


@dataclass(frozen=True)
class WorkQueue:
    queue: sqs.Queue
    dead_letter_queue: sqs.Queue


def dead_letter_queue(scope: Construct, construct_id: str) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(c.DLQ_RETENTION_DAYS),
    )


def work_queue(scope: Construct, construct_id: str, *, consumer_timeout_s: int) -> WorkQueue:
    """A queue read by a Lambda event source, its visibility timeout six times the consumer's timeout."""
    dlq = dead_letter_queue(scope, f"{construct_id}Dlq")
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(c.QUEUE_RETENTION_DAYS),
        visibility_timeout=Duration.seconds(c.VISIBILITY_TIMEOUT_FACTOR * consumer_timeout_s),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=c.DLQ_MAX_RECEIVE_COUNT),
    )
    return WorkQueue(queue=queue, dead_letter_queue=dlq)
