"""Facts from conversations on AWS: the extraction queue with its DLQ, its consumer with partial
batch failures, Bedrock access scoped to the one LLM, and the API that only queues."""

from __future__ import annotations

import json

import pytest
from infra_helpers import as_list, function_by_handler, function_role, join_to_text, role_policies

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


@pytest.mark.parametrize(("region", "model"), [
    ("us-east-1", c.DEFAULT_LLM_MODEL),  # Amazon Nova Micro on demand
    ("us-west-2", f"us.{c.DEFAULT_LLM_MODEL}"),  # elsewhere through its geography's inference profile
    ("eu-west-1", f"eu.{c.DEFAULT_LLM_MODEL}"),
    ("ap-southeast-2", f"apac.{c.DEFAULT_LLM_MODEL}"),
])
def test_the_default_llm_is_one_the_deploying_region_can_invoke(region, model):
    config = DeploymentConfig.from_mapping({"stage": "dev", "region": region})
    assert (config.llm_model, config.llm_model_for_region) == (model, True)
    assert model in config.llm_model_note and region in config.llm_model_note
    # the Region comes from the CDK CLI when the context does not name it
    assert DeploymentConfig.from_mapping({"stage": "dev"}, {"CDK_DEFAULT_REGION": region}).llm_model == model


@pytest.mark.parametrize(("context", "environ", "why"), [
    ({"region": "sa-east-1"}, {}, "is not offered in sa-east-1"),
    ({}, {}, "not known at synth"),
])
def test_without_a_model_the_region_offers_extraction_is_off_and_synth_says_why(context, environ, why):
    config = DeploymentConfig.from_mapping({"stage": "dev", **context}, environ)
    assert config.llm_model == "" and why in config.llm_model_note
    # a model named explicitly is deployed as given, wherever
    named = DeploymentConfig.from_mapping({"stage": "dev", "llm_model": "eu.amazon.nova-lite-v1:0", **context}, environ)
    assert (named.llm_model, named.llm_model_note, named.llm_model_for_region) == ("eu.amazon.nova-lite-v1:0", "", False)


def test_an_inference_profile_is_granted_with_the_model_in_every_region_it_routes_to(prod):
    # Given the prod variant deployed to eu-west-1: the default LLM through the eu. profile
    profile = f"eu.{c.DEFAULT_LLM_MODEL}"
    _, consumer = function_by_handler(prod, c.EXTRACTION_CONSUMER_FUNCTION.handler)
    assert consumer["Properties"]["Environment"]["Variables"][schema.ENV_LLM_MODEL_ID] == profile
    granted = {join_to_text(r) for s in role_policies(prod, function_role(consumer))
               if "bedrock:InvokeModel" in as_list(s["Action"]) for r in as_list(s["Resource"])}
    # Then InvokeModel (Converse) is granted on the profile in this Region and account, and on the model in
    # each Region the profile may send the request to (Bedrock picks one per request)
    assert "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/" + profile in granted
    for region in c.INFERENCE_PROFILE_DESTINATIONS["eu"]:
        assert f"arn:<AWS::Partition>:bedrock:{region}::foundation-model/{c.DEFAULT_LLM_MODEL}" in granted
    # and no foundation-model grant names the profile id (the grant that was refused: foundation-model/eu.…)
    assert not any(f"foundation-model/{profile}" in r for r in granted)
    # and the template refuses to be deployed to another Region than the one the model was chosen for
    rule = prod.template_json["Rules"]["LlmModelRegion"]
    assert rule["Assertions"][0]["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Region"}, "eu-west-1"]}


def test_synth_tells_which_llm_it_chose_and_why(dev):
    from aws_cdk.assertions import Annotations, Match

    notes = Annotations.from_stack(dev.stack).find_info("*", Match.string_like_regexp("llm_model=auto"))
    assert [n.entry.data for n in notes] == [f"llm_model=auto: {c.DEFAULT_LLM_MODEL} on demand in us-east-1"]
