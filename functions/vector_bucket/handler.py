"""The S3 Vectors bucket's custom resource (Custom::MemlaneVectorBucket, search backend "s3vectors"):
on Create and Update the bucket's default index mode becomes ENHANCED; on Delete, when the stack does
not retain its data, every index is deleted so CloudFormation can delete the bucket
(memlane.adapters.aws.s3vectors_bucket; PutVectorBucketDefaultIndexMode needs the layer's botocore,
newer than the runtime's). The answer goes to CloudFormation's pre-signed ResponseURL;
a failure is answered FAILED with its reason, so a deploy stops instead of waiting an hour."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from functions._handler import lambda_handler, logger
from memlane.adapters.aws import s3vectors_bucket
from memlane.adapters.aws._boto import new_client


@lambda_handler(correlation_id_path="RequestId")
def handler(event: dict[str, Any], context: Any, client: Any = None) -> dict[str, Any]:
    props = event.get("ResourceProperties", {})
    bucket = str(props.get("VectorBucketName", ""))
    status, reason, data = "SUCCESS", "", {}
    try:
        client = client or new_client("s3vectors")
        if event["RequestType"] in ("Create", "Update"):
            data = s3vectors_bucket.prepare(client, bucket)
        elif str(props.get("EmptyOnDelete", "false")).lower() == "true":
            data = {"IndexesDeleted": str(s3vectors_bucket.empty(client, bucket))}
    except Exception as exc:  # noqa: BLE001 - every failure is answered, or CloudFormation waits an hour
        logger.exception("vector bucket %s: %s failed", bucket, event.get("RequestType"))
        status, reason = "FAILED", f"{type(exc).__name__}: {exc}"[:1000]
    answer = {"Status": status, "Reason": reason or f"see {getattr(context, 'log_stream_name', 'the logs')}",
              "PhysicalResourceId": event.get("PhysicalResourceId") or bucket or event["RequestId"],
              "StackId": event["StackId"], "RequestId": event["RequestId"],
              "LogicalResourceId": event["LogicalResourceId"], "Data": data}
    _respond(event["ResponseURL"], answer)
    return answer


def _respond(url: str, answer: dict[str, Any]) -> None:
    body = json.dumps(answer).encode()
    request = urllib.request.Request(url, data=body, method="PUT",  # noqa: S310 - CloudFormation's https URL
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        response.read()
