"""Schedules (EventBridge Scheduler) and observability (alarms, topic, dashboard)."""

from __future__ import annotations

import json

import pytest
from infra_helpers import as_list, function_by_handler, function_role, memlane_functions, role_policies

from infra import constants as c
from memlane import observability

pytestmark = pytest.mark.infra


def _schedules(synth):
    return {
        s["Properties"]["ScheduleExpression"]: s["Properties"]
        for s in synth.of_type("AWS::Scheduler::Schedule").values()
    }


def test_forget_runs_hourly_and_refresh_daily(dev):
    schedules = _schedules(dev)
    assert set(schedules) == {"rate(1 hour)", "rate(1 day)", "rate(15 minutes)"}
    forget_id, _ = function_by_handler(dev, c.FORGET_FUNCTION.handler)
    refresh_id, _ = function_by_handler(dev, c.REFRESH_FUNCTION.handler)
    assert schedules["rate(1 hour)"]["Target"]["Arn"] == {"Fn::GetAtt": [forget_id, "Arn"]}
    assert schedules["rate(1 day)"]["Target"]["Arn"] == {"Fn::GetAtt": [refresh_id, "Arn"]}


def test_each_schedule_has_its_own_dlq_a_retry_policy_and_the_scheduler_role(dev):
    dlqs = set()
    for schedule in _schedules(dev).values():
        target = schedule["Target"]
        dlq = target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0]
        assert dev.resources[dlq]["Type"] == "AWS::SQS::Queue"
        dlqs.add(dlq)
        assert target["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 3600}
        role = dev.props(target["RoleArn"]["Fn::GetAtt"][0])
        (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
        assert "aws:SourceAccount" in trust["Condition"]["StringEquals"]
    assert len(dlqs) == 3


def test_job_failures_after_invocation_land_in_the_same_dlq(dev):
    targets = {
        s["Target"]["Arn"]["Fn::GetAtt"][0]: s["Target"]["DeadLetterConfig"]["Arn"]
        for s in _schedules(dev).values()
    }
    configs = dev.of_type("AWS::Lambda::EventInvokeConfig")
    assert len(configs) == 3
    for config in configs.values():
        props = config["Properties"]
        function = props["FunctionName"]["Ref"]
        assert props["DestinationConfig"]["OnFailure"]["Destination"] == targets[function]
        assert props["MaximumRetryAttempts"] == c.JOB_ASYNC_RETRY_ATTEMPTS


def _alarms(synth):
    return list(synth.of_type("AWS::CloudWatch::Alarm").values())


def _dead_letter_queues(synth) -> set[str]:
    queues = synth.of_type("AWS::SQS::Queue")
    dlqs = {
        q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        for q in queues.values()
        if "RedrivePolicy" in q["Properties"]
    }
    dlqs |= {s["Target"]["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0] for s in _schedules(synth).values()}
    return dlqs


def test_every_dlq_has_a_depth_alarm(every_variant):
    watched = set()
    for alarm in _alarms(every_variant):
        props = alarm["Properties"]
        if props.get("MetricName") == "ApproximateNumberOfMessagesVisible":
            (dimension,) = props["Dimensions"]
            watched.add(dimension["Value"]["Fn::GetAtt"][0])
            assert props["Threshold"] == 1
            assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    dlqs = _dead_letter_queues(every_variant)
    assert len(dlqs) == 7  # with the extraction queue's
    assert watched == dlqs


def test_every_function_has_an_errors_alarm(every_variant):
    watched = {
        alarm["Properties"]["Dimensions"][0]["Value"]["Ref"]
        for alarm in _alarms(every_variant)
        if alarm["Properties"].get("MetricName") == "Errors"
        and alarm["Properties"]["Namespace"] == "AWS/Lambda"
    }
    functions = memlane_functions(every_variant)
    if every_variant.name == "s3vectors":  # lean observability: failures show in DLQs, 5XX and executions
        assert watched == set()
        return
    assert len(functions) == len(c.ALL_FUNCTIONS)
    assert watched == set(functions)


def test_failed_ingestion_executions_raise_an_alarm(dev):
    (machine,) = dev.of_type("AWS::StepFunctions::StateMachine")
    failed = [
        a["Properties"] for a in _alarms(dev) if a["Properties"].get("MetricName") == "ExecutionsFailed"
    ]
    assert len(failed) == 1
    assert failed[0]["Dimensions"] == [{"Name": "StateMachineArn", "Value": {"Ref": machine}}]


def test_memlanes_own_failure_counts_raise_alarms(dev):
    # The counts the functions emit as EMF (memlane.observability), in memlane's namespace with
    # the service dimension Powertools adds
    own = {a["Properties"]["MetricName"]: a["Properties"] for a in _alarms(dev)
           if a["Properties"].get("Namespace") == c.METRICS_NAMESPACE}
    assert set(own) == set(observability.ALARMED)
    for props in own.values():
        assert props["Statistic"] == "Sum" and props["Period"] == c.ALARM_PERIOD_MINUTES * 60
        assert props["Dimensions"] == [{"Name": "service", "Value": c.SERVICE_NAME}]
    assert own[observability.WRITES_FAILED]["Threshold"] == 1
    assert own[observability.PAGE_ERRORS]["Threshold"] == c.PAGE_ERRORS_ALARM


def test_the_functions_that_count_flush_metrics_in_their_namespace(dev):
    for _, function in memlane_functions(dev).items():
        env = function["Properties"]["Environment"]["Variables"]
        assert env[c.ENV_POWERTOOLS_METRICS_NAMESPACE] == c.METRICS_NAMESPACE
        assert env[c.ENV_POWERTOOLS_SERVICE_NAME] == c.SERVICE_NAME


def test_every_alarm_notifies_the_encrypted_topic(dev):
    ((topic_id, topic),) = dev.of_type("AWS::SNS::Topic").items()
    key = topic["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0]
    assert dev.props(key)["EnableKeyRotation"] is True
    for alarm in _alarms(dev):
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["Properties"]["TreatMissingData"] == "notBreaching"
    (policy,) = dev.of_type("AWS::SNS::TopicPolicy").values()
    assert any(s["Effect"] == "Deny" for s in policy["Properties"]["PolicyDocument"]["Statement"])


def test_alarm_email_subscribes_to_the_topic_when_given(dev, prod):
    assert not dev.of_type("AWS::SNS::Subscription")
    (subscription,) = prod.of_type("AWS::SNS::Subscription").values()
    assert subscription["Properties"]["Protocol"] == "email"
    assert subscription["Properties"]["Endpoint"] == "ops@example.com"


def test_one_dashboard_per_stage(dev, prod):
    (dashboard,) = dev.of_type("AWS::CloudWatch::Dashboard").values()
    assert dashboard["Properties"]["DashboardName"] == "memlane-dev"
    (prod_dashboard,) = prod.of_type("AWS::CloudWatch::Dashboard").values()
    assert prod_dashboard["Properties"]["DashboardName"] == "memlane-prod"


def test_authorizer_refusals_alarm_on_a_burst_not_on_each_refused_key(dev):
    alarms = {a["Properties"]["AlarmName"]: a["Properties"] for a in dev.of_type("AWS::CloudWatch::Alarm").values()}
    refusals = [p for name, p in alarms.items() if name.endswith(f"{c.AUTHORIZER_FUNCTION.construct_id}Refusals")]
    assert len(refusals) == 1 and refusals[0]["Threshold"] == c.AUTHORIZER_REFUSALS_ALARM
    assert not any(name.endswith(f"{c.AUTHORIZER_FUNCTION.construct_id}Errors") for name in alarms)
    others = [p for name, p in alarms.items() if name.endswith("Errors")]
    assert others and all(p["Threshold"] == 1 for p in others)


def test_connections_sync_every_15_minutes_through_the_sync_queue(dev):
    schedule_id, schedule_fn = function_by_handler(dev, c.CONNECTION_SCHEDULE_FUNCTION.handler)
    assert _schedules(dev)["rate(15 minutes)"]["Target"]["Arn"] == {"Fn::GetAtt": [schedule_id, "Arn"]}
    # the schedule function only reads connections (through GSI1) and sends messages
    actions = {a for s in role_policies(dev, function_role(schedule_fn)) for a in as_list(s["Action"])}
    assert not {a for a in actions if a.startswith(("s3:", "es:", "kms:", "bedrock:", "secretsmanager:"))}
    assert not {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"} & actions
    assert "sqs:SendMessage" in actions
    # the sync function reads the queue one connection at a time, with partial batch failures
    sync_id, sync_fn = function_by_handler(dev, c.CONNECTION_SYNC_FUNCTION.handler)
    (mapping,) = [m["Properties"] for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
                  if m["Properties"]["FunctionName"]["Ref"] == sync_id]
    assert mapping["BatchSize"] == 1 and mapping["ScalingConfig"]["MaximumConcurrency"] == 5
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_connection_tokens_are_sealed_with_a_rotated_key_only_the_api_and_sync_may_use(dev):
    (key_id, key), *others = [(k, r) for k, r in dev.of_type("AWS::KMS::Key").items() if "TokenKey" in k]
    assert not others and key["Properties"]["EnableKeyRotation"] is True
    users = {}
    for function in memlane_functions(dev).values():
        for statement in role_policies(dev, function_role(function)):
            if any(str(a).startswith("kms:") for a in as_list(statement["Action"])):
                users[function["Properties"]["Handler"]] = set(as_list(statement["Action"]))
                assert statement["Resource"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert users == {c.API_FUNCTION.handler: {"kms:Encrypt", "kms:Decrypt"},
                     c.CONNECTION_SYNC_FUNCTION.handler: {"kms:Encrypt", "kms:Decrypt"}}
    # the OAuth clients are read by name from a secret the operator creates, never from the template
    _, api = function_by_handler(dev, c.API_FUNCTION.handler)
    env = api["Properties"]["Environment"]["Variables"]
    assert env["MEMLANE_CONNECTIONS_SECRET"] == "memlane/connections"
    assert "execute-api" in json.dumps(env["MEMLANE_PUBLIC_URL"])
