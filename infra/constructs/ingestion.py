"""Ingestion: SQS ingest queue (+ DLQ) → consumer Lambda → Step Functions workflow, for documents
too large to write in the API request and for saves whose inline write failed transiently.

    Start → Extract ─┬──────────────────────────────────────────────────┬→ Prepare → Embed → Write
                     └→ StartTranscription → Wait ⇄ GetTranscription → Transcribed ┘
              └── any error (after retries), or a failed Transcribe job ──→ MarkFailed → IngestionFailed

Extract reads media saved without its text: OCR with Amazon Textract inside the step, or, for a
recording, the name and keys of an Amazon Transcribe job. That job runs asynchronously: the state
machine starts it and polls it with the Step Functions SDK integration (a Wait state between polls,
so no Lambda is billed while Transcribe works); Transcribed stores the transcript it wrote.

Each task is one stage of memlane's one write path (memlane.documents.writer, see memlane.documents.workflow).
The workflow state carries identifiers and S3 keys, never content (Step Functions payloads are
limited to 256 KB): `Start` puts the execution input under `$.document` and starts an empty
`$.artifacts`; each step receives `{step, document, artifacts, execution}` and its small result (S3
keys, counts) is stored at `$.artifacts.<step>`. A failure is stored at `$.error` ({Error, Cause})
and handed to MarkFailed, which records the reason on the document before the execution fails.

Each step retries Lambda service errors and memlane's TransientError family with exponential
backoff; the consumer starts executions with deterministic names, so a redelivered message cannot
ingest a document twice.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.embeddings import ModelAccess
from infra.constructs.functions import FunctionFactory, function_role, log_removal_policy, retention_days
from infra.constructs.queues import WorkQueue, work_queue
from infra.constructs.search import Search
from infra.constructs.storage import Storage
from infra.nag import acknowledge, wildcard_resource_finding
from infra.workflow_budget import worst_case_seconds
from memlane.adapters.aws import dynamo_schema as schema
from memlane.domain import errors as domain_errors

STATE_MACHINE_LOGS_REASON = (
    "Step Functions log delivery (logs:CreateLogDelivery, PutResourcePolicy, DescribeLogGroups, ...) and "
    "X-Ray tracing do not support resource-level permissions; CDK grants them on '*' as AWS documents."
)
TEXTRACT_REASON = (
    "textract:DetectDocumentText supports no resource-level permissions (the image is sent in the request); "
    "the grant is that one action."
)
INVOKE_VERSIONS_REASON = (
    "lambda:InvokeFunction is granted on the function ARN and on '<arn>:*' so that qualified "
    "invocations (versions, aliases) of this one function also work; no other function is covered."
)


def transient_error_names() -> list[str]:
    """Error names (exception class names) the workflow retries: TransientError and every subclass
    declared in memlane.domain.errors. Step Functions matches names exactly, without inheritance."""
    base = domain_errors.TransientError
    return sorted(
        name
        for name, member in vars(domain_errors).items()
        if inspect.isclass(member) and issubclass(member, base)
    )


class Ingestion(Construct):
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
    ) -> None:
        super().__init__(scope, construct_id)
        self.ingest: WorkQueue = work_queue(
            self, "IngestQueue", consumer_timeout_s=c.INGEST_CONSUMER_FUNCTION.timeout_s
        )

        self.step_functions: dict[str, lambda_.Function] = {}
        for state_name, spec in c.INGESTION_STEPS:
            self.step_functions[state_name] = factory.create(self, spec)
        steps = self.step_functions
        # Extract, Prepare and Write store documents; Embed only reads them (a message's conversation
        # for its context) and notes a retry on the document's status; Write also rebuilds the
        # entries of its neighbours (their conversation, GSI3)
        for state_name in ("Extract", "Prepare", "Write"):
            storage.grant_table_read_write(steps[state_name])
        for state_name in ("Embed", "Write"):
            storage.grant_table_read(steps[state_name], indexes=(schema.GSI3,))
        storage.grant_table_status_update(steps["Embed"])
        # Prepare and Embed stage chunks and vectors in S3 (and Embed its progress); Write reads
        # them and clears the progress. Documents over 100 KB keep their content in S3, so every
        # step that loads a document reads it; Extract reads the media a save deferred and stores
        # the text Textract read (content over 100 KB in S3 too).
        for state_name in ("Extract", "Prepare", "Embed", "Write"):
            storage.grant_content_read(steps[state_name])
            storage.grant_content_write(steps[state_name])
        # Every step that stores a document may drop its S3 copy (its content shrank under 100 KB),
        # and Write clears the execution's staged work.
        for state_name in ("Extract", "Prepare", "Write"):
            storage.grant_content_delete(steps[state_name])
        models.grant_embed(steps["Embed"])
        # Write rebuilds the index entries of the memories next to what it wrote (their context
        # changed): it embeds them again (memlane.documents.writer.DocumentWriter.rebuild).
        models.grant_embed(steps["Write"])
        models.grant_summarize(steps["Prepare"])
        search.grant_write(function_role(steps["Write"]))
        grant_textract(steps["Extract"])

        self.transcribed_function = factory.create(self, c.TRANSCRIBED_FUNCTION)
        storage.grant_table_read_write(self.transcribed_function)
        storage.grant_content_read(self.transcribed_function)
        storage.grant_content_write(self.transcribed_function)
        storage.grant_content_delete(self.transcribed_function)
        self._storage = storage

        # MarkFailed reads the document (content over 100 KB from S3) and records why it failed
        self.mark_failed_function = factory.create(self, c.MARK_FAILED_FUNCTION)
        storage.grant_table_get_item(self.mark_failed_function)
        storage.grant_table_status_update(self.mark_failed_function)
        storage.grant_content_read(self.mark_failed_function)

        definition = self._definition()
        # The execution's timeout outlasts its longest retry chain, computed from the retriers of
        # the definition itself (infra/workflow_budget.py; the test reads the synthesized one).
        self.worst_case_s = worst_case_seconds(graph_json(definition), loop_allowance=c.TRANSCRIPTION_MAX_WAIT_S)
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_chainable(definition),
            timeout=Duration.seconds(math.ceil(self.worst_case_s + c.STATE_MACHINE_TIMEOUT_MARGIN_S)),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=logs.LogGroup(
                    self,
                    "StateMachineLogs",
                    log_group_name=f"/aws/vendedlogs/states/{config.resource_prefix}-ingestion",
                    retention=retention_days(config.log_retention_days),
                    removal_policy=log_removal_policy(config),
                ),
                level=sfn.LogLevel.ALL,
                # The state holds keys, not content, but nothing is gained by copying it into logs.
                include_execution_data=False,
            ),
        )
        acknowledge(self.state_machine.role, "AwsSolutions-IAM5[Resource::*]", STATE_MACHINE_LOGS_REASON)
        self._grant_transcribe(self.state_machine.role, storage)
        acknowledge(self.state_machine.role, wildcard_resource_finding(self, self._transcribe_job_arn),
                    "Transcribe jobs are named per document and execution (memlane-<document>-<execution>): "
                    "the grant covers memlane's job names only.")
        for function in (*steps.values(), self.transcribed_function, self.mark_failed_function):
            acknowledge(
                self.state_machine.role,
                wildcard_resource_finding(self, f"{function.function_arn}:*"),
                INVOKE_VERSIONS_REASON,
            )

        self.consumer = factory.create(
            self,
            c.INGEST_CONSUMER_FUNCTION,
            environment={schema.ENV_STATE_MACHINE_ARN: self.state_machine.state_machine_arn},
        )
        self.state_machine.grant_start_execution(self.consumer)
        # It reads the document first (content over 100 KB lives in S3): a job whose document was
        # written since it was queued starts nothing.
        storage.grant_table_get_item(self.consumer)
        storage.grant_content_read(self.consumer)
        self.consumer.add_event_source(
            event_sources.SqsEventSource(
                self.ingest.queue,
                batch_size=c.SQS_BATCH_SIZE,
                report_batch_item_failures=True,
            )
        )

    def _definition(self) -> sfn.IChainable:
        start = sfn.Pass(
            self,
            "Start",
            comment="Input under $.document; step results accumulate under $.artifacts",
            parameters={"document.$": "$", "artifacts": {}},
        )
        mark_failed = self._task(
            "MarkFailed", self.mark_failed_function, c.MARK_FAILED_FUNCTION, result_path=sfn.JsonPath.DISCARD
        )
        mark_failed.next(
            sfn.Fail(self, "IngestionFailed", error_path="$.error.Error", cause_path="$.error.Cause")
        )

        tasks_by_name = {}
        for state_name, spec in c.INGESTION_STEPS:
            task = self._task(
                state_name,
                self.step_functions[state_name],
                spec,
                result_path=f"$.artifacts.{state_name.lower()}",
            )
            if state_name == "Extract":  # over the media budget: wait, do not fail
                task.add_retry(errors=[domain_errors.MediaBudgetDeferred.__name__],
                               interval=Duration.seconds(c.MEDIA_BUDGET_RETRY_INTERVAL_S), backoff_rate=1.0,
                               max_attempts=c.MEDIA_BUDGET_RETRY_MAX_ATTEMPTS)
            task.add_catch(mark_failed, errors=[sfn.Errors.ALL], result_path="$.error")
            tasks_by_name[state_name] = task
        prepare = tasks_by_name["Prepare"]
        prepare.next(tasks_by_name["Embed"]).next(tasks_by_name["Write"])
        transcription = self._transcription(mark_failed, prepare)
        route = (
            sfn.Choice(self, "NeedsTranscription", comment="A recording with no transcriber in-process")
            .when(sfn.Condition.string_equals("$.artifacts.extract.mode", "transcribe"), transcription)
            .otherwise(prepare)
        )
        return sfn.Chain.start(start).next(tasks_by_name["Extract"]).next(route)

    def _transcription(self, mark_failed: sfn.IChainable, then: sfn.IChainable) -> sfn.IChainable:
        """Start an Amazon Transcribe job, then Wait ⇄ GetTranscriptionJob until it is done."""
        bucket = self._storage.content_bucket.bucket_name
        job_arn = Stack.of(self).format_arn(service="transcribe", resource="transcription-job",
                                            resource_name=c.TRANSCRIBE_JOB_PATTERN)
        extract = "$.artifacts.extract"
        start = tasks.CallAwsService(
            self, "StartTranscription", service="transcribe", action="startTranscriptionJob",
            iam_action="transcribe:StartTranscriptionJob", iam_resources=[job_arn],
            task_timeout=sfn.Timeout.duration(Duration.seconds(c.SDK_TASK_TIMEOUT_S)),
            parameters={
                "TranscriptionJobName": sfn.JsonPath.string_at(f"{extract}.job_name"),
                "Media": {"MediaFileUri": sfn.JsonPath.format("s3://{}/{}", bucket,
                                                              sfn.JsonPath.string_at(f"{extract}.media_key"))},
                "IdentifyLanguage": True,
                "OutputBucketName": bucket,
                "OutputKey": sfn.JsonPath.string_at(f"{extract}.output_key"),
            },
            result_path=sfn.JsonPath.DISCARD,
        )
        wait = sfn.Wait(self, "WaitForTranscription",
                        time=sfn.WaitTime.duration(Duration.seconds(c.TRANSCRIBE_POLL_SECONDS)))
        poll = tasks.CallAwsService(
            self, "GetTranscription", service="transcribe", action="getTranscriptionJob",
            iam_action="transcribe:GetTranscriptionJob", iam_resources=[job_arn],
            task_timeout=sfn.Timeout.duration(Duration.seconds(c.SDK_TASK_TIMEOUT_S)),
            parameters={"TranscriptionJobName": sfn.JsonPath.string_at(f"{extract}.job_name")},
            # Only the status: the job description is not needed, and the state stays small.
            result_selector={"status": sfn.JsonPath.string_at("$.TranscriptionJob.TranscriptionJobStatus")},
            result_path="$.transcription",
        )
        transient = ["Transcribe.LimitExceededException", "Transcribe.InternalFailureException"]
        for task in (start, poll):
            task.add_retry(errors=transient, interval=Duration.seconds(c.STEP_RETRY_INTERVAL_S),
                           backoff_rate=c.STEP_RETRY_BACKOFF_RATE, max_attempts=c.STEP_RETRY_MAX_ATTEMPTS)
        # A retried start finds its job already there (the same name): poll it.
        start.add_catch(wait, errors=["Transcribe.ConflictException"], result_path=sfn.JsonPath.DISCARD)
        start.add_catch(mark_failed, errors=[sfn.Errors.ALL], result_path="$.error")
        poll.add_catch(mark_failed, errors=[sfn.Errors.ALL], result_path="$.error")
        failed = sfn.Pass(self, "TranscriptionFailed", result=sfn.Result.from_object(
            {"Error": "TranscriptionFailed", "Cause": "Amazon Transcribe could not transcribe the recording"}),
            result_path="$.error").next(mark_failed)
        transcribed = self._task("Transcribed", self.transcribed_function, c.TRANSCRIBED_FUNCTION,
                                 result_path="$.artifacts.transcribed")
        transcribed.add_catch(mark_failed, errors=[sfn.Errors.ALL], result_path="$.error")
        transcribed.next(then)
        done = (
            sfn.Choice(self, "TranscriptionDone")
            .when(sfn.Condition.string_equals("$.transcription.status", "COMPLETED"), transcribed)
            .when(sfn.Condition.string_equals("$.transcription.status", "FAILED"), failed)
            .otherwise(wait)
        )
        self._transcribe_job_arn = job_arn
        return start.next(wait).next(poll).next(done)

    def _grant_transcribe(self, role: iam.IGrantable, storage: Storage) -> None:
        """Transcribe reads the recording and writes its output with the caller's permissions."""
        bucket = storage.content_bucket
        iam.Grant.add_to_principal(grantee=role, actions=["s3:GetObject"],
                                   resource_arns=[bucket.arn_for_objects(f"{c.MEDIA_PREFIX}*")])
        iam.Grant.add_to_principal(grantee=role, actions=["s3:PutObject"],
                                   resource_arns=[bucket.arn_for_objects(f"{c.WORK_PREFIX}*")])
        acknowledge(role, wildcard_resource_finding(self, bucket.arn_for_objects(f"{c.MEDIA_PREFIX}*")),
                    "Transcribe reads any recording memlane stored under media/ (one key per document).")
        acknowledge(role, wildcard_resource_finding(self, bucket.arn_for_objects(f"{c.WORK_PREFIX}*")),
                    "Transcribe writes each job's transcript under work/ (one key per execution).")


    def _task(
        self, state_name: str, function: lambda_.Function, spec: c.FunctionSpec, *, result_path: str
    ) -> tasks.LambdaInvoke:
        payload = {
            "step": state_name.lower(),
            "document": sfn.JsonPath.object_at("$.document"),
            "artifacts": sfn.JsonPath.object_at("$.artifacts"),
            "execution": sfn.JsonPath.execution_name,
        }
        if state_name == "MarkFailed":
            payload["error"] = sfn.JsonPath.object_at("$.error")
        task = tasks.LambdaInvoke(
            self,
            state_name,
            lambda_function=function,
            payload=sfn.TaskInput.from_object(payload),
            # The function's return value itself (small: keys and counts) is the step result.
            payload_response_only=True,
            result_path=result_path,
            retry_on_service_exceptions=False,
            # Longer than the function's own timeout: this only catches an invocation that never returns.
            task_timeout=sfn.Timeout.duration(Duration.seconds(spec.timeout_s + c.TASK_TIMEOUT_MARGIN_S)),
        )
        task.add_retry(
            errors=[*c.LAMBDA_SERVICE_ERRORS, *transient_error_names()],
            interval=Duration.seconds(c.STEP_RETRY_INTERVAL_S),
            backoff_rate=c.STEP_RETRY_BACKOFF_RATE,
            max_attempts=c.STEP_RETRY_MAX_ATTEMPTS,
        )
        return task


def graph_json(chainable: sfn.IChainable) -> dict[str, Any]:
    """The definition a chain renders to (its states' own JSON), before any state machine holds it."""
    start = chainable.start_state
    states = sfn.State.find_reachable_states(start, include_error_handlers=True)
    return {"StartAt": start.state_id, "States": {state.state_id: state.to_state_json() for state in states}}


def grant_textract(grantee: iam.IGrantable) -> None:
    """DetectDocumentText has no resource-level permissions: the action alone, on '*'."""
    iam.Grant.add_to_principal(grantee=grantee, actions=["textract:DetectDocumentText"], resource_arns=["*"])
    acknowledge(grantee, "AwsSolutions-IAM5[Resource::*]", TEXTRACT_REASON)
