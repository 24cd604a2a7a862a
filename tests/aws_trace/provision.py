"""The template's resources that functions call, created in moto from their synthesized
properties (one provisioner per resource type); every other resource gets placeholder names and
ARNs (world.Physical). A new kind of resource the code calls (an S3 vector bucket, say) gets a
provisioner here."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_trace.template import ACCOUNT, PARTITION

if TYPE_CHECKING:
    from aws_trace.world import World

Provisioner = Callable[["World", str, dict[str, Any]], dict[str, str]]
PROVISIONERS: dict[str, Provisioner] = {}


def provisioner(resource_type: str) -> Callable[[Provisioner], Provisioner]:
    def register(fn: Provisioner) -> Provisioner:
        PROVISIONERS[resource_type] = fn
        return fn

    return register


def provision(world: World, logical_id: str, resource: dict[str, Any]) -> dict[str, str] | None:
    fn = PROVISIONERS.get(resource["Type"])
    if fn is None:
        return None
    from aws_trace.world import _Attributes

    attributes = fn(world, logical_id, world.resolve(resource.get("Properties", {})))
    return _Attributes(logical_id, world.template.region, **attributes)


def _name(world: World, logical_id: str) -> str:
    from aws_trace.world import short_name

    return f"{world.template.stack_name}-{short_name(logical_id)}"


@provisioner("AWS::DynamoDB::Table")
def _table(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    name = str(props.get("TableName") or _name(world, logical_id))
    indexes = [{k: v for k, v in index.items() if k in ("IndexName", "KeySchema", "Projection")}
               for index in props.get("GlobalSecondaryIndexes", [])]
    dynamodb = world.client("dynamodb")
    dynamodb.create_table(TableName=name, KeySchema=props["KeySchema"],
                          AttributeDefinitions=props["AttributeDefinitions"], BillingMode="PAY_PER_REQUEST",
                          **({"GlobalSecondaryIndexes": indexes} if indexes else {}))
    ttl = props.get("TimeToLiveSpecification")
    if ttl:
        dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)
    arn = f"arn:{PARTITION}:dynamodb:{world.template.region}:{ACCOUNT}:table/{name}"
    return {"Ref": name, "Arn": arn}


@provisioner("AWS::S3::Bucket")
def _bucket(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    name = str(props.get("BucketName") or _name(world, logical_id)).lower()[:63]
    s3 = world.client("s3")
    region = world.template.region
    s3.create_bucket(Bucket=name, **({} if region == "us-east-1" else
                                     {"CreateBucketConfiguration": {"LocationConstraint": region}}))
    if props.get("VersioningConfiguration", {}).get("Status") == "Enabled":
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return {"Ref": name, "Arn": f"arn:{PARTITION}:s3:::{name}", "DomainName": f"{name}.s3.amazonaws.com",
            "RegionalDomainName": f"{name}.s3.{world.template.region}.amazonaws.com"}


@provisioner("AWS::SQS::Queue")
def _queue(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    name = str(props.get("QueueName") or _name(world, logical_id))
    attributes = {"VisibilityTimeout": str(props.get("VisibilityTimeout", 30))}
    url = str(world.client("sqs").create_queue(QueueName=name, Attributes=attributes)["QueueUrl"])
    return {"Ref": url, "QueueUrl": url, "QueueName": name,
            "Arn": f"arn:{PARTITION}:sqs:{world.template.region}:{ACCOUNT}:{name}"}


@provisioner("AWS::StepFunctions::StateMachine")
def _state_machine(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    """Registered in moto so StartExecution records executions; the harness runs them itself."""
    name = str(props.get("StateMachineName") or _name(world, logical_id))
    definition = json.dumps({"StartAt": "Run", "States": {"Run": {"Type": "Pass", "End": True}}})
    arn = world.client("stepfunctions").create_state_machine(
        name=name, definition=definition, roleArn=str(props["RoleArn"]))["stateMachineArn"]
    return {"Ref": str(arn), "Arn": str(arn), "Name": name}


@provisioner("AWS::S3Vectors::VectorBucket")
def _vector_bucket(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    """The bucket only: its indexes are memlane's to create, one per organization, at run time."""
    name = str(props.get("VectorBucketName") or _name(world, logical_id).lower())
    world.client("s3vectors").create_vector_bucket(vectorBucketName=name)
    arn = f"arn:{PARTITION}:s3vectors:{world.template.region}:{ACCOUNT}:bucket/{name}"
    return {"Ref": name, "VectorBucketArn": arn, "Arn": arn}


@provisioner("AWS::KMS::Key")
def _key(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    metadata = world.client("kms").create_key(Description=str(props.get("Description", logical_id)))["KeyMetadata"]
    return {"Ref": str(metadata["KeyId"]), "Arn": str(metadata["Arn"]), "KeyId": str(metadata["KeyId"])}


@provisioner("AWS::ApiGateway::RestApi")
def _rest_api(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    api = world.client("apigateway").create_rest_api(name=str(props.get("Name", logical_id)))
    return {"Ref": str(api["id"]), "RootResourceId": str(api["rootResourceId"])}


@provisioner("AWS::ApiGateway::UsagePlan")
def _usage_plan(world: World, logical_id: str, props: dict[str, Any]) -> dict[str, str]:
    plan = world.client("apigateway").create_usage_plan(name=str(props.get("UsagePlanName", logical_id)))
    return {"Ref": str(plan["id"]), "Id": str(plan["id"])}
