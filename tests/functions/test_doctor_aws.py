"""Issue 6 point 3 on AWS: `memlane doctor --aws` compares DynamoDB, the search index, S3 and the
cache, finds planted orphans of every kind and repairs them (moto; the local index stands in for
OpenSearch as in the other handler tests)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from fn_support import BUCKET, ORG_ID

from memlane.adapters.aws.doctor import AwsInventory
from memlane.documents.keys import work_prefix
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.recall.service import recall
from memlane.services.doctor import examine
from memlane.services.memory import delete_document, save_memory

WHO = Principal(organization_id=ORG_ID, key_id="k", user_id="u")


SERVICES: dict = {}


def doctor(capsys, *flags: str) -> tuple[int, dict]:
    """What `memlane doctor --aws [--repair]` reports, on this test's composed services."""
    svc = SERVICES["current"]
    report = examine(svc, AwsInventory(svc), repair="--repair" in flags)
    return (0 if report.total == 0 or report.repaired else 1), report.as_dict()


@pytest.fixture
def svc(deployment, org):
    svc = dataclasses.replace(deployment.services(), settings=deployment.services().settings.model_copy(
        update={"inline_max_chars": 10**9}))
    SERVICES["current"] = svc
    return svc


def remember(svc, text: str) -> str:
    return save_memory(svc, WHO, MemoryIn(content=text), inline=True).id


def test_a_healthy_deployment_has_no_orphans(svc, capsys):
    remember(svc, "The kayak club meets on Thursdays at the north dock.")
    recall(svc, WHO, RecallIn(query="kayak club"))  # fills the cache too
    assert doctor(capsys) == (
        0,
        {
            "index_orphans": 0,
            "missing_from_index": 0,
            "chunk_orphans": 0,
            "blob_orphans": 0,
            "cache_orphans": 0,
            "wrong_modes": 0,
            "conversation_duplicates": 0,
            "total": 0,
            "repaired": False,
        },
    )


def test_doctor_finds_planted_orphans_in_every_store_and_repairs_them(svc, deployment, capsys):
    kept = remember(svc, "The kayak club meets on Thursdays at the north dock.")
    ghost = remember(svc, "Canoe rentals close at dusk; return paddles to the shed.")
    unindexed = remember(svc, "Sailing lessons start in May for members with a swim test.")
    assert {r.document_id for r in recall(svc, WHO, RecallIn(query="canoe rentals paddles")).results} >= {
        ghost
    }
    # plant: the ghost's document item vanishes, leaving its chunks, index rows and cache entry;
    # leftovers in S3 name it; the third document drops out of the index.
    svc.metadata._call(
        "delete_item",
        TableName=svc.metadata.table_name,
        Key={"pk": {"S": f"ORG#{ORG_ID}#DOC#{ghost}"}, "sk": {"S": "DOC"}},
    )
    deployment.s3.put_object(Bucket=BUCKET, Key=f"content/{ORG_ID}/{ghost}.txt", Body=b"canoe text")
    deployment.s3.put_object(Bucket=BUCKET, Key=f"{work_prefix(ORG_ID, ghost)}exec-1/text.txt", Body=b"canoe")
    svc.index.delete_document(ORG_ID, unindexed)

    code, found = doctor(capsys)
    assert code == 1
    assert found == {
        "index_orphans": 1,
        "missing_from_index": 1,
        "chunk_orphans": 1,
        "blob_orphans": 2,
        "cache_orphans": 1,
        "wrong_modes": 0,
        "conversation_duplicates": 0,
        "total": 6,
        "repaired": False,
    }

    code, fixed = doctor(capsys, "--repair")
    assert code == 0 and fixed["repaired"] and fixed["total"] == 6
    assert doctor(capsys) == (0, {**found, **dict.fromkeys(found, 0), "repaired": False})
    assert ghost not in deployment.search.document_ids()
    assert deployment.s3.list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0
    assert [r.document_id for r in recall(svc, WHO, RecallIn(query="sailing lessons swim test")).results][
        0
    ] == unindexed
    assert [r.document_id for r in recall(svc, WHO, RecallIn(query="kayak club north dock")).results][
        0
    ] == kept


def test_after_a_delete_nothing_of_the_document_remains_anywhere(svc, deployment, capsys):
    doc_id = remember(svc, "Moorings are assigned by seniority; ask the harbour master.")
    recall(svc, WHO, RecallIn(query="moorings harbour master"))
    # what the ingestion workflow would have staged for it
    deployment.s3.put_object(
        Bucket=BUCKET, Key=f"{work_prefix(ORG_ID, doc_id)}exec-1/chunks.json", Body=b"[]"
    )
    receipt = delete_document(svc, WHO, doc_id)
    assert doctor(capsys)[1]["total"] == 0
    assert deployment.s3.list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0
    # Only the record of the deletion names it: the receipt (ids and counts, never content)
    items = deployment.dynamodb.scan(TableName=svc.metadata.table_name)["Items"]
    naming = [i for i in items if doc_id in json.dumps(i)]
    assert [i["entity"]["S"] for i in naming] == ["deletion_receipt"]
    assert receipt.verified and "harbour" not in json.dumps(naming).lower()
