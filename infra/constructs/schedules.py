"""Schedules: EventBridge Scheduler runs the forget job hourly and the docset refresh daily (and,
through `add_schedule`, the connections' sync every 15 minutes: infra/constructs/connections.py).

Each schedule has a retry policy and a dead-letter queue for events the scheduler could not
deliver. The scheduler invokes Lambda asynchronously, so the function's own asynchronous retries
end in the same queue (on-failure destination): whatever goes wrong with a run, one DLQ per job
holds it and raises an alarm. Jobs are idempotent and catch up on the next run (they receive the
scheduled time), so a duplicate or missed run is harmless.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as targets
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.embeddings import ModelAccess
from infra.constructs.functions import FunctionFactory, function_role
from infra.constructs.grants import grant_send
from infra.constructs.queues import dead_letter_queue
from infra.constructs.search import Search
from infra.constructs.storage import Storage
from infra.nag import acknowledge, wildcard_resource_finding
from memlane.adapters.aws import dynamo_schema as schema

SCHEDULE_DLQ_REASON = (
    "This queue is itself a dead-letter queue: the schedule target's DLQ and the job function's "
    "asynchronous on-failure destination. It has an alarm on depth; it needs no DLQ of its own."
)
SCHEDULER_INVOKE_REASON = (
    "The scheduler role may invoke the job function by ARN and '<arn>:*' (qualified versions/aliases) "
    "of that one function only."
)


class Schedules(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        factory: FunctionFactory,
        storage: Storage,
        search: Search,
        models: ModelAccess,
        page_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.role = iam.Role(
            self,
            "SchedulerRole",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com", conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}
            ),
            description="memlane: EventBridge Scheduler invokes the forget and refresh jobs",
        )

        self.forget_function = factory.create(self, c.FORGET_FUNCTION)
        # GSI3: a forgotten message's neighbours are indexed again without it
        storage.grant_table_read_write(self.forget_function, indexes=(schema.GSI2, schema.GSI3))
        storage.grant_content_read(self.forget_function)
        storage.grant_content_delete(self.forget_function)
        search.grant_write(function_role(self.forget_function))
        # A forgotten conversation message leaves the context of the messages around it: they are
        # embedded again without it (memlane.documents.lifecycle.remove_document).
        models.grant_embed(self.forget_function)

        # The refresh re-queues pages in the table (every docset from GSI1) and sends them to the
        # page queue; fetching and indexing are the page worker's.
        self.refresh_function = factory.create(self, c.REFRESH_FUNCTION)
        storage.grant_table_read_write(self.refresh_function, indexes=(schema.GSI1,))
        grant_send(page_queue, self.refresh_function)

        self.forget_dlq = self.add_schedule(
            "Forget",
            self.forget_function,
            scheduler.ScheduleExpression.rate(Duration.hours(c.FORGET_SCHEDULE_HOURS)),
            config,
        )
        self.refresh_dlq = self.add_schedule(
            "Refresh",
            self.refresh_function,
            scheduler.ScheduleExpression.rate(Duration.days(c.REFRESH_SCHEDULE_DAYS)),
            config,
        )

    def add_schedule(
        self,
        job: str,
        function: lambda_.Function,
        expression: scheduler.ScheduleExpression,
        config: DeploymentConfig,
    ) -> sqs.Queue:
        dlq = dead_letter_queue(self, f"{job}Dlq")
        acknowledge(dlq, "AwsSolutions-SQS3", SCHEDULE_DLQ_REASON)
        function.configure_async_invoke(
            retry_attempts=c.JOB_ASYNC_RETRY_ATTEMPTS,
            max_event_age=Duration.hours(c.SCHEDULE_MAX_EVENT_AGE_HOURS),
            on_failure=destinations.SqsDestination(dlq),
        )
        scheduler.Schedule(
            self,
            f"{job}Schedule",
            schedule=expression,
            description=f"memlane {config.stage}: {job.lower()} job",
            target=targets.LambdaInvoke(
                function,
                role=self.role,
                dead_letter_queue=dlq,
                retry_attempts=c.SCHEDULE_RETRY_ATTEMPTS,
                max_event_age=Duration.hours(c.SCHEDULE_MAX_EVENT_AGE_HOURS),
                input=scheduler.ScheduleTargetInput.from_object(
                    {
                        "job": job.lower(),
                        "scheduled_time": scheduler.ContextAttribute.scheduled_time,
                        "execution_id": scheduler.ContextAttribute.execution_id,
                    }
                ),
            ),
        )
        acknowledge(
            self.role, wildcard_resource_finding(self, f"{function.function_arn}:*"), SCHEDULER_INVOKE_REASON
        )
        return dlq
