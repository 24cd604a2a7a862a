"""The AWS deployment's inventory for `memlane doctor --aws` (memlane.services.doctor compares and
repairs): one paginated Scan of the metadata table, the indexed document ids of OpenSearch
(a composite aggregation per organization), and the content bucket's keys.

What the Scan classifies (dynamo_schema.py has the key design):

| item                                   | what it tells the doctor                              |
| -------------------------------------- | ----------------------------------------------------- |
| pk=ORG#{org}  sk=ORG                   | an organization (its index ids are listed)            |
| pk=ORG#{org}#DOC#{doc}  sk=DOC         | a document, its status and chunk count                |
| pk=ORG#{org}#DOC#{doc}  sk=CHUNK#…     | a chunk record of that document                       |
| pk=ORG#{org}#CHUNK#{chunk} sk=CHUNKREF | a chunk pointer naming `document_id`                  |
| pk=…#HASH#{sha256}  sk=HASH            | a dedupe entry naming `document_id`                   |
| pk=DOCCACHE#{doc}  sk=CACHE#…          | a cached recall naming the document (cache.py)        |

Bucket keys: content/{org}/{doc}.txt (content too large for an item), work/{org}/{doc}/… (the
ingestion workflow's staging). The Scan reads the whole table: run it from an operator's machine
(it needs dynamodb:Scan, which no function has), not on a schedule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.cache import pointer_pk
from memlane.ports import BLOB_KINDS, Services, StoredBlob, StoredDocument, stored_blob

_DOCCACHE = pointer_pk("")


class AwsInventory:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.metadata: Any = svc.metadata  # DynamoMetadataStore: its client and batch writer
        self._scanned = False
        self._orgs: list[str] = []
        self._documents: dict[str, StoredDocument] = {}
        self._records: dict[str, list[dict[str, Any]]] = defaultdict(list)  # doc id → item keys
        self._cached: set[str] = set()

    # ------------------------------------------------------------------ the table

    def _scan(self) -> None:
        if self._scanned:
            return
        paginator = self.metadata.client.get_paginator("scan")
        pages = paginator.paginate(
            TableName=self.metadata.table_name,
            ProjectionExpression="pk, sk, #status, chunk_count, document_id",
            ExpressionAttributeNames={"#status": "status"},
        )
        for page in pages:
            for item in page.get("Items", []):
                self._classify(item)
        self._scanned = True

    def _classify(self, item: dict[str, Any]) -> None:
        pk, sk = item[ks.PK]["S"], item[ks.SK]["S"]
        key = {ks.PK: item[ks.PK], ks.SK: item[ks.SK]}
        parts = pk.split("#")
        if sk == ks.SK_ORG and len(parts) == 2:
            self._orgs.append(parts[1])
        elif len(parts) == 4 and parts[0] == "ORG" and parts[2] == "DOC":
            doc_id = parts[3]
            if sk == ks.SK_DOC:
                self._documents[doc_id] = StoredDocument(
                    organization_id=parts[1],
                    status=item.get("status", {}).get("S", ""),
                    chunk_count=int(item.get("chunk_count", {}).get("N", "0")),
                )
            elif sk.startswith(ks.CHUNK_SK_PREFIX):
                self._records[doc_id].append(key)
        elif sk in (ks.SK_CHUNK_REF, ks.SK_HASH) and "document_id" in item:
            self._records[item["document_id"]["S"]].append(key)
        elif pk.startswith(_DOCCACHE):
            self._cached.add(pk.removeprefix(_DOCCACHE))

    def organizations(self) -> list[str]:
        self._scan()
        return list(self._orgs)

    def documents(self) -> dict[str, StoredDocument]:
        self._scan()
        return dict(self._documents)

    def record_documents(self) -> set[str]:
        self._scan()
        return set(self._records)

    def cached_documents(self) -> set[str]:
        self._scan()
        return set(self._cached)

    def delete_records(self, document_ids: Iterable[str]) -> None:
        self._scan()
        deletes = [
            {"DeleteRequest": {"Key": key}} for doc_id in document_ids for key in self._records[doc_id]
        ]
        self.metadata._batch_write(deletes)  # noqa: SLF001 - the store's retrying BatchWriteItem

    # ------------------------------------------------------------------ search and content

    def indexed_documents(self, org_id: str | None) -> set[str]:
        return self.svc.index.document_ids(org_id)

    def blobs(self) -> Iterator[StoredBlob]:
        for kind in BLOB_KINDS:
            for key in self.svc.blobs.keys(f"{kind}/"):
                if (blob := stored_blob(key)) is not None:
                    yield blob
