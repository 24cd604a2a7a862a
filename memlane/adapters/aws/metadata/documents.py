"""Documents in the metadata table (memlane.ports.DocumentStore).

A document is one item, pk=ORG#{org}#DOC#{doc}, sk=DOC; tenant isolation is in the key, so a
read with another organization's id addresses another item and finds nothing. GSI1 lists a
project's documents by creation time (gsi1sk="{created_at}#{id}"), GSI2 the documents due to be
forgotten (sharded by document id), GSI3 a conversation's messages in conversation order
(gsi3sk="{message_index:010d}#{created_at}#{id}"). A content-hash item (pk=ORG#{org}#PROJECT#{p}#HASH#{sha})
finds a save's duplicate.

Content larger than INLINE_CONTENT_LIMIT_BYTES (UTF-8) goes to the BlobStore under
`content/{org}/{doc}.txt` and the item keeps `content_key`; DynamoDB items stop at 400 KB.
Deleting a document removes its chunk records too (memlane.adapters.aws.metadata.chunks keeps them
under the document's partition key).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import error_code
from memlane.adapters.aws.dynamo_codec import (
    deserialize,
    model_attributes,
    model_from_item,
    serialize,
    to_iso,
)
from memlane.adapters.aws.dynamo_table import _key
from memlane.adapters.aws.metadata.projects import DynamoProjectStore
from memlane.documents.keys import content_key
from memlane.domain.errors import ConflictError, IdTakenError, PayloadTooLargeError, TransientError
from memlane.domain.models import Document, DocumentStatus
from memlane.ports import (
    BlobStore,
    DocumentPage,
    DocumentStats,
    RecallFilters,
    around_in_conversations,
    decode_cursor,
    encode_cursor,
)

INLINE_CONTENT_LIMIT_BYTES = 100_000
ID_CLAIMED = "id_claimed"  # the document's id is claimed (its DOCID item exists)
CONTENT_BYTES = "content_bytes"
# Values in one filter expression before the check moves to Python (expressions stop at 4 KB).
MAX_EXPRESSION_VALUES = 50
# Looks at a content hash before add_document gives up: each lost race means another save stored it.
ADD_ATTEMPTS = 3


def _claim_condition(hash_claim: str | None) -> dict[str, Any]:
    if hash_claim is None:
        return {}
    if not hash_claim:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    return {"ConditionExpression": "document_id = :claimed",
            "ExpressionAttributeValues": {":claimed": {"S": hash_claim}}}


class DynamoDocumentStore(DynamoProjectStore):
    """DocumentStore on the metadata table. It reads the organization's projects (document_stats
    and mark_source_changed go project by project over GSI1), hence a ProjectStore too.
    `blob_store` holds content too large for an item."""

    def __init__(
        self,
        table_name: str,
        client: Any | None = None,
        blob_store: BlobStore | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(table_name, client, sleep=sleep)
        self.blob_store = blob_store

    def document_stats(self, org_id: str, since: datetime, apart: Collection[str] = ()) -> DocumentStats:
        """One Query per project over GSI1 (its documents by creation time), reading the size
        attribute rather than the content."""
        bound = to_iso(since)
        apart_ids = set(apart)
        total = recent = size = apart_total = 0
        for project in self.list_projects(org_id):
            counted_apart = project.id in apart_ids
            for item in self._query(
                IndexName=ks.GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                ExpressionAttributeValues={":pk": {"S": ks.project_gsi_pk(org_id, project.id)}},
                ProjectionExpression="#c, #b, #t",
                ExpressionAttributeNames={"#c": "created_at", "#b": CONTENT_BYTES, "#t": "content"},
            ):
                if counted_apart:
                    apart_total += 1
                else:
                    total += 1
                    if item.get("created_at", {}).get("S", "") >= bound:
                        recent += 1
                if CONTENT_BYTES in item:
                    size += int(item[CONTENT_BYTES]["N"])
                elif "content" in item:  # written before content_bytes existed
                    size += len(item["content"]["S"].encode("utf-8"))
        return DocumentStats(total=total, created_since=recent, content_bytes=size, apart_total=apart_total)

    def put_document(self, doc: Document) -> None:
        self._write_document(doc)

    def add_document(self, doc: Document) -> Document | None:
        """The content-hash item is the claim: written in the same transaction as the document, on
        condition that it is absent or still names the document it named when looked up (one that
        failed, was deleted, or changed content since). A save that loses the race looks again and
        finds the winner."""
        if not doc.content_hash:
            self.put_document(doc)
            return None
        hash_key = ks.hash_pk(doc.organization_id, doc.project_id, doc.content_hash)
        for _ in range(ADD_ATTEMPTS):
            # One read of the entry decides both: the document it names is the duplicate, or (failed,
            # deleted, changed since) the claim is conditioned on the entry still naming it. Reading
            # the entry twice let a save that won between the reads be overwritten.
            pointer = self._get(hash_key, ks.SK_HASH, projection="document_id")
            named = pointer["document_id"]["S"] if pointer else ""
            existing = self._duplicate(doc.organization_id, named, doc.project_id, doc.content_hash)
            if existing is not None:
                return existing
            try:
                self._write_document(doc, hash_claim=named)
                return None
            except ConflictError:
                continue  # another save took the hash meanwhile: it is found on the next look
        raise TransientError(f"document {doc.id}: its content hash kept changing hands; retry the save")

    def _write_document(self, doc: Document, hash_claim: str | None = None) -> None:
        """An upsert within the organization. A document id is one organization's (a DOCID item,
        memlane.adapters.aws.dynamo_schema): another's write of it is refused (IdTakenError) in the
        same transaction, before anything is written. `hash_claim`: None writes the content-hash
        item whatever it holds; "" only where there is none; a document id only while it still names that document."""
        pk = ks.doc_pk(doc.organization_id, doc.id)
        previous = self._get(pk, ks.SK_DOC, projection="content_hash, project_id, content_key, id_claimed")

        item: dict[str, Any] = {
            ks.PK: pk,
            ks.SK: ks.SK_DOC,
            "entity": "document",
            ks.GSI1_PK: ks.project_gsi_pk(doc.organization_id, doc.project_id),
            ks.GSI1_SK: f"{to_iso(doc.created_at)}#{doc.id}",
            **model_attributes(doc, exclude=("content",)),
            ID_CLAIMED: True,
        }
        if doc.labels:
            # a list attribute that filter expressions can test: the tags and prefixed keyphrases,
            # lower-cased, because the filter ignores case (as the SQLite store's does)
            item["tags"] = doc.labels
        if doc.conversation_id is not None:
            item[ks.GSI3_PK] = ks.conversation_gsi_pk(doc.organization_id, doc.project_id, doc.conversation_id)
            item[ks.GSI3_SK] = ks.conversation_gsi_sk(doc.message_index or 0, to_iso(doc.created_at), doc.id)
        if doc.forget_after is not None:
            item[ks.GSI2_PK] = ks.forget_gsi_pk(ks.forget_shard(doc.id))
            item[ks.GSI2_SK] = f"{to_iso(doc.forget_after)}#{doc.id}"

        item.update(self._content_attributes(doc, previous))

        claim = previous is None or ID_CLAIMED not in previous
        operations = self._writes(doc, item, claim=claim, hash_claim=hash_claim)
        # a failed condition on the id's claim is another organization's id; on the content hash,
        # another save of the same content won the race (add_document looks again)
        self._transact(operations, conflict=f"document {doc.id} could not be written",
                       errors={1: (IdTakenError, f"document id {doc.id} is not available")} if claim else None)

        if previous is not None:
            old = deserialize(previous)
            old_hash, old_project = old.get("content_hash", ""), old.get("project_id", doc.project_id)
            if old_hash and (old_hash != doc.content_hash or old_project != doc.project_id):
                self._delete_hash_item(doc.organization_id, old_project, old_hash, doc.id)
            if old.get("content_key") and "content_key" not in item and self.blob_store is not None:
                self.blob_store.delete(old["content_key"])

    def _content_attributes(self, doc: Document, previous: dict[str, Any] | None) -> dict[str, Any]:
        """The content inline, or (too large for an item) in the blob store under `content_key`."""
        encoded = doc.content.encode("utf-8")
        size = {CONTENT_BYTES: len(encoded)}  # storage used, summed without reading the content
        if len(encoded) <= INLINE_CONTENT_LIMIT_BYTES:
            return {**size, "content": doc.content}
        if self.blob_store is None:
            raise PayloadTooLargeError(
                f"content of document {doc.id} is {len(encoded)} bytes; storing more than "
                f"{INLINE_CONTENT_LIMIT_BYTES} needs a blob store"
            )
        key = content_key(doc.organization_id, doc.id)
        stored = deserialize(previous) if previous is not None else {}
        # A status or summary update of a large document leaves its content as it is: the blob
        # is rewritten only when the content changed (the hash is the cleaned text's SHA-256).
        unchanged = (
            bool(doc.content_hash)
            and stored.get("content_key") == key
            and (stored.get("content_hash") == doc.content_hash)
        )
        if not unchanged:
            self.blob_store.put(key, encoded)  # the blob first, so an item never points at nothing
        return {**size, "content_key": key}

    def _writes(self, doc: Document, item: dict[str, Any], *, claim: bool,
                hash_claim: str | None) -> list[dict[str, Any]]:
        """The document item, its id's claim (on its first write) and its dedupe entry, written in
        one transaction."""
        operations: list[dict[str, Any]] = [{"Put": {"TableName": self.table_name, "Item": serialize(item)}}]
        if claim:
            operations.append(self._claim(doc))
        if doc.content_hash:
            hash_item = {
                ks.PK: ks.hash_pk(doc.organization_id, doc.project_id, doc.content_hash),
                ks.SK: ks.SK_HASH,
                "entity": "content_hash",
                "document_id": doc.id,
            }
            operations.append({"Put": {"TableName": self.table_name, "Item": serialize(hash_item),
                                       **_claim_condition(hash_claim)}})
        return operations

    def _claim(self, doc: Document) -> dict[str, Any]:
        owner = {ks.PK: ks.doc_owner_pk(doc.id), ks.SK: ks.SK_DOC_OWNER, "entity": "document_id",
                 "organization_id": doc.organization_id}
        return {"Put": {
            "TableName": self.table_name,
            "Item": serialize(owner),
            "ConditionExpression": "attribute_not_exists(pk) OR organization_id = :org",
            "ExpressionAttributeValues": {":org": {"S": doc.organization_id}},
        }}

    def _release(self, org_id: str, document_id: str) -> None:
        """The id's claim, removed with the document (only while it names this organization)."""
        try:
            self._call(
                "delete_item",
                TableName=self.table_name,
                Key=_key(ks.doc_owner_pk(document_id), ks.SK_DOC_OWNER),
                ConditionExpression="organization_id = :org",
                ExpressionAttributeValues={":org": {"S": org_id}},
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise

    def _delete_hash_item(self, org_id: str, project_id: str, content_hash: str, document_id: str) -> None:
        """Removes the dedupe entry only while it still names this document: another document
        with the same content may have taken it over."""
        try:
            self._call(
                "delete_item",
                TableName=self.table_name,
                Key=_key(ks.hash_pk(org_id, project_id, content_hash), ks.SK_HASH),
                ConditionExpression="document_id = :doc",
                ExpressionAttributeValues={":doc": {"S": document_id}},
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise

    def get_document(self, org_id: str, document_id: str) -> Document | None:
        item = self._get(ks.doc_pk(org_id, document_id), ks.SK_DOC)
        return self._document_from_item(item) if item else None

    def _document_from_item(self, item: dict[str, Any]) -> Document | None:
        doc = model_from_item(Document, item)
        if "content_key" in item:
            if self.blob_store is None:
                raise PayloadTooLargeError(
                    f"content of document {doc.id} is in the blob store; none configured"
                )
            data = self.blob_store.get(item["content_key"]["S"])
            if data is None:
                # put_document writes the blob before the item and delete_document removes the
                # item before the blob: a missing blob means the document is being deleted.
                return None
            doc.content = data.decode("utf-8")
        return doc

    def find_document_by_hash(self, org_id: str, project_id: str, content_hash: str) -> Document | None:
        if not content_hash:
            return None
        pointer = self._get(ks.hash_pk(org_id, project_id, content_hash), ks.SK_HASH)
        if pointer is None:
            return None
        return self._duplicate(org_id, pointer["document_id"]["S"], project_id, content_hash)

    def _duplicate(self, org_id: str, document_id: str, project_id: str, content_hash: str) -> Document | None:
        """The document a content-hash entry names, when it is still a duplicate of that content.
        The entry is a hint; the document itself decides (its content may have changed since).
        A failed save is not a duplicate: saving the same content again retries it."""
        doc = self.get_document(org_id, document_id) if document_id else None
        if doc is None or doc.content_hash != content_hash or doc.project_id != project_id:
            return None
        if doc.status == DocumentStatus.FAILED:
            return None
        return doc

    def set_status(
        self, org_id: str, document_id: str, status: DocumentStatus, reason: str | None = None
    ) -> None:
        """A no-op for a document that does not exist (e.g. deleted while it was processing):
        the condition stops the update from creating a stray item."""
        values: dict[str, Any] = {":status": {"S": DocumentStatus(status).value}}
        if reason is None:
            expression = "SET #status = :status REMOVE status_reason"
        else:
            expression = "SET #status = :status, status_reason = :reason"
            values[":reason"] = {"S": reason}
        try:
            self._call(
                "update_item",
                TableName=self.table_name,
                Key=_key(ks.doc_pk(org_id, document_id), ks.SK_DOC),
                UpdateExpression=expression,
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise

    def delete_document(self, org_id: str, document_id: str) -> bool:
        pk = ks.doc_pk(org_id, document_id)
        doc_item = self._get(pk, ks.SK_DOC, projection="project_id, content_hash, content_key")
        if doc_item is None:
            return False
        doc = deserialize(doc_item)

        chunk_items = list(
            self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": {"S": pk}, ":prefix": {"S": ks.CHUNK_SK_PREFIX}},
                ProjectionExpression="pk, sk, #id",
                ExpressionAttributeNames={"#id": "id"},
                ConsistentRead=True,
            )
        )
        deletes: list[dict[str, Any]] = []
        for chunk in chunk_items:
            deletes.append({"DeleteRequest": {"Key": _key(pk, chunk[ks.SK]["S"])}})
            if "id" in chunk:
                ref = _key(ks.chunk_ref_pk(org_id, chunk["id"]["S"]), ks.SK_CHUNK_REF)
                deletes.append({"DeleteRequest": {"Key": ref}})
        # Chunks first, the document item last: if this stops halfway, a retry still finds the
        # document and finishes the job.
        self._batch_write(deletes)
        if doc.get("content_hash"):
            self._delete_hash_item(org_id, doc["project_id"], doc["content_hash"], document_id)
        self._call("delete_item", TableName=self.table_name, Key=_key(pk, ks.SK_DOC))
        self._release(org_id, document_id)
        if doc.get("content_key") and self.blob_store is not None:
            self.blob_store.delete(doc["content_key"])
        return True

    def recent_documents(
        self, org_id: str, project_ids: Sequence[str], filters: RecallFilters, now: datetime, limit: int
    ) -> list[Document]:
        """Ready, unexpired documents of the given projects (latest versions unless asked for),
        newest first, read from GSI1 (one descending Query per project, paginated until `limit`
        matches, then merged)."""
        if limit <= 0:
            return []
        tags = filters.labels()
        content_types = tuple(dict.fromkeys(ct.value for ct in filters.content_types))
        names = {"#status": "status"}
        values: dict[str, Any] = {
            ":ready": {"S": DocumentStatus.READY.value},
            ":now": {"S": to_iso(now)},
        }
        conditions = ["#status = :ready", "(attribute_not_exists(forget_after) OR forget_after > :now)"]
        if not filters.include_superseded:
            conditions.append("attribute_not_exists(superseded_by)")
        if content_types:
            placeholders = [f":ct{i}" for i in range(len(content_types))]
            values.update({p: {"S": v} for p, v in zip(placeholders, content_types, strict=True)})
            conditions.append(f"content_type IN ({', '.join(placeholders)})")
        if tags and len(tags) <= MAX_EXPRESSION_VALUES:
            placeholders = [f":tag{i}" for i in range(len(tags))]
            values.update({p: {"S": v} for p, v in zip(placeholders, tags, strict=True)})
            conditions.append("(" + " OR ".join(f"contains(tags, {p})" for p in placeholders) + ")")
        key_condition = "gsi1pk = :pk"
        if filters.created_after is not None:
            # gsi1sk is "{created_at}#{doc}"; '$' sorts right after '#', so this bound keeps
            # exactly the documents created strictly after `created_after`.
            key_condition += " AND gsi1sk > :after"
            values[":after"] = {"S": f"{to_iso(filters.created_after)}$"}

        wanted_tags = set(tags)
        found: list[Document] = []
        for project_id in dict.fromkeys(project_ids):
            kwargs: dict[str, Any] = {
                "TableName": self.table_name,
                "IndexName": ks.GSI1,
                "KeyConditionExpression": key_condition,
                "FilterExpression": " AND ".join(conditions),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": {**values, ":pk": {"S": ks.project_gsi_pk(org_id, project_id)}},
                "ScanIndexForward": False,
                "Limit": min(max(limit, 50), 1000),
            }
            matched = 0
            while matched < limit:
                page = self._call("query", **kwargs)
                for item in page.get("Items", []):
                    doc = self._document_from_item(item)
                    if doc is None or (
                        wanted_tags and not wanted_tags.intersection(doc.labels)
                    ):
                        continue
                    found.append(doc)
                    matched += 1
                    if matched >= limit:
                        break
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        found.sort(key=lambda d: (d.created_at, d.id), reverse=True)
        return found[:limit]

    def get_documents(self, org_id: str, document_ids: Sequence[str]) -> list[Document]:
        """The documents that exist, in the order asked for."""
        keys = [_key(ks.doc_pk(org_id, doc_id), ks.SK_DOC) for doc_id in document_ids]
        by_id: dict[str, Document] = {}
        for item in self._batch_get(keys):
            doc = self._document_from_item(item)
            if doc is not None and doc.organization_id == org_id:
                by_id[doc.id] = doc
        return [by_id[doc_id] for doc_id in dict.fromkeys(document_ids) if doc_id in by_id]

    def conversation_messages(self, org_id: str, document_ids: Sequence[str]) -> set[str]:
        """A message of a conversation is indexed under its conversation (GSI3): its item has that key.
        Read from the items alone, never their content in the blob store."""
        if not document_ids:
            return set()
        keys = [_key(ks.doc_pk(org_id, doc_id), ks.SK_DOC) for doc_id in document_ids]
        return {item["id"]["S"] for item in self._batch_get(keys)
                if ks.GSI3_PK in item and item.get("organization_id", {}).get("S") == org_id}

    def touch_documents(self, org_id: str, document_ids: Sequence[str], when: datetime) -> None:
        """Sets last_accessed_at. One conditional UpdateItem per document (not a transaction: a
        document deleted meanwhile must not fail the others); missing documents are skipped."""
        for doc_id in dict.fromkeys(document_ids):
            try:
                self._call(
                    "update_item",
                    TableName=self.table_name,
                    Key=_key(ks.doc_pk(org_id, doc_id), ks.SK_DOC),
                    UpdateExpression="SET last_accessed_at = :when",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeValues={":when": {"S": to_iso(when)}},
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise

    def expired_documents(self, now: datetime, limit: int = 100) -> list[Document]:
        """Documents whose forget_after is at or before `now`, across all organizations, from the
        sharded GSI2 (keys only), then read with BatchGetItem. For the forget sweep."""
        due: list[tuple[str, str]] = []
        bound = f"{to_iso(now)}$"  # includes forget_after == now
        for shard in range(ks.FORGET_SHARDS):
            if len(due) >= limit:
                break
            items = self._query(
                IndexName=ks.GSI2,
                KeyConditionExpression="gsi2pk = :pk AND gsi2sk < :bound",
                ExpressionAttributeValues={":pk": {"S": ks.forget_gsi_pk(shard)}, ":bound": {"S": bound}},
            )
            for item in items:
                # pk is "ORG#{org}#DOC#{doc}"
                _, org_id, _, doc_id = item[ks.PK]["S"].split("#", 3)
                due.append((org_id, doc_id))
                if len(due) >= limit:
                    break
        docs = [
            doc
            for item in self._batch_get([_key(ks.doc_pk(org, doc_id), ks.SK_DOC) for org, doc_id in due])
            if (doc := self._document_from_item(item)) is not None
        ]
        return sorted(docs, key=lambda d: (d.forget_after or now, d.id))

    def next_message_index(self, org_id: str, project_id: str, conversation_id: str) -> int:
        """The last item of the conversation's GSI3 partition (its sort key starts with the
        zero-padded message_index)."""
        page = self._call(
            "query", TableName=self.table_name, IndexName=ks.GSI3,
            KeyConditionExpression="gsi3pk = :pk",
            ExpressionAttributeValues={":pk": {"S": ks.conversation_gsi_pk(org_id, project_id, conversation_id)}},
            ProjectionExpression="message_index", ScanIndexForward=False, Limit=1,
        )
        items = page.get("Items", [])
        if not items or "N" not in items[0].get("message_index", {}):
            return 0
        return int(items[0]["message_index"]["N"]) + 1

    def conversation_documents(
        self, org_id: str, project_id: str, conversation_id: str, now: datetime, *, pending: bool = False
    ) -> list[Document]:
        """One Query of GSI3 (projected whole), in its sort key's order; what is not visible is
        left out here (a filter expression would cost the same read)."""
        items = self._query(
            IndexName=ks.GSI3,
            KeyConditionExpression="gsi3pk = :pk",
            ExpressionAttributeValues={":pk": {"S": ks.conversation_gsi_pk(org_id, project_id, conversation_id)}},
        )
        shown = {DocumentStatus.READY} | ({DocumentStatus.QUEUED, DocumentStatus.PROCESSING} if pending else set())
        docs = (self._document_from_item(item) for item in items)
        return [doc for doc in docs
                if doc is not None and doc.status in shown and doc.superseded_by is None and not doc.is_expired(now)]

    def conversation_around(
        self, org_id: str, document_ids: Sequence[str], window: int, now: datetime
    ) -> dict[str, tuple[list[str], list[str]]]:
        return around_in_conversations(self, org_id, document_ids, window, now)

    def list_documents(self, org_id: str, project_id: str) -> list[Document]:
        """Every document of a project, whatever its status or version, oldest first (GSI1)."""
        items = self._query(
            IndexName=ks.GSI1,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues={":pk": {"S": ks.project_gsi_pk(org_id, project_id)}},
        )
        return [doc for item in items if (doc := self._document_from_item(item)) is not None]

    def page_documents(
        self, org_id: str, project_id: str, now: datetime, *, limit: int, cursor: str | None = None,
        include_superseded: bool = False,
    ) -> DocumentPage:
        """A project's unexpired documents, newest first, from GSI1 (sort key "{created_at}#{id}"),
        `limit` at a time. Listings carry no content (a large document's blob is not read)."""
        names = {"#fa": "forget_after"}
        values: dict[str, Any] = {":pk": {"S": ks.project_gsi_pk(org_id, project_id)}, ":now": {"S": to_iso(now)}}
        conditions = ["(attribute_not_exists(#fa) OR #fa > :now)"]
        if not include_superseded:
            conditions.append("attribute_not_exists(superseded_by)")
        key_condition = "gsi1pk = :pk"
        if cursor is not None:
            created, doc_id = decode_cursor(cursor)
            key_condition += " AND gsi1sk < :after"
            values[":after"] = {"S": f"{created}#{doc_id}"}
        kwargs: dict[str, Any] = {
            "TableName": self.table_name, "IndexName": ks.GSI1, "KeyConditionExpression": key_condition,
            "FilterExpression": " AND ".join(conditions), "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values, "ScanIndexForward": False, "Limit": min(max(limit + 1, 25), 500),
        }
        found: list[Document] = []
        more = False
        while True:
            page = self._call("query", **kwargs)
            for item in page.get("Items", []):
                if len(found) == limit:
                    more = True
                    break
                found.append(model_from_item(Document, {k: v for k, v in item.items() if k != "content"}))
            if more or "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        next_cursor = encode_cursor(to_iso(found[-1].created_at), found[-1].id) if more and found else None
        return DocumentPage(documents=found, next_cursor=next_cursor)

    def find_latest_by_source_url(self, org_id: str, project_id: str, source_url: str) -> Document | None:
        """The newest version of a page saved from `source_url` that is neither superseded nor
        failed: GSI1 newest first, filtered, stopping at the first match (a save that names a URL
        pays one Query over the project's documents in the worst case)."""
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "IndexName": ks.GSI1,
            "KeyConditionExpression": "gsi1pk = :pk",
            "FilterExpression": "source_url = :url AND attribute_not_exists(superseded_by) "
            "AND #status <> :failed",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {
                ":pk": {"S": ks.project_gsi_pk(org_id, project_id)},
                ":url": {"S": source_url},
                ":failed": {"S": DocumentStatus.FAILED.value},
            },
            "ScanIndexForward": False,
        }
        while True:
            page = self._call("query", **kwargs)
            for item in page.get("Items", []):
                doc = self._document_from_item(item)
                if doc is not None:
                    return doc
            if "LastEvaluatedKey" not in page:
                return None
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def mark_source_changed(self, org_id: str, source_url: str, when: datetime,
                            exclude_project_id: str | None = None) -> int:
        """One GSI1 query per project of the organization, filtered by the URL (a refresh changes
        few pages; no index is kept by URL for this), then one conditional update per document."""
        marked = 0
        for project in self.list_projects(org_id):
            if project.id == exclude_project_id:
                continue
            items = self._query(
                IndexName=ks.GSI1,
                KeyConditionExpression="gsi1pk = :pk",
                FilterExpression="source_url = :url",
                ExpressionAttributeValues={":pk": {"S": ks.project_gsi_pk(org_id, project.id)},
                                           ":url": {"S": source_url}},
                ProjectionExpression="id",
            )
            for item in items:
                try:
                    self._call("update_item", TableName=self.table_name,
                               Key=_key(ks.doc_pk(org_id, item["id"]["S"]), ks.SK_DOC),
                               UpdateExpression="SET source_changed_at = :when",
                               ConditionExpression="attribute_exists(pk)",
                               ExpressionAttributeValues={":when": {"S": to_iso(when)}})
                    marked += 1
                except ClientError as exc:
                    if error_code(exc) != "ConditionalCheckFailedException":  # deleted meanwhile
                        raise
        return marked
