"""Observability: alarms on every DLQ, every function, the ingestion workflow and memlane's own
failure counts (memlane.observability: documents that failed to write, pages that failed), an
encrypted SNS topic they notify, and one dashboard with saves, recalls, cache hits and misses,
writes, pages crawled and documents forgotten.

`-c observability=lean` keeps the alarms that say data is being lost or not served: every dead-letter
queue (work that failed after all its retries), the API's 5XX answers, failed and timed-out ingestion
executions and documents that failed to write for good (the one memlane metric the functions then
publish, MEMLANE_METRICS=alarmed). It drops the per-function error alarms (an asynchronous function's
failures end in its dead-letter queue or its workflow's failure, the API's in 5XX), the authorizer's
refusal burst, the page-error and workflow-failure counts (their pages and documents end in a DLQ or a
failed execution), the failed context rebuilds (neighbours keep an older context until their next
write) and the dashboard. docs/deploy.md states the saving.

Alarms fire on the first occurrence (threshold 1 in a 5-minute period) and treat missing data as
fine: a quiet system is a healthy one.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from memlane import observability

PERIOD = Duration.minutes(c.ALARM_PERIOD_MINUTES)


def app_metric(name: str, *, label: bool = True) -> cloudwatch.Metric:
    """A count memlane emits (Powertools adds the `service` dimension to every metric). A label
    makes an alarm a metric-math alarm; only the dashboard wants one."""
    return cloudwatch.Metric(namespace=c.METRICS_NAMESPACE, metric_name=name, dimensions_map={"service": c.SERVICE_NAME},
                             statistic="Sum", period=PERIOD, label=name if label else None)


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        functions: list[lambda_.Function],
        dead_letter_queues: dict[str, sqs.IQueue],
        state_machine: sfn.StateMachine,
        rest_api: apigw.RestApi,
        work_queues: dict[str, sqs.IQueue],
    ) -> None:
        super().__init__(scope, construct_id)
        self._prefix = config.resource_prefix
        # CloudWatch can publish to an encrypted topic only with a customer managed key that lets it
        # use the key (the AWS managed aws/sns key does not).
        key = kms.Key(
            self,
            "AlarmTopicKey",
            description=f"{self._prefix}: encrypts the alarm topic",
            enable_key_rotation=True,
            pending_window=Duration.days(7),
            removal_policy=RemovalPolicy.DESTROY,
        )
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            display_name=f"{self._prefix} alarms",
            master_key=key,
            enforce_ssl=True,
        )
        if config.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
        action = cw_actions.SnsAction(self.topic)

        self.alarms: list[cloudwatch.Alarm] = []
        self.lean = config.observability == "lean"
        for name, queue in dead_letter_queues.items():
            self._alarm(
                f"{name}Depth",
                queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                f"Messages in the {name} dead-letter queue: work that failed after all retries",
                action,
            )
        for function in [] if self.lean else functions:
            construct_id = function.node.id
            if construct_id == c.AUTHORIZER_FUNCTION.construct_id:
                # The authorizer answers every refused key with an error (that is how API Gateway
                # is told to send 401), so single errors are normal; a burst suggests key guessing.
                self._alarm(
                    f"{construct_id}Refusals",
                    function.metric_errors(period=PERIOD, statistic="Sum"),
                    f"More than {c.AUTHORIZER_REFUSALS_ALARM} refused API keys in 5 minutes",
                    action,
                    threshold=c.AUTHORIZER_REFUSALS_ALARM,
                )
                continue
            self._alarm(
                f"{construct_id}Errors",
                function.metric_errors(period=PERIOD, statistic="Sum"),
                f"{construct_id} ({function.node.path}) raised errors",
                action,
            )
        self._alarm(
            "IngestionExecutionsFailed",
            state_machine.metric_failed(period=PERIOD, statistic="Sum"),
            "Ingestion executions failed (documents marked failed, see the state machine's logs)",
            action,
        )
        self._alarm(
            "IngestionExecutionsTimedOut",
            state_machine.metric_timed_out(period=PERIOD, statistic="Sum"),
            "Ingestion executions timed out",
            action,
        )
        # memlane's own counts (memlane.observability, emitted as EMF by the functions)
        alarmed = observability.LEAN_ALARMED if self.lean else observability.ALARMED
        for name, description, threshold in (
            (observability.WRITES_FAILED, "Documents failed to write for good (their status says why)", 1),
            (observability.INGESTION_FAILED, "The ingestion workflow gave up on documents", 1),
            (observability.PAGE_ERRORS, f"{c.PAGE_ERRORS_ALARM} or more documentation pages failed to "
             "fetch or write in 5 minutes (each is retried with backoff)", c.PAGE_ERRORS_ALARM),
            (observability.CONTEXT_REBUILDS_FAILED, "Memories next to a written or removed one could not be "
             "indexed again (a refused model or grant, the index down): see the function's error log", 1),
        ):
            if name in alarmed:
                self._alarm(f"{name}Count", app_metric(name, label=False), description, action, threshold=threshold)
        self._alarm(
            "Api5xx",
            rest_api.metric_server_error(period=PERIOD, statistic="Sum"),
            "The API answered 5XX",
            action,
        )

        self.dashboard: cloudwatch.Dashboard | None = None
        if not self.lean:
            self._dashboard(functions, dead_letter_queues, state_machine, rest_api, work_queues)

    def _dashboard(self, functions: list[lambda_.Function], dead_letter_queues: dict[str, sqs.IQueue],
                   state_machine: sfn.StateMachine, rest_api: apigw.RestApi,
                   work_queues: dict[str, sqs.IQueue]) -> None:
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=self._prefix)
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="API requests and errors",
                left=[rest_api.metric_count(period=PERIOD)],
                right=[
                    rest_api.metric_client_error(period=PERIOD),
                    rest_api.metric_server_error(period=PERIOD),
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="API latency (p50, p99)",
                left=[
                    rest_api.metric_latency(period=PERIOD, statistic="p50"),
                    rest_api.metric_latency(period=PERIOD, statistic="p99"),
                    rest_api.metric_integration_latency(period=PERIOD, statistic="p99"),
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Ingestion executions",
                left=[
                    state_machine.metric_started(period=PERIOD),
                    state_machine.metric_succeeded(period=PERIOD),
                    state_machine.metric_failed(period=PERIOD),
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Queue backlog and oldest message age",
                left=[
                    queue.metric_approximate_number_of_messages_visible(period=PERIOD, label=name)
                    for name, queue in work_queues.items()
                ],
                right=[
                    queue.metric_approximate_age_of_oldest_message(period=PERIOD, label=f"{name} age")
                    for name, queue in work_queues.items()
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Function errors",
                left=[f.metric_errors(period=PERIOD, label=f.node.id) for f in functions],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Function duration (p99)",
                left=[f.metric_duration(period=PERIOD, statistic="p99", label=f.node.id) for f in functions],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Saves, recalls and the recall cache",
                left=[app_metric(n) for n in (observability.MEMORY_SAVED, observability.RECALLS)],
                right=[app_metric(n) for n in (observability.RECALL_CACHE_HITS, observability.RECALL_CACHE_MISSES)],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Writes, crawl and forgetting",
                left=[app_metric(n) for n in (observability.DOCUMENTS_WRITTEN, observability.PAGES_CRAWLED,
                                              observability.DOCUMENTS_FORGOTTEN)],
                right=[app_metric(n) for n in (observability.WRITES_DEFERRED, observability.WRITES_FAILED,
                                               observability.PAGE_ERRORS)],
                width=12,
            ),
            cloudwatch.SingleValueWidget(
                title="Dead-letter queues (messages)",
                metrics=[
                    queue.metric_approximate_number_of_messages_visible(period=PERIOD, label=name)
                    for name, queue in dead_letter_queues.items()
                ],
                width=24,
            ),
        )

    def _alarm(
        self,
        name: str,
        metric: cloudwatch.IMetric,
        description: str,
        action: cw_actions.SnsAction,
        threshold: int = 1,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            alarm_name=f"{self._prefix}-{name}",
            alarm_description=description,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(action)
        self.alarms.append(alarm)
