"""What the permission trace says each AWS call needs (tests/aws_trace/needs.py), checked against the
Service Authorization Reference case by case: a wrong entry here would let a missing grant pass."""

from __future__ import annotations

from typing import Any

from aws_trace.needs import CallInfo, needs

from infra import constants as c


class Lookup:
    def kms_key_arn(self, key_id: str) -> str:
        return f"arn:aws:kms:us-east-1:123456789012:key/{key_id}"

    def secret_arn(self, secret_id: str) -> str:
        return f"arn:aws:secretsmanager:us-east-1:123456789012:secret:{secret_id}-AbCdEf"

    def api_key_tags(self, api_key_id: str) -> dict[str, str]:
        return {"memlane:stage": "dev"}


def need_list(service: str, operation: str, params: dict[str, Any], **after: Any) -> list[tuple[str, str]]:
    call = CallInfo(service, operation, params, "us-east-1", Lookup(), **after)
    return [(n.action, n.resource) for n in needs(call)]


TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/t"


def test_dynamodb_queries_name_their_index_and_transactions_each_item():
    assert need_list("dynamodb", "Query", {"TableName": "t", "IndexName": "gsi3"}) == [
        ("dynamodb:Query", f"{TABLE}/index/gsi3")]
    assert need_list("dynamodb", "TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": "t"}}, {"Delete": {"TableName": "t"}}]}) == [
        ("dynamodb:PutItem", TABLE), ("dynamodb:DeleteItem", TABLE)]


def test_s3_deletes_of_versions_and_a_missing_key_s_404():
    objects = {"Objects": [{"Key": "raw/a", "VersionId": "v1"}, {"Key": "raw/b"}]}
    assert need_list("s3", "DeleteObjects", {"Bucket": "b", "Delete": objects}) == [
        ("s3:DeleteObjectVersion", "arn:aws:s3:::b/raw/a"), ("s3:DeleteObject", "arn:aws:s3:::b/raw/b")]
    assert need_list("s3", "GetObject", {"Bucket": "b", "Key": "k"}, error_code="NoSuchKey") == [
        ("s3:ListBucket", "arn:aws:s3:::b")]
    assert need_list("s3", "ListObjectVersions", {"Bucket": "b"}) == [("s3:ListBucketVersions", "arn:aws:s3:::b")]


def test_kms_decrypt_without_a_key_id_needs_the_key_the_ciphertext_named():
    assert need_list("kms", "Decrypt", {"CiphertextBlob": b"x"}) == []
    key = "arn:aws:kms:us-east-1:123456789012:key/k1"
    assert need_list("kms", "Decrypt", {"CiphertextBlob": b"x"}, response={"KeyId": key}) == [("kms:Decrypt", key)]


def test_an_inference_profile_needs_the_profile_and_the_model_wherever_it_routes():
    found = need_list("bedrock-runtime", "Converse", {"modelId": "eu.amazon.nova-micro-v1:0"})
    assert found[0] == ("bedrock:InvokeModel",
                        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.amazon.nova-micro-v1:0")
    assert {r for _, r in found[1:]} == {f"arn:aws:bedrock:{region}::foundation-model/amazon.nova-micro-v1:0"
                                        for region in c.INFERENCE_PROFILE_DESTINATIONS["eu"]}
    assert need_list("bedrock-runtime", "InvokeModel", {"modelId": "amazon.titan-embed-text-v2:0"}) == [
        ("bedrock:InvokeModel", "arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0")]
    assert need_list("bedrock-runtime", "Converse", {"modelId": "global.amazon.nova-2-lite-v1:0"})[1] == (
        "bedrock:InvokeModel", "arn:aws:bedrock:::foundation-model/amazon.nova-2-lite-v1:0")


def test_rerank_needs_its_action_on_star_and_the_model_it_reads():
    model = "arn:aws:bedrock:us-east-1::foundation-model/cohere.rerank-v3-5:0"
    config = {"bedrockRerankingConfiguration": {"modelConfiguration": {"modelArn": model}}}
    assert need_list("bedrock-agent-runtime", "Rerank", {"rerankingConfiguration": config}) == [
        ("bedrock:Rerank", "*"), ("bedrock:InvokeModel", model)]


def test_api_keys_carry_their_tags_as_condition_context():
    call = CallInfo("apigateway", "CreateApiKey", {"tags": {"memlane:stage": "dev"}}, "us-east-1", Lookup())
    (create,) = needs(call)
    assert create.context == {"aws:RequestTag/memlane:stage": "dev", "aws:TagKeys": ["memlane:stage"]}
    delete = CallInfo("apigateway", "DeleteApiKey", {"apiKey": "abc"}, "us-east-1", Lookup())
    assert needs(delete)[0].context == {"aws:ResourceTag/memlane:stage": "dev"}


def test_s3_vectors_queries_with_metadata_also_need_get_vectors():
    index = "arn:aws:s3vectors:us-east-1:123456789012:bucket/vb/index/chunks"
    assert need_list("s3vectors", "QueryVectors", {"vectorBucketName": "vb", "indexName": "chunks",
                                                   "filter": {"org": "a"}}) == [
        ("s3vectors:QueryVectors", index), ("s3vectors:GetVectors", index)]
    assert need_list("s3vectors", "PutVectors", {"indexArn": index}) == [("s3vectors:PutVectors", index)]


def test_an_operation_nobody_wrote_down_is_a_need_nothing_grants():
    ((action, resource),) = need_list("ec2", "RunInstances", {})
    assert action == "UNMAPPED:ec2:RunInstances" and resource == "*"
