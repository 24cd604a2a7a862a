"""What the stack's custom resource does to its S3 Vectors bucket (functions/vector_bucket): what
CloudFormation cannot say yet. AWS::S3Vectors::VectorBucket has no default index mode, and neither
aws-cdk-lib 2.275's CfnIndex nor cfn-lint's schema knows an index's text search configuration; the
indexes themselves are made at run time, one per organization, by memlane.adapters.aws.s3vectors_index.

* `prepare`: the bucket's default index mode ENHANCED (PutVectorBucketDefaultIndexMode), so every index
  created in it filters before searching and can run full-text and hybrid queries. Idempotent.
* `empty`: deletes every index of the bucket (a vector bucket with indexes cannot be deleted), for a
  stack whose data is not retained, when it is destroyed.
"""

from __future__ import annotations

from typing import Any

ENHANCED = "ENHANCED"


def prepare(client: Any, bucket: str) -> dict[str, str]:
    client.put_vector_bucket_default_index_mode(vectorBucketName=bucket, defaultIndexMode=ENHANCED)
    return {"VectorBucketName": bucket, "DefaultIndexMode": ENHANCED}


def empty(client: Any, bucket: str) -> int:
    """Deletes every index of the bucket; returns how many. A bucket already gone has none."""
    names: list[str] = []
    token: str | None = None
    while True:
        try:
            page = client.list_indexes(vectorBucketName=bucket, **({"nextToken": token} if token else {}))
        except client.exceptions.NotFoundException:
            return 0
        names += [i["indexName"] for i in page.get("indexes", [])]
        token = page.get("nextToken")
        if not token:
            break
    for name in names:
        try:
            client.delete_index(vectorBucketName=bucket, indexName=name)
        except client.exceptions.NotFoundException:
            continue
    return len(names)
