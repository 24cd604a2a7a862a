"""`cdk synth -c searchBackend=s3vectors -c observability=lean`: Amazon S3 Vectors instead of OpenSearch
(an encrypted vector bucket, its default index mode set by memlane's custom resource, IAM scoped to the
bucket and its indexes) and the lean alarms."""

from __future__ import annotations

import pytest
from infra_helpers import as_list, function_role, join_to_text, memlane_functions, role_policies
from test_infra_search import SEARCH_WRITERS

from infra import constants as c
from infra.config import ConfigError, DeploymentConfig
from infra.constructs.vector_search import READ_ACTIONS, WRITE_ACTIONS
from memlane import observability
from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra


def _bucket(synth):
    ((logical_id, bucket),) = synth.of_type("AWS::S3Vectors::VectorBucket").items()
    return logical_id, bucket


def test_no_opensearch_at_all_and_one_vector_bucket_encrypted_with_the_stacks_own_rotating_key(s3vectors):
    assert not s3vectors.of_type("AWS::OpenSearchService::Domain")
    assert not s3vectors.of_type("AWS::OpenSearchServerless::Collection")
    assert not s3vectors.of_type("AWS::Logs::ResourcePolicy")  # the domain's log delivery
    _, bucket = _bucket(s3vectors)
    props = bucket["Properties"]
    assert props["VectorBucketName"] == "memlane-dev-vectors"
    assert props["EncryptionConfiguration"]["SseType"] == "aws:kms"
    key_id = props["EncryptionConfiguration"]["KmsKeyArn"]["Fn::GetAtt"][0]
    key = s3vectors.props(key_id)
    assert key["EnableKeyRotation"] is True and "S3 Vectors" in key["Description"]
    service = [s for s in key["KeyPolicy"]["Statement"] if "Service" in s["Principal"]]
    assert service == [{"Action": "kms:Decrypt", "Effect": "Allow", "Resource": "*",
                        "Principal": {"Service": "indexing.s3vectors.amazonaws.com"},
                        "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}}]
    assert bucket["DeletionPolicy"] == "Delete"  # dev: nothing retained


def test_a_custom_resource_makes_the_bucket_enhanced_and_empties_it_before_a_dev_stack_deletes_it(s3vectors):
    bucket_id, _ = _bucket(s3vectors)
    ((_, setup),) = s3vectors.of_type("Custom::MemlaneVectorBucket").items()
    assert setup["Properties"]["VectorBucketName"] == "memlane-dev-vectors"
    assert setup["Properties"]["EmptyOnDelete"] == "true"
    assert bucket_id in setup["DependsOn"]  # deleted before the bucket
    function_id = setup["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    function = s3vectors.resources[function_id]
    assert function["Properties"]["Handler"] == c.VECTOR_BUCKET_FUNCTION.handler
    statements = role_policies(s3vectors, function_role(function))
    granted = {a for s in statements for a in as_list(s["Action"]) if a.startswith("s3vectors:")}
    assert granted == {"s3vectors:PutVectorBucketDefaultIndexMode", "s3vectors:ListIndexes", "s3vectors:DeleteIndex"}


def test_search_users_get_exactly_the_s3vectors_actions_on_the_bucket_and_its_indexes(s3vectors):
    bucket_id, _ = _bucket(s3vectors)
    bucket_arn = f"<{bucket_id}.VectorBucketArn>"
    for function in memlane_functions(s3vectors).values():
        handler = function["Properties"]["Handler"]
        if handler == c.VECTOR_BUCKET_FUNCTION.handler:
            continue
        statements = role_policies(s3vectors, function_role(function))
        on_indexes = {a for s in statements for a in as_list(s["Action"]) if a.startswith("s3vectors:")
                      and join_to_text(as_list(s["Resource"])[0]) == f"{bucket_arn}/index/*"}
        on_bucket = {a for s in statements for a in as_list(s["Action"]) if a.startswith("s3vectors:")
                     and join_to_text(as_list(s["Resource"])[0]) == bucket_arn}
        every = {a for s in statements for a in as_list(s["Action"]) if a.startswith("s3vectors:")}
        assert every == on_indexes | on_bucket, handler  # nothing outside the bucket
        if handler in SEARCH_WRITERS:
            assert on_indexes == set(WRITE_ACTIONS) and on_bucket == {"s3vectors:ListIndexes"}, handler
            kms = [s for s in statements if "kms:GenerateDataKey" in as_list(s["Action"])]
            assert kms and all(s["Condition"]["StringEquals"]["kms:ViaService"] for s in kms)
        else:
            assert every == set(), handler
    assert set(READ_ACTIONS) == {"s3vectors:QueryVectors", "s3vectors:GetVectors", "s3vectors:GetIndex"}
    assert not {a for a in WRITE_ACTIONS if a.endswith(("*", "DeleteIndex", "DeleteVectorBucket"))}


def test_functions_are_told_the_vector_bucket_not_an_endpoint(s3vectors):
    for function in memlane_functions(s3vectors).values():
        env = function["Properties"]["Environment"]["Variables"]
        assert env[schema.ENV_SEARCH_KIND] == "s3vectors"
        assert env[schema.ENV_VECTOR_BUCKET] == "memlane-dev-vectors"
        assert env[schema.ENV_SEARCH_INDEX_ALIAS] == c.SEARCH_INDEX_ALIAS
        assert schema.ENV_SEARCH_ENDPOINT not in env
    outputs = s3vectors.template_json["Outputs"]
    assert outputs["VectorBucketName"]["Value"] == "memlane-dev-vectors" and "SearchEndpoint" not in outputs


def test_lean_observability_keeps_the_alarms_that_say_data_is_lost_or_not_served(s3vectors, dev):
    alarms = {a["Properties"]["AlarmName"].removeprefix("memlane-dev-")
              for a in s3vectors.of_type("AWS::CloudWatch::Alarm").values()}
    dlqs = {"IngestDlqDepth", "PageDlqDepth", "ForgetDlqDepth", "RefreshDlqDepth", "ConnectionsScheduleDlqDepth",
            "SyncDlqDepth", "ExtractionDlqDepth"}
    assert alarms == dlqs | {"Api5xx", "IngestionExecutionsFailed", "IngestionExecutionsTimedOut",
                             f"{observability.WRITES_FAILED}Count"}
    assert not s3vectors.of_type("AWS::CloudWatch::Dashboard")
    full = dev.of_type("AWS::CloudWatch::Alarm")
    assert len(full) == len(c.ALL_FUNCTIONS) + len(dlqs) + 2 + len(observability.ALARMED) + 1 == 30
    # and the functions publish only the metric those alarms read
    for function in memlane_functions(s3vectors).values():
        assert function["Properties"]["Environment"]["Variables"][observability.ENV_METRICS] == "alarmed"
    for function in memlane_functions(dev).values():
        assert observability.ENV_METRICS not in function["Properties"]["Environment"]["Variables"]


def test_search_backend_is_read_from_either_spelling_and_refused_when_unknown():
    def config(**context: str) -> DeploymentConfig:
        return DeploymentConfig.from_mapping({"search_backend": "managed", **context})

    assert config(searchBackend="s3vectors").search_backend == "s3vectors"
    assert config(search_backend="s3vectors").search_backend == "s3vectors"
    assert config().search_backend == "managed" and config().observability == "full"
    with pytest.raises(ConfigError, match="search_backend='pinecone': choose one of managed, serverless, s3vectors"):
        config(searchBackend="pinecone")
    with pytest.raises(ConfigError, match="observability='minimal': choose one of full, lean"):
        config(observability="minimal")

