"""`memlane reindex --aws`: switching a live stack's search backend. Memories are saved while the
stack uses one index (the local index stands in for OpenSearch, as in the other handler tests); then
the stack is composed with S3 Vectors (moto + the fake QueryVectors), empty, and reindex fills it from
DynamoDB: every ready memory is found again, a superseded version stays hidden, a deleted memory does
not come back, and a second run changes nothing."""

from __future__ import annotations

import dataclasses

import pytest
from fn_support import ORG_ID
from s3vectors_fake import FakeS3Vectors

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.doctor import AwsInventory
from memlane.adapters.aws.s3vectors_index import S3VectorsIndex
from memlane.aws import compose
from memlane.cli import main as cli_main
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.recall.service import recall
from memlane.services.doctor import examine
from memlane.services.memory import delete_document, save_memory
from memlane.services.reindex import reindex

WHO = Principal(organization_id=ORG_ID, key_id="k", user_id="u")
VECTORS = "memlane-dev-vectors"


@pytest.fixture
def before(deployment, org):
    """The stack as it was: saves written inline into its first index."""
    return dataclasses.replace(deployment.services(), settings=deployment.services().settings.model_copy(
        update={"inline_max_chars": 10**9}))


@pytest.fixture
def s3v(deployment):
    fake = FakeS3Vectors(new_client("s3vectors"))
    fake.create_vector_bucket(vectorBucketName=VECTORS)
    return fake


def after(before, fake):
    """The same stack composed with S3 Vectors (what a deploy with searchBackend=s3vectors gives)."""
    index = S3VectorsIndex(fake, VECTORS, before.embedder.dimension, embedder_id=before.embedder.id,
                           context_boost=before.settings.context.text_weight)
    return dataclasses.replace(before, index=index)


def found(svc, query: str, **extra) -> list[str]:
    return [r.document_id for r in recall(svc, WHO, RecallIn(query=query, min_relevance=0, **extra)).results]


def test_reindex_fills_s3_vectors_from_dynamodb_with_versions_and_deletions_as_they_are(before, s3v):
    kayak = save_memory(before, WHO, MemoryIn(content="The kayak club meets on Thursdays at the north dock."),
                        inline=True).id
    old = save_memory(before, WHO, MemoryIn(content="The boathouse code is 1234."), inline=True).id
    new = save_memory(before, WHO, MemoryIn(content="The boathouse code is 5678.", updates_memory_id=old),
                      inline=True).id
    gone = save_memory(before, WHO, MemoryIn(content="A kayak paddle is for sale."), inline=True).id
    delete_document(before, WHO, gone)
    svc = after(before, s3v)
    # Given the new backend, empty: the doctor sees every ready memory missing
    assert found(svc, "kayak club") == []
    assert examine(svc, AwsInventory(svc)).as_dict()["missing_from_index"] == 3
    # When reindex fills it from the table
    report = reindex(svc, AwsInventory(svc))
    # Then every ready memory is searchable there, the older version hidden, the deleted one absent
    assert sorted(report.written) == sorted([kayak, old, new]) and report.failed == report.deferred == []
    assert found(svc, "kayak club")[:1] == [kayak] and gone not in found(svc, "kayak paddle")
    assert found(svc, "boathouse code")[:1] == [new] and old not in found(svc, "boathouse code")
    assert {old, new} <= set(found(svc, "boathouse code", include_versions=True))
    assert svc.index.document_ids(ORG_ID) == {kayak, old, new}
    assert examine(svc, AwsInventory(svc)).total == 0
    # and a second run writes the same vectors again (upserts by chunk id): nothing doubles
    assert sorted(reindex(svc, AwsInventory(svc)).written) == sorted([kayak, old, new])
    assert sum(svc.index.holdings(d, ORG_ID).vector for d in (kayak, old, new)) == 3


def test_the_cli_reports_what_it_wrote(before, s3v, monkeypatch, capsys):
    save_memory(before, WHO, MemoryIn(content="The kayak club meets on Thursdays."), inline=True)
    svc = after(before, s3v)
    monkeypatch.setattr(compose, "build_aws_services", lambda settings=None: svc)
    monkeypatch.setenv("MEMLANE_VECTOR_BUCKET", VECTORS)
    compose.reset_aws_services()
    assert cli_main(["reindex", "--aws"]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == "written 1, requeued 0, deferred 0, failed 0, skipped 0"
    assert f"filling the s3vectors index ({VECTORS})" in out.err
