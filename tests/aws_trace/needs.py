"""What IAM authorizes for each AWS call memlane makes: the action(s), the resource ARN(s) and the
condition context, per (botocore service, operation), from the Service Authorization Reference.

A call is checked twice: `before` the request (what is known from its parameters; a denied need is
answered AccessDenied as AWS would) and `after` it (what only the response tells, such as the KMS
key a Decrypt used, or that a missing S3 key answers 404 only to a role that may list the bucket).

An operation with no entry here is a need that nothing grants (`UNMAPPED:...`): a new AWS call in
memlane's code fails the trace until its authorization is written down here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, urlparse

from aws_trace.policy import Need
from aws_trace.template import ACCOUNT, PARTITION
from infra import constants as c


class Lookup(Protocol):
    """What a need may ask the world (answered without recording a call)."""

    def kms_key_arn(self, key_id: str) -> str: ...

    def secret_arn(self, secret_id: str) -> str: ...

    def api_key_tags(self, api_key_id: str) -> dict[str, str]: ...


@dataclass
class CallInfo:
    service: str  # botocore's service name: "dynamodb", "stepfunctions", "bedrock-runtime"
    operation: str  # "GetItem"
    params: Mapping[str, Any]
    region: str
    lookup: Lookup
    response: Mapping[str, Any] | None = None  # set for the `after` pass
    error_code: str | None = None

    @property
    def after(self) -> bool:
        return self.response is not None or self.error_code is not None


NeedsOf = Callable[[CallInfo], list[Need]]
REGISTRY: dict[tuple[str, str], NeedsOf] = {}


def needs_of(service: str, *operations: str) -> Callable[[NeedsOf], NeedsOf]:
    def register(fn: NeedsOf) -> NeedsOf:
        for operation in operations:
            REGISTRY[(service, operation)] = fn
        return fn

    return register


def needs(call: CallInfo) -> list[Need]:
    fn = REGISTRY.get((call.service, call.operation))
    if fn is None:
        return [Need(f"UNMAPPED:{call.service}:{call.operation}", "*",
                     why="no authorization is written down for this operation in tests/aws_trace/needs.py")]
    return fn(call)


def arn(service: str, region: str, resource: str, account: str = ACCOUNT) -> str:
    return f"arn:{PARTITION}:{service}:{region}:{account}:{resource}"


# --------------------------------------------------------------------------- DynamoDB


def _table_arn(call: CallInfo, table: str, index: str | None = None) -> str:
    base = arn("dynamodb", call.region, f"table/{table}")
    return f"{base}/index/{index}" if index else base


@needs_of("dynamodb", "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Scan", "Query", "DescribeTable")
def _dynamodb_single(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    index = call.params.get("IndexName") if call.operation in ("Query", "Scan") else None
    return [Need(f"dynamodb:{call.operation}", _table_arn(call, call.params["TableName"], index))]


@needs_of("dynamodb", "BatchGetItem", "BatchWriteItem")
def _dynamodb_batch(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    return [Need(f"dynamodb:{call.operation}", _table_arn(call, table)) for table in call.params["RequestItems"]]


_TRANSACT_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                     "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}


@needs_of("dynamodb", "TransactWriteItems", "TransactGetItems")
def _dynamodb_transact(call: CallInfo) -> list[Need]:
    """A transaction is authorized item by item, each by the action of its kind."""
    if call.after:
        return []
    out = []
    for item in call.params["TransactItems"]:
        ((kind, body),) = item.items()
        out.append(Need(f"dynamodb:{_TRANSACT_ACTIONS[kind]}", _table_arn(call, body["TableName"]),
                        why=call.operation))
    return out


# --------------------------------------------------------------------------- S3


def s3_object(bucket: str, key: str) -> str:
    return f"arn:{PARTITION}:s3:::{bucket}/{key}"


def s3_bucket(bucket: str) -> str:
    return f"arn:{PARTITION}:s3:::{bucket}"


@needs_of("s3", "GetObject", "HeadObject")
def _s3_read(call: CallInfo) -> list[Need]:
    bucket, key = call.params["Bucket"], call.params["Key"]
    if call.after:
        # S3 answers a missing key with 404 only to a caller that may list the bucket (else 403),
        # and memlane's adapters rely on the 404.
        missing = call.error_code in ("NoSuchKey", "404", "NotFound")
        return [Need("s3:ListBucket", s3_bucket(bucket), why=f"404 for the missing {key}")] if missing else []
    action = "s3:GetObjectVersion" if call.params.get("VersionId") else "s3:GetObject"
    return [Need(action, s3_object(bucket, key))]


@needs_of("s3", "PutObject")
def _s3_put(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("s3:PutObject", s3_object(call.params["Bucket"], call.params["Key"]))]


@needs_of("s3", "CopyObject")
def _s3_copy(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    source = call.params["CopySource"]
    src_bucket, src_key = ((source["Bucket"], source["Key"]) if isinstance(source, Mapping)
                           else str(source).lstrip("/").split("/", 1))
    return [Need("s3:GetObject", s3_object(src_bucket, src_key)),
            Need("s3:PutObject", s3_object(call.params["Bucket"], call.params["Key"]))]


@needs_of("s3", "DeleteObject")
def _s3_delete(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    action = "s3:DeleteObjectVersion" if call.params.get("VersionId") else "s3:DeleteObject"
    return [Need(action, s3_object(call.params["Bucket"], call.params["Key"]))]


@needs_of("s3", "DeleteObjects")
def _s3_delete_many(call: CallInfo) -> list[Need]:
    """Authorized per key: DeleteObject, or DeleteObjectVersion for a named version."""
    if call.after:
        return []
    bucket = call.params["Bucket"]
    return [Need("s3:DeleteObjectVersion" if o.get("VersionId") else "s3:DeleteObject", s3_object(bucket, o["Key"]),
                 why="DeleteObjects") for o in call.params["Delete"]["Objects"]]


@needs_of("s3", "ListObjectsV2", "ListObjects")
def _s3_list(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("s3:ListBucket", s3_bucket(call.params["Bucket"]))]


@needs_of("s3", "ListObjectVersions")
def _s3_list_versions(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("s3:ListBucketVersions", s3_bucket(call.params["Bucket"]))]


# --------------------------------------------------------------------------- SQS


def queue_arn(queue_url: str) -> str:
    parsed = urlparse(queue_url)
    host_region = parsed.hostname.split(".")[1] if parsed.hostname and parsed.hostname.startswith("sqs.") else ""
    account, name = parsed.path.strip("/").split("/")[-2:]
    return arn("sqs", host_region, name, account)


_SQS_ACTIONS = {"SendMessageBatch": "SendMessage", "DeleteMessageBatch": "DeleteMessage",
                "ChangeMessageVisibilityBatch": "ChangeMessageVisibility"}


@needs_of("sqs", "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
          "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "GetQueueAttributes")
def _sqs(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    action = _SQS_ACTIONS.get(call.operation, call.operation)
    return [Need(f"sqs:{action}", queue_arn(call.params["QueueUrl"]))]


# --------------------------------------------------------------------------- Step Functions


@needs_of("stepfunctions", "StartExecution")
def _start_execution(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("states:StartExecution", call.params["stateMachineArn"])]


@needs_of("stepfunctions", "DescribeExecution")
def _describe_execution(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("states:DescribeExecution", call.params["executionArn"])]


# --------------------------------------------------------------------------- KMS and Secrets Manager


@needs_of("kms", "Encrypt", "GenerateDataKey", "Decrypt")
def _kms(call: CallInfo) -> list[Need]:
    key = call.params.get("KeyId")
    if call.after:
        # a Decrypt without KeyId uses the key the ciphertext names: known from the response
        used = (call.response or {}).get("KeyId")
        return [Need(f"kms:{call.operation}", str(used))] if used and not key else []
    return [Need(f"kms:{call.operation}", call.lookup.kms_key_arn(str(key)))] if key else []


@needs_of("secretsmanager", "GetSecretValue")
def _get_secret(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    return [Need("secretsmanager:GetSecretValue", call.lookup.secret_arn(str(call.params["SecretId"])))]


# --------------------------------------------------------------------------- Bedrock, Textract, Transcribe

GEOGRAPHY_PREFIXES = (*c.INFERENCE_PROFILE_DESTINATIONS, c.GLOBAL_INFERENCE_PROFILE)


def model_needs(model_id: str, region: str, action: str = "bedrock:InvokeModel") -> list[Need]:
    """A foundation model id → that model in this Region. A system-defined inference profile id
    (`us.…`, `eu.…`, `apac.…`, `global.…`) → the profile in this Region and this account, and the
    model in every Region the profile may route the request to (each must be granted: Bedrock picks
    one per request)."""
    if model_id.startswith("arn:"):
        return [Need(action, model_id)]
    geography, _, model = model_id.partition(".")
    if geography not in GEOGRAPHY_PREFIXES or not model:
        return [Need(action, f"arn:{PARTITION}:bedrock:{region}::foundation-model/{model_id}")]
    profile = Need(action, arn("bedrock", region, f"inference-profile/{model_id}"), why="the inference profile")
    if geography == c.GLOBAL_INFERENCE_PROFILE:
        return [profile, Need(action, f"arn:{PARTITION}:bedrock:::foundation-model/{model}",
                              why="a global profile routes to any commercial Region")]
    return [profile, *(Need(action, f"arn:{PARTITION}:bedrock:{destination}::foundation-model/{model}",
                            why=f"{model_id} may route to {destination}")
                       for destination in c.INFERENCE_PROFILE_DESTINATIONS[geography])]


@needs_of("bedrock-runtime", "InvokeModel", "Converse")
def _invoke_model(call: CallInfo) -> list[Need]:
    return [] if call.after else model_needs(str(call.params["modelId"]), call.region)


@needs_of("bedrock-runtime", "InvokeModelWithResponseStream", "ConverseStream")
def _invoke_model_stream(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    return model_needs(str(call.params["modelId"]), call.region, "bedrock:InvokeModelWithResponseStream")


@needs_of("bedrock-agent-runtime", "Rerank")
def _rerank(call: CallInfo) -> list[Need]:
    """Rerank has no resource type; the model it reads is authorized by InvokeModel on its ARN."""
    if call.after:
        return []
    config = call.params["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]
    return [Need("bedrock:Rerank", "*"), Need("bedrock:InvokeModel", str(config["modelArn"]), why="Rerank's model")]


@needs_of("textract", "DetectDocumentText")
def _textract(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("textract:DetectDocumentText", "*")]


def _s3_uri(uri: str) -> str:
    parsed = urlparse(uri)
    return s3_object(str(parsed.hostname), parsed.path.lstrip("/"))


@needs_of("transcribe", "StartTranscriptionJob")
def _start_transcription(call: CallInfo) -> list[Need]:
    """Transcribe reads the recording and writes its output with the caller's permissions."""
    if call.after:
        return []
    p = call.params
    out = [Need("transcribe:StartTranscriptionJob",
                arn("transcribe", call.region, f"transcription-job/{p['TranscriptionJobName']}")),
           Need("s3:GetObject", _s3_uri(p["Media"]["MediaFileUri"]), why="Transcribe reads the recording")]
    if p.get("OutputBucketName"):
        out.append(Need("s3:PutObject", s3_object(p["OutputBucketName"], p.get("OutputKey", "")),
                        why="Transcribe writes its output"))
    return out


@needs_of("transcribe", "GetTranscriptionJob")
def _get_transcription(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    return [Need("transcribe:GetTranscriptionJob",
                 arn("transcribe", call.region, f"transcription-job/{call.params['TranscriptionJobName']}"))]


# --------------------------------------------------------------------------- API Gateway (REST API keys)


def apigateway_arn(region: str, path: str) -> str:
    return f"arn:{PARTITION}:apigateway:{region}::{path}"


def _tag_context(tags: Mapping[str, str], prefix: str) -> dict[str, Any]:
    context: dict[str, Any] = {f"{prefix}/{k}": v for k, v in tags.items()}
    if prefix == "aws:RequestTag":
        context["aws:TagKeys"] = list(tags)
    return context


@needs_of("apigateway", "CreateApiKey")
def _create_api_key(call: CallInfo) -> list[Need]:
    """POST /apikeys with the request's tags; tagging on create is also authorized as a PUT on the
    new key's /tags path, with the same request tags."""
    tags = dict(call.params.get("tags") or {})
    context = _tag_context(tags, "aws:RequestTag")
    if call.after:
        key_id = (call.response or {}).get("id")
        if not tags or not key_id:
            return []
        key_arn = apigateway_arn(call.region, f"/apikeys/{key_id}")
        return [Need("apigateway:PUT", apigateway_arn(call.region, f"/tags/{quote(key_arn, safe='')}"), context,
                     why="tags on create")]
    return [Need("apigateway:POST", apigateway_arn(call.region, "/apikeys"), context)]


@needs_of("apigateway", "DeleteApiKey", "GetApiKey")
def _api_key(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    key_id = str(call.params["apiKey"])
    method = "DELETE" if call.operation == "DeleteApiKey" else "GET"
    context = _tag_context(call.lookup.api_key_tags(key_id), "aws:ResourceTag")
    return [Need(f"apigateway:{method}", apigateway_arn(call.region, f"/apikeys/{key_id}"), context)]


@needs_of("apigateway", "CreateUsagePlanKey")
def _usage_plan_key(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    return [Need("apigateway:POST", apigateway_arn(call.region, f"/usageplans/{call.params['usagePlanId']}/keys"))]


@needs_of("apigateway", "GetUsagePlans")
def _usage_plans(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need("apigateway:GET", apigateway_arn(call.region, "/usageplans"))]


# --------------------------------------------------------------------------- Amazon S3 Vectors


def vector_index_arn(call: CallInfo) -> str:
    p = call.params
    if p.get("indexArn"):
        return str(p["indexArn"])
    return arn("s3vectors", call.region, f"bucket/{p['vectorBucketName']}/index/{p['indexName']}")


@needs_of("s3vectors", "PutVectors", "GetVectors", "DeleteVectors", "ListVectors", "GetIndex", "CreateIndex",
          "DeleteIndex", "UpdateIndexMode")
def _vector_index(call: CallInfo) -> list[Need]:
    return [] if call.after else [Need(f"s3vectors:{call.operation}", vector_index_arn(call))]


@needs_of("s3vectors", "QueryVectors")
def _query_vectors(call: CallInfo) -> list[Need]:
    """A query that filters on metadata or returns it also needs GetVectors on the index."""
    if call.after:
        return []
    index = vector_index_arn(call)
    out = [Need("s3vectors:QueryVectors", index)]
    if call.params.get("filter") is not None or call.params.get("returnMetadata"):
        out.append(Need("s3vectors:GetVectors", index, why="QueryVectors with a filter or returnMetadata"))
    return out


@needs_of("s3vectors", "ListIndexes", "GetVectorBucket", "PutVectorBucketDefaultIndexMode")
def _vector_bucket(call: CallInfo) -> list[Need]:
    if call.after:
        return []
    bucket = call.params.get("vectorBucketArn") or arn("s3vectors", call.region, f"bucket/{call.params['vectorBucketName']}")
    return [Need(f"s3vectors:{call.operation}", str(bucket))]


# --------------------------------------------------------------------------- what is not a botocore call


@dataclass(frozen=True)
class HttpRequest:
    """An OpenSearch request as the SigV4 signer sends it."""

    method: str
    path: str
    domain_arn: str
    extra: dict[str, Any] = field(default_factory=dict)

    def need(self) -> Need:
        return Need(f"es:ESHttp{self.method.capitalize()}", f"{self.domain_arn}/{self.path.lstrip('/')}")


def lambda_invoke(function_arn: str) -> Need:
    """A state machine's Task invoking a function (the state machine's role)."""
    return Need("lambda:InvokeFunction", function_arn)
