"""Facts from conversations on AWS: the extraction queue with its DLQ, its consumer with partial
batch failures, Bedrock access scoped to the one LLM, and the API that only queues."""

from __future__ import annotations

import json

import pytest
from infra_helpers import as_list, function_by_handler, function_role, role_policies

from infra import constants as c
from infra.config import ConfigError, DeploymentConfig
from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra


def _extraction_queue(synth) -> tuple[str, dict]:
    (queue_id,) = [k for k in synth.of_type("AWS::SQS::Queue") if "ExtractionQueue" in k and "Dlq" not in k]
    return queue_id, synth.props(queue_id)


def test_extractions_go_through_a_queue_with_a_dlq_to_a_consumer_reporting_partial_failures(dev):
    queue_id, queue = _extraction_queue(dev)
    dlq_arn = queue["RedrivePolicy"]["deadLetterTargetArn"]
    assert "ExtractionQueueDlq" in dlq_arn["Fn::GetAtt"][0]
    assert queue["RedrivePolicy"]["maxReceiveCount"] == c.DLQ_MAX_RECEIVE_COUNT
    consumer_id, consumer = function_by_handler(dev, c.EXTRACTION_CONSUMER_FUNCTION.handler)
    (mapping,) = [m["Properties"] for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
                  if m["Properties"]["FunctionName"]["Ref"] == consumer_id]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 1 and mapping["ScalingConfig"]["MaximumConcurrency"] == c.EXTRACTION_MAX_CONCURRENCY
    assert queue["VisibilityTimeout"] >= c.VISIBILITY_TIMEOUT_FACTOR * consumer["Properties"]["Timeout"]


def test_only_the_consumer_may_call_the_llm_and_only_that_model(dev):
    llm_arn_end = f':foundation-model/{c.DEFAULT_LLM_MODEL}"]]}}'
    callers = set()
    for function in (dev.of_type("AWS::Lambda::Function")).values():
        if "Role" not in function["Properties"]:
            continue
        try:
            policies = role_policies(dev, function_role(function))
        except (KeyError, ValueError):
            continue
        for statement in policies:
            if any(str(a).startswith("bedrock:") for a in as_list(statement["Action"])):
                resources = [json.dumps(r) for r in as_list(statement["Resource"])]
                if any(r.endswith(llm_arn_end) for r in resources):
                    # InvokeModel on the LLM (and, merged into the same statement by CDK, the embedder)
                    assert as_list(statement["Action"]) == ["bedrock:InvokeModel"]
                    assert all(r.endswith((llm_arn_end, ':foundation-model/amazon.titan-embed-text-v2:0"]]}'))
                               for r in resources), resources
                    callers.add(function["Properties"]["Handler"])
    assert callers == {c.EXTRACTION_CONSUMER_FUNCTION.handler}
    _, consumer = function_by_handler(dev, c.EXTRACTION_CONSUMER_FUNCTION.handler)
    env = consumer["Properties"]["Environment"]["Variables"]
    assert env[schema.ENV_LLM_MODEL_ID] == c.DEFAULT_LLM_MODEL


def test_the_api_queues_extractions_and_knows_the_model_but_never_calls_it(dev):
    queue_id, _ = _extraction_queue(dev)
    _, api = function_by_handler(dev, c.API_FUNCTION.handler)
    env = api["Properties"]["Environment"]["Variables"]
    assert env[schema.ENV_EXTRACTION_QUEUE_URL] == {"Ref": queue_id}
    assert env[schema.ENV_LLM_MODEL_ID] == c.DEFAULT_LLM_MODEL
    sends = [s for s in role_policies(dev, function_role(api)) if "sqs:SendMessage" in as_list(s["Action"])]
    assert any({"Fn::GetAtt": [queue_id, "Arn"]} in as_list(s["Resource"]) for s in sends)


def test_the_llm_model_setting_is_checked_and_empty_turns_extraction_off():
    base = {"stage": "dev"}
    assert DeploymentConfig.from_mapping({**base, "llm_model": ""}).llm_model == ""
    assert DeploymentConfig.from_mapping({**base, "llm_model": "anthropic.claude-3-haiku-20240307-v1:0"}).llm_model
    with pytest.raises(ConfigError, match="llm_model"):
        DeploymentConfig.from_mapping({**base, "llm_model": "../../etc; rm"})
