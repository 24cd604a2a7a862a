"""What deletions leave in the metadata table, never the content
(memlane.ports.DeletionRecordStore): deletion receipts (pk=ORG#{org}#RECEIPT#{id}) and the log
of forgotten documents (pk=ORG#{org}#FORGOTTEN, sk="{forgotten_at}#{doc}")."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.dynamo_codec import deserialize, serialize, to_iso
from memlane.adapters.aws.dynamo_table import DynamoTable
from memlane.domain.models import Document


class DynamoDeletionRecordStore(DynamoTable):
    """DeletionRecordStore on the metadata table."""

    def record_forgotten(self, doc: Document, when: datetime, reason: str) -> None:
        """What was forgotten, when and why — never the content (pk=ORG#{org}#FORGOTTEN)."""
        item = {
            ks.PK: f"{ks.org_pk(doc.organization_id)}#FORGOTTEN",
            ks.SK: f"{to_iso(when)}#{doc.id}",
            "entity": "forgotten",
            "document_id": doc.id,
            "project_id": doc.project_id,
            "forgotten_at": to_iso(when),
            "reason": reason,
        }
        self._call("put_item", TableName=self.table_name, Item=serialize(item))

    def put_receipt(self, org_id: str, receipt_id: str, body: str, when: datetime) -> None:
        """pk=ORG#{org}#RECEIPT#{id}: the tenant is in the key, so another tenant's id reads nothing."""
        item = {ks.PK: ks.receipt_pk(org_id, receipt_id), ks.SK: ks.SK_RECEIPT, "entity": "deletion_receipt",
                "created_at": to_iso(when), "body": body}
        self._call("put_item", TableName=self.table_name, Item=serialize(item))

    def get_receipt(self, org_id: str, receipt_id: str) -> str | None:
        item = self._get(ks.receipt_pk(org_id, receipt_id), ks.SK_RECEIPT)
        return str(deserialize(item)["body"]) if item is not None else None

    def list_forgotten(self, org_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Oldest first; with `limit`, the newest `limit` records (still oldest first)."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": f"{ks.org_pk(org_id)}#FORGOTTEN"}},
            "ScanIndexForward": limit is None,
        }
        records = []
        for item in self._query(**kwargs):
            records.append({k: v for k, v in deserialize(item).items()
                            if k in ("document_id", "project_id", "forgotten_at", "reason")})
            if limit is not None and len(records) >= limit:
                break
        return records if limit is None else list(reversed(records))
