"""Storage: the metadata table follows memlane's key design; the buckets are private and encrypted."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra


def _table(synth):
    ((table_id, table),) = synth.of_type("AWS::DynamoDB::Table").items()
    return table_id, table


def test_table_keys_indexes_and_projections_match_the_adapters_schema(dev):
    # Given the table definition the DynamoDB adapter (and its moto tests) use
    expected = schema.table_definition("ignored")
    # When the stack is synthesized
    _, table = _table(dev)
    props = table["Properties"]
    # Then keys, attribute types, GSIs and projections are the same
    assert props["KeySchema"] == expected["KeySchema"]
    assert sorted(props["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
        expected["AttributeDefinitions"], key=lambda a: a["AttributeName"]
    )
    assert sorted(props["GlobalSecondaryIndexes"], key=lambda i: i["IndexName"]) == sorted(
        expected["GlobalSecondaryIndexes"], key=lambda i: i["IndexName"]
    )
    assert props["BillingMode"] == "PAY_PER_REQUEST"


def test_the_conversation_index_serves_a_conversation_in_message_order(dev):
    # A deployed table must answer the conversation stages' Query (memlane.adapters.aws.metadata.documents)
    _, table = _table(dev)
    indexes = {i["IndexName"]: i for i in table["Properties"]["GlobalSecondaryIndexes"]}
    assert indexes["gsi3"]["KeySchema"] == [
        {"AttributeName": "gsi3pk", "KeyType": "HASH"},
        {"AttributeName": "gsi3sk", "KeyType": "RANGE"},
    ]
    assert indexes["gsi3"]["Projection"] == {"ProjectionType": "ALL"}


def test_table_has_ttl_point_in_time_recovery_and_encryption(dev):
    dev.template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "TimeToLiveSpecification": {"AttributeName": schema.TTL_ATTRIBUTE, "Enabled": True},
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            "SSESpecification": {"SSEEnabled": True},
        },
    )


def test_dev_table_is_deleted_with_the_stack_and_prod_table_is_retained_and_protected(dev, prod):
    _, dev_table = _table(dev)
    _, prod_table = _table(prod)
    assert dev_table["DeletionPolicy"] == "Delete"
    assert dev_table["Properties"]["DeletionProtectionEnabled"] is False
    assert prod_table["DeletionPolicy"] == "Retain"
    assert prod_table["UpdateReplacePolicy"] == "Retain"
    assert prod_table["Properties"]["DeletionProtectionEnabled"] is True


def test_every_bucket_is_encrypted_private_and_tls_only(every_variant):
    buckets = every_variant.of_type("AWS::S3::Bucket")
    assert len(buckets) == 3  # content, access logs, the web app
    for bucket in buckets.values():
        props = bucket["Properties"]
        assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0][
            "ServerSideEncryptionByDefault"
        ] == {"SSEAlgorithm": "AES256"}
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }
    for policy in every_variant.of_type("AWS::S3::BucketPolicy").values():
        denies = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
        assert any(
            s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false" for s in denies
        )
    assert len(every_variant.of_type("AWS::S3::BucketPolicy")) == 3


def test_content_bucket_is_versioned_expires_old_versions_and_logs_access(dev):
    dev.template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "VersioningConfiguration": {"Status": "Enabled"},
            "LifecycleConfiguration": {
                "Rules": Match.array_with(
                    [
                        Match.object_like(
                            {"NoncurrentVersionExpiration": {"NoncurrentDays": 30}, "Status": "Enabled"}
                        ),
                        # the workflow's staged text, chunks and vectors live a day at most
                        Match.object_like(
                            {
                                "Prefix": "work/",
                                "ExpirationInDays": 1,
                                "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
                                "Status": "Enabled",
                            }
                        ),
                    ]
                )
            },
            "LoggingConfiguration": {
                "DestinationBucketName": {"Ref": Match.string_like_regexp("StorageAccessLogBucket")},
                "LogFilePrefix": "content/",
            },
        },
    )


def test_prod_buckets_are_retained(prod):
    for bucket in prod.of_type("AWS::S3::Bucket").values():
        assert bucket["DeletionPolicy"] == "Retain"
    assert not prod.of_type("Custom::S3AutoDeleteObjects")


def test_dev_buckets_are_emptied_and_deleted_with_the_stack(dev):
    for bucket in dev.of_type("AWS::S3::Bucket").values():
        assert bucket["DeletionPolicy"] == "Delete"
    assert len(dev.of_type("Custom::S3AutoDeleteObjects")) == 3
