"""Amazon S3 Vectors in the trace: moto holds the vector buckets, indexes and vectors, and the fake of
tests/s3vectors_fake.py adds what moto lacks (QueryVectors, an index's text keys and mode, the bucket's
default mode). Every s3vectors call a function makes is checked against its role first (recorder), then
answered by the fake through a moto client created before the trace's hooks, so the fake's own calls
are neither recorded nor answered again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aws_trace.recorder import Trace

# What memlane calls (the adapter, the custom resource), by botocore operation name.
OPERATIONS = {
    "CreateIndex": "create_index", "GetIndex": "get_index", "ListIndexes": "list_indexes",
    "DeleteIndex": "delete_index", "UpdateIndexMode": "update_index_mode",
    "PutVectorBucketDefaultIndexMode": "put_vector_bucket_default_index_mode",
    "PutVectors": "put_vectors", "GetVectors": "get_vectors", "DeleteVectors": "delete_vectors",
    "ListVectors": "list_vectors", "QueryVectors": "query_vectors",
}


class VectorEdge:
    def __init__(self, region: str) -> None:
        import boto3
        from s3vectors_fake import FakeS3Vectors

        # a session of its own, made before Trace.hooked(): its calls are the fake's, not a function's
        self.fake = FakeS3Vectors(boto3.session.Session().client("s3vectors", region_name=region))

    def _answer(self, method: str) -> Any:
        # not Trace.unrecorded(): the adapter sends its two legs at once, from two threads, and the
        # trace's principal is one for the process; the fake's client is not hooked, so nothing it
        # calls is recorded anyway
        def answer(params: dict[str, Any]) -> dict[str, Any]:
            out = getattr(self.fake, method)(**params)
            return {k: v for k, v in dict(out).items() if k != "ResponseMetadata"}

        return answer

    @contextmanager
    def serving(self, trace: Trace) -> Iterator[VectorEdge]:
        with trace.answering({("s3vectors", op): self._answer(method) for op, method in OPERATIONS.items()}):
            yield self

    def indexed_context(self, bucket: str, document_id: str) -> str:
        """The `context` the index holds for a document's chunks (read by the harness, unrecorded)."""
        from memlane.domain.models import chunk_id_for

        client = self.fake
        found = []
        for index in client.list_indexes(vectorBucketName=bucket)["indexes"]:
            vectors = client.get_vectors(vectorBucketName=bucket, indexName=index["indexName"], returnMetadata=True,
                                         keys=[chunk_id_for(document_id, i) for i in range(10)])["vectors"]
            found += [str((v.get("metadata") or {}).get("context", "")) for v in vectors]
        return " ".join(found)
