"""DynamoDB implementation of DocsetStore, in the metadata table (keys in dynamo_schema.py).

| record        | key                                         | read by                              |
| ------------- | ------------------------------------------- | ------------------------------------ |
| docset        | pk=ORG#{org}  sk=DOCSET#{docset}            | GetItem (tenant in the key), Query   |
|               | GSI1 gsi1pk=DOCSETS                         | list_docsets() across organizations  |
| page          | pk=DOCSET#{docset}  sk=PAGE#{page}          | GetItem, Query of the docset         |
| text version  | pk=DOCSET#{docset}  sk=TEXTS                | GetItem; register_text's transaction |
|               | GSI2 PAGEDUE#{shard} / PAGECLAIMED#{shard}  | claim_pages, next_due, release_stuck |
| session       | pk=ORG#{org}  sk=DOCSESSION#{session}       | GetItem, Query                       |

What the AWS path uses: the API (create, status, list pages, refresh, delete, sessions, the seed
crawl of waitForSeed), the page worker (claim_page, the page's own writes, add_pages for its
links) and the refresh job (list_docsets across organizations, requeue_docset). All of them are
GetItem, conditional writes or one Query of a docset's partition, which add_pages bounds to the
docset's page cap. claim_pages, next_due and release_stuck serve the embedded runner's loop; here
they read GSI2's sharded queues, never a Scan.

A claim is one conditional UpdateItem (pending or retryable error → processing), so a page is
handed to exactly one worker however many messages name it. Timestamps are epoch milliseconds.

Four modules: docset_records.py (the items and queue keys), docset_pages.py (pages, claims,
queues, refresh), docset_sessions.py (client sessions) and this one (docsets, and the store that
holds all three).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.docset_pages import REQUEUE_WORKERS, STUCK_MESSAGE, DynamoDocsetPages
from memlane.adapters.aws.docset_records import (
    conditional_failed,
    docset_item,
    n_value,
    page_from_item,
    page_item,
    queue_keys,
    s_value,
)
from memlane.adapters.aws.docset_sessions import DynamoDocsetSessions
from memlane.adapters.aws.dynamo_codec import model_from_item, serialize
from memlane.adapters.aws.dynamo_table import _key
from memlane.domain.docsets import Docset

# Importable from here, where they have always been.
__all__ = ["REQUEUE_WORKERS", "STUCK_MESSAGE", "DynamoDocsetStore", "docset_item", "page_from_item", "page_item",
           "queue_keys"]


class DynamoDocsetStore(DynamoDocsetPages, DynamoDocsetSessions):
    """DocsetStore on the metadata table. `client` and `sleep` as for DynamoMetadataStore."""

    def create_docset(self, docset: Docset) -> Docset:
        self._call(
            "put_item",
            TableName=self.table_name,
            Item=serialize(docset_item(docset)),
            ConditionExpression="attribute_not_exists(pk)",
        )
        return docset

    def update_docset(self, docset: Docset) -> None:
        """Name and refresh times, as the SQLite store updates them; a deleted docset stays deleted."""
        values: dict[str, Any] = {":name": s_value(docset.name), ":updated": n_value(docset.updated_at)}
        expression = "SET #name = :name, updated_at = :updated"
        if docset.last_refreshed_at is None:
            expression += " REMOVE last_refreshed_at"
        else:
            expression += ", last_refreshed_at = :refreshed"
            values[":refreshed"] = n_value(docset.last_refreshed_at)
        self._update_if_exists(
            _key(ks.org_pk(docset.organization_id), ks.docset_sk(docset.id)),
            UpdateExpression=expression,
            ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues=values,
        )

    def get_docset(self, org_id: str, docset_id: str) -> Docset | None:
        item = self._get(ks.org_pk(org_id), ks.docset_sk(docset_id))
        return model_from_item(Docset, item) if item else None

    def list_docsets(self, org_id: str | None = None) -> list[Docset]:
        if org_id is None:
            # Every organization's docsets (the daily refresh): GSI1's DOCSETS partition, in
            # creation order. Eventually consistent; a docset created this second waits a day.
            items: Iterable[dict[str, Any]] = self._query(
                IndexName=ks.GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                ExpressionAttributeValues={":pk": s_value(ks.ALL_DOCSETS_GSI_PK)},
            )
        else:
            items = self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": s_value(ks.org_pk(org_id)), ":prefix": s_value(ks.DOCSET_SK_PREFIX)},
                ConsistentRead=True,
            )
        docsets = [model_from_item(Docset, item) for item in items]
        return sorted(docsets, key=lambda d: (d.created_at, d.id))

    def delete_docset(self, org_id: str, docset_id: str) -> bool:
        """Removes the docset's page records, then the docset and the project created for it (with
        its slug) in one transaction: a delete that stops halfway still finds the docset and is
        finished by a retry. The project's documents are removed by the caller first."""
        item = self._get(ks.org_pk(org_id), ks.docset_sk(docset_id), projection="project_id")
        if item is None:
            return False
        project_id = item["project_id"]["S"]
        self._batch_write(
            [
                {"DeleteRequest": {"Key": _key(p[ks.PK]["S"], p[ks.SK]["S"])}}
                for p in self._page_items(docset_id, "pk, sk")
            ]
        )
        operations = [
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": _key(ks.org_pk(org_id), ks.docset_sk(docset_id)),
                }
            },
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": _key(ks.org_pk(org_id), ks.project_sk(project_id)),
                }
            },
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": _key(ks.docset_pages_pk(docset_id), ks.SK_DOCSET_TEXTS),
                }
            },
        ]
        project = self._get(ks.org_pk(org_id), ks.project_sk(project_id), projection="slug")
        if project is not None:
            slug = project["slug"]["S"]
            operations.append(
                {
                    "Delete": {
                        "TableName": self.table_name,
                        "Key": _key(ks.org_pk(org_id), ks.project_slug_sk(slug)),
                    }
                }
            )
        self._transact(operations, conflict=f"docset {docset_id} could not be deleted")
        return True

    def _update_if_exists(self, key: dict[str, Any], **kwargs: Any) -> None:
        try:
            self._call(
                "update_item",
                TableName=self.table_name,
                Key=key,
                ConditionExpression="attribute_exists(pk)",
                **kwargs,
            )
        except ClientError as exc:
            if not conditional_failed(exc):
                raise
