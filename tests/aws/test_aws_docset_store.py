"""DynamoDB's own side of the DocsetStore (the contract every store meets is in
tests/contracts/test_docset_store_contract.py): a page's place in the cross-docset queues."""

from __future__ import annotations

from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.docset_store import DynamoDocsetStore
from memlane.domain.docsets import Docset, PageStatus, page_id_for

TABLE = "memlane-test"  # the table tests/aws/conftest.py creates
ORG = "org-a"
SITE = "https://d.example/docs/"


# ----------------------------------------------------------------------------- DynamoDB only


def test_a_pages_queue_keys_follow_its_state(dynamodb: Any) -> None:
    """A page sits in GSI2's PAGEDUE queue while claimable, in PAGECLAIMED while a worker has it,
    and in neither once done, so the cross-docset queues never fill up with finished pages."""
    store = DynamoDocsetStore(TABLE, client=dynamodb)
    docset = store.create_docset(
        Docset(
            organization_id=ORG,
            project_id="p",
            name="D",
            base_url=SITE,
            seed_url=SITE,
            seed_slug="",
            created_at=1,
            updated_at=1,
        )
    )
    (url,) = store.add_pages(docset, [SITE], now=7)
    page_id = page_id_for(docset.id, url)

    def queue() -> tuple[str, str] | None:
        item = dynamodb.get_item(
            TableName=TABLE,
            Key={"pk": {"S": ks.docset_pages_pk(docset.id)}, "sk": {"S": ks.page_sk(page_id)}},
        )["Item"]
        return (item[ks.GSI2_PK]["S"], item[ks.GSI2_SK]["S"]) if ks.GSI2_PK in item else None

    shard = ks.page_shard(page_id)
    assert queue() == (f"PAGEDUE#{shard}", "0000000000007#0000000000007")
    claimed = store.claim_page(docset.id, page_id, now=9)
    assert queue() == (f"PAGECLAIMED#{shard}", "0000000000009")
    store.save_page(claimed.model_copy(update={"status": PageStatus.INDEXED}))
    assert queue() is None
