"""Ingestion and crawl: queues with DLQs, event sources with partial batch failures, and the
six-step workflow with retries and a failure path."""

from __future__ import annotations

import json

import pytest
from infra_helpers import (
    as_list,
    function_by_handler,
    function_role,
    memlane_functions,
    role_policies,
    state_machine_definition,
)

from infra import constants as c
from infra.workflow_budget import worst_case_seconds
from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra

STEPS = ["Extract", "Prepare", "Embed", "Write"]


def _queue_id(reference) -> str:
    return reference["Fn::GetAtt"][0]


def test_every_work_queue_has_a_dlq_after_five_receives(every_variant):
    queues = every_variant.of_type("AWS::SQS::Queue")
    work = {k: q for k, q in queues.items() if "RedrivePolicy" in q["Properties"]}
    assert len(work) == 4  # ingest, pages, connection syncs, extractions
    for queue in work.values():
        redrive = queue["Properties"]["RedrivePolicy"]
        assert redrive["maxReceiveCount"] == c.DLQ_MAX_RECEIVE_COUNT
        assert _queue_id(redrive["deadLetterTargetArn"]) in queues


def test_every_queue_is_encrypted_and_tls_only(every_variant):
    queues = every_variant.of_type("AWS::SQS::Queue")
    assert len(queues) == 11  # 4 work queues (ingest, pages, syncs, extractions), their 4 DLQs, 3 schedule DLQs
    for queue in queues.values():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True
    secured = set()
    for policy in every_variant.of_type("AWS::SQS::QueuePolicy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if (
                statement["Effect"] == "Deny"
                and statement["Condition"]["Bool"]["aws:SecureTransport"] == "false"
            ):
                secured.update(ref["Ref"] for ref in policy["Properties"]["Queues"])
    assert secured == set(queues)


def test_event_sources_report_partial_batch_failures_and_queues_outlast_six_function_timeouts(every_variant):
    mappings = every_variant.of_type("AWS::Lambda::EventSourceMapping")
    assert len(mappings) == 4  # ingest, pages, connection syncs, extractions
    for mapping in mappings.values():
        props = mapping["Properties"]
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        function = every_variant.props(props["FunctionName"]["Ref"])
        queue = every_variant.props(_queue_id(props["EventSourceArn"]))
        assert queue["VisibilityTimeout"] >= c.VISIBILITY_TIMEOUT_FACTOR * function["Timeout"]


def test_ingest_consumer_reads_ten_messages_per_batch_reads_the_document_and_starts_executions(dev):
    consumer_id, consumer = function_by_handler(dev, c.INGEST_CONSUMER_FUNCTION.handler)
    (mapping,) = [
        m
        for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"]["Ref"] == consumer_id
    ]
    assert mapping["Properties"]["BatchSize"] == 10
    env = consumer["Properties"]["Environment"]["Variables"]
    (machine_id,) = dev.of_type("AWS::StepFunctions::StateMachine")
    assert env[schema.ENV_STATE_MACHINE_ARN] == {"Ref": machine_id}
    actions = {a for s in role_policies(dev, function_role(consumer)) for a in as_list(s["Action"])}
    assert "states:StartExecution" in actions
    # It reads the document a job names (a job written since starts nothing), and nothing else
    assert {a for a in actions if a.startswith(("dynamodb:", "s3:", "es:", "aoss:"))} == {
        "dynamodb:GetItem", "s3:GetObject", "s3:ListBucket"}


def test_page_worker_limits_concurrency_towards_crawled_sites(dev):
    worker_id, _ = function_by_handler(dev, c.PAGE_WORKER_FUNCTION.handler)
    (mapping,) = [
        m
        for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"]["Ref"] == worker_id
    ]
    assert mapping["Properties"]["ScalingConfig"] == {"MaximumConcurrency": c.PAGE_WORKER_MAX_CONCURRENCY}


def test_workflow_runs_the_steps_in_order_then_ends(dev):
    definition = state_machine_definition(dev)
    states = definition["States"]
    assert definition["StartAt"] == "Start"
    order, state = [], states["Start"]["Next"]
    while True:
        order.append(state)
        if states[state].get("End"):
            break
        # a document that needs no transcript takes the Choice's default
        state = states[state]["Default"] if states[state]["Type"] == "Choice" else states[state]["Next"]
    assert order == ["Extract", "NeedsTranscription", "Prepare", "Embed", "Write"]
    assert [name for name in order if states[name]["Type"] == "Task"] == STEPS


def test_a_recording_waits_for_its_transcribe_job_without_a_lambda(dev):
    states = state_machine_definition(dev)["States"]
    (rule,) = states["NeedsTranscription"]["Choices"]
    assert rule == {"Variable": "$.artifacts.extract.mode", "StringEquals": "transcribe",
                    "Next": "StartTranscription"}
    start, poll = states["StartTranscription"], states["GetTranscription"]
    assert start["Resource"].endswith(":states:::aws-sdk:transcribe:startTranscriptionJob")
    assert poll["Resource"].endswith(":states:::aws-sdk:transcribe:getTranscriptionJob")
    assert start["Next"] == "WaitForTranscription" and states["WaitForTranscription"]["Type"] == "Wait"
    assert states["WaitForTranscription"]["Seconds"] == c.TRANSCRIBE_POLL_SECONDS
    assert states["WaitForTranscription"]["Next"] == "GetTranscription"
    # only the job's status is kept in the state
    assert poll["ResultSelector"] == {"status.$": "$.TranscriptionJob.TranscriptionJobStatus"}
    done = states["TranscriptionDone"]
    assert {r["StringEquals"]: r["Next"] for r in done["Choices"]} == {
        "COMPLETED": "Transcribed", "FAILED": "TranscriptionFailed"}
    assert done["Default"] == "WaitForTranscription" and states["Transcribed"]["Next"] == "Prepare"
    # the role may run memlane's Transcribe jobs only, and Transcribe reads media/ and writes work/
    (machine,) = dev.of_type("AWS::StepFunctions::StateMachine").values()
    granted = {a: json.dumps(s["Resource"]) for s in role_policies(dev, machine["Properties"]["RoleArn"]["Fn::GetAtt"][0])
               for a in as_list(s["Action"])}
    assert "transcription-job/memlane-*" in granted["transcribe:StartTranscriptionJob"]
    assert "transcription-job/memlane-*" in granted["transcribe:GetTranscriptionJob"]
    assert "/media/*" in granted["s3:GetObject"] and "/work/*" in granted["s3:PutObject"]


def test_every_step_retries_with_backoff_and_catches_into_mark_failed(dev):
    states = state_machine_definition(dev)["States"]
    for name in STEPS:
        step = states[name]
        retry, *others = step["Retry"]
        # Extract also waits out an organization's spent media budget: hourly, for two days
        expected = [{"ErrorEquals": ["MediaBudgetDeferred"], "IntervalSeconds": 3600, "MaxAttempts": 48,
                     "BackoffRate": 1}] if name == "Extract" else []
        assert others == expected
        assert retry["IntervalSeconds"] == 2
        assert retry["BackoffRate"] == 2
        assert retry["MaxAttempts"] == 3
        assert {"Lambda.ServiceException", "Lambda.TooManyRequestsException", "TransientError"} <= set(
            retry["ErrorEquals"]
        )
        (catch,) = step["Catch"]
        assert catch == {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "MarkFailed"}
    assert states["MarkFailed"]["Type"] == "Task"
    assert states["MarkFailed"]["Next"] == "IngestionFailed"
    assert states["IngestionFailed"]["Type"] == "Fail"


def test_states_pass_identifiers_and_keys_not_content(dev):
    states = state_machine_definition(dev)["States"]
    assert states["Start"]["Parameters"] == {"document.$": "$", "artifacts": {}}
    for name in STEPS:
        step = states[name]
        assert step["ResultPath"] == f"$.artifacts.{name.lower()}"
        assert step["Parameters"] == {
            "step": name.lower(),
            "document.$": "$.document",
            "artifacts.$": "$.artifacts",
            "execution.$": "$$.Execution.Name",
        }
    assert states["MarkFailed"]["Parameters"]["error.$"] == "$.error"
    assert states["MarkFailed"]["ResultPath"] is None  # discards the function's answer


def test_each_step_invokes_its_own_function(dev):
    (machine,) = dev.of_type("AWS::StepFunctions::StateMachine").values()
    rendered = str(machine["Properties"]["DefinitionString"])
    for _, spec in c.INGESTION_STEPS:
        function_id, _ = function_by_handler(dev, spec.handler)
        assert function_id in rendered
    mark_failed_id, _ = function_by_handler(dev, c.MARK_FAILED_FUNCTION.handler)
    assert mark_failed_id in rendered


def test_state_machine_is_standard_traced_and_logs_every_event(dev):
    dev.template.has_resource_properties(
        "AWS::StepFunctions::StateMachine",
        {
            "StateMachineType": "STANDARD",
            "TracingConfiguration": {"Enabled": True},
            "LoggingConfiguration": {
                "Level": "ALL",
                "IncludeExecutionData": False,
                "Destinations": [
                    {
                        "CloudWatchLogsLogGroup": {
                            "LogGroupArn": {
                                "Fn::GetAtt": [
                                    next(
                                        k
                                        for k, r in dev.of_type("AWS::Logs::LogGroup").items()
                                        if str(r["Properties"].get("LogGroupName", "")).startswith(
                                            "/aws/vendedlogs/states/"
                                        )
                                    ),
                                    "Arn",
                                ]
                            }
                        }
                    }
                ],
            },
        },
    )


def test_only_step_functions_are_invoked_by_the_state_machine(dev):
    (machine,) = dev.of_type("AWS::StepFunctions::StateMachine").values()
    role = machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    invoked = set()
    for statement in role_policies(dev, role):
        if "lambda:InvokeFunction" in as_list(statement["Action"]):
            for resource in as_list(statement["Resource"]):
                ref = resource.get("Fn::GetAtt") or resource["Fn::Join"][1][0]["Fn::GetAtt"]
                invoked.add(ref[0])
    step_handlers = {spec.handler for _, spec in c.INGESTION_STEPS} | {c.MARK_FAILED_FUNCTION.handler,
                                                                     c.TRANSCRIBED_FUNCTION.handler}
    expected = {k for k, f in memlane_functions(dev).items() if f["Properties"]["Handler"] in step_handlers}
    assert invoked == expected


def _actions_on(synth, function) -> dict[str, list[str]]:
    """Each granted action and the resources it names (rendered as JSON text)."""
    granted: dict[str, list[str]] = {}
    for statement in role_policies(synth, function_role(function)):
        for action in as_list(statement["Action"]):
            granted.setdefault(action, []).extend(json.dumps(r) for r in as_list(statement["Resource"]))
    return granted


def test_docset_functions_may_use_the_docset_store_and_send_to_the_page_queue_only(dev):
    # Given the page queue (the page worker's event source) and the ingest queue (the consumer's)
    sources = {
        m["Properties"]["FunctionName"]["Ref"]: _queue_id(m["Properties"]["EventSourceArn"])
        for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
    }
    worker_id, worker = function_by_handler(dev, c.PAGE_WORKER_FUNCTION.handler)
    page_queue = sources[worker_id]
    ingest_queue = sources[function_by_handler(dev, c.INGEST_CONSUMER_FUNCTION.handler)[0]]
    docset_store_actions = {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
    }
    for handler in (c.API_FUNCTION.handler, c.PAGE_WORKER_FUNCTION.handler, c.REFRESH_FUNCTION.handler):
        granted = _actions_on(dev, function_by_handler(dev, handler)[1])
        # Then each may read and write the table (DynamoDocsetStore) and send page messages
        assert docset_store_actions <= set(granted), handler
        assert any(page_queue in r for r in granted["sqs:SendMessage"]), handler
    # and the refresh job lists every docset from GSI1, and does nothing else
    refresh = _actions_on(dev, function_by_handler(dev, c.REFRESH_FUNCTION.handler)[1])
    assert any(f"/index/{schema.GSI1}" in r for r in refresh["dynamodb:Query"])
    assert not {a for a in refresh if a.startswith(("s3:", "es:", "aoss:", "bedrock:", "states:"))}
    assert not any(ingest_queue in r for r in refresh["sqs:SendMessage"])  # nothing to ingest
    # and the page worker indexes pages itself: embeddings, the search index, content in S3
    pages = _actions_on(dev, worker)
    assert {
        "bedrock:InvokeModel",
        "es:ESHttpPut",
        "es:ESHttpPost",
        "s3:PutObject",
        "s3:DeleteObjectVersion",
    } <= set(pages)
    assert not any(ingest_queue in r for r in pages["sqs:SendMessage"])  # it indexes, it queues no ingestion


def test_the_state_machine_outlasts_its_longest_retry_chain(every_variant):
    # Given the synthesized workflow: the longest path through it with every Task's retriers used to the end
    # (Extract waits an hour 48 times for a media budget) and the Transcribe poll loop given its allowance
    # (infra/workflow_budget.py, read from the synthesized definition; tests/unit/test_workflow_budget.py
    # checks the computation itself on definitions worked out by hand)
    definition = state_machine_definition(every_variant)
    states = definition["States"]
    worst = worst_case_seconds(definition, loop_allowance=c.TRANSCRIPTION_MAX_WAIT_S)
    assert worst > 48 * 3600
    # Then the execution's timeout is longer: no retry is ever cut off by States.Timeout, which no Catch sees
    # (the document would stay queued)
    assert definition["TimeoutSeconds"] > worst
    media_budget = next(r for r in states["Extract"]["Retry"] if r["ErrorEquals"] == ["MediaBudgetDeferred"])
    assert definition["TimeoutSeconds"] > media_budget["IntervalSeconds"] * media_budget["MaxAttempts"]
    # and every Task has a timeout of its own (an unbounded one would make the sum meaningless)
    assert all("TimeoutSeconds" in s for s in states.values() if s["Type"] == "Task")
