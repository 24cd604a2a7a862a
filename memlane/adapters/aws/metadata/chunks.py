"""Chunk records in the metadata table (memlane.ports.ChunkStore): the record of what was indexed,
from which the search index can be rebuilt. Each chunk is an item under its document's partition
key (sk=CHUNK#{index:06d}, so sk order is index order), with a pointer item by chunk id
(pk=ORG#{org}#CHUNK#{id}) for recall's by-id reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws.dynamo_codec import model_attributes, model_from_item, serialize
from memlane.adapters.aws.dynamo_table import DynamoTable, _key
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import Chunk


class DynamoChunkStore(DynamoTable):
    """ChunkStore on the metadata table."""

    def put_chunks(self, org_id: str, document_id: str, chunks: Sequence[Chunk]) -> None:
        """Replaces the document's chunk records with `chunks` (chunk items and the by-id
        pointers); chunks beyond the new count, left by an earlier version, are removed."""
        for chunk in chunks:
            if chunk.organization_id != org_id or chunk.document_id != document_id:
                raise InvalidInputError("chunks", f"chunk {chunk.id} belongs to another document")
        if len({c.chunk_index for c in chunks}) != len(chunks) or len({c.id for c in chunks}) != len(chunks):
            raise InvalidInputError("chunks", "chunk indexes and ids must be unique within a document")
        pk = ks.doc_pk(org_id, document_id)
        existing = {
            item[ks.SK]["S"]: item.get("id", {}).get("S")
            for item in self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": {"S": pk}, ":prefix": {"S": ks.CHUNK_SK_PREFIX}},
                ProjectionExpression="sk, #id",
                ExpressionAttributeNames={"#id": "id"},
                ConsistentRead=True,
            )
        }
        writes: list[dict[str, Any]] = []
        new_sks: set[str] = set()
        for chunk in chunks:
            sk = ks.chunk_sk(chunk.chunk_index)
            new_sks.add(sk)
            item = {ks.PK: pk, ks.SK: sk, "entity": "chunk", **model_attributes(chunk)}
            ref = {
                ks.PK: ks.chunk_ref_pk(org_id, chunk.id),
                ks.SK: ks.SK_CHUNK_REF,
                "document_id": document_id,
                "chunk_index": chunk.chunk_index,
            }
            writes.append({"PutRequest": {"Item": serialize(item)}})
            writes.append({"PutRequest": {"Item": serialize(ref)}})
        new_ids = {c.id for c in chunks}
        for sk, chunk_id in existing.items():
            if sk not in new_sks:
                writes.append({"DeleteRequest": {"Key": _key(pk, sk)}})
            if chunk_id and chunk_id not in new_ids:
                writes.append(
                    {"DeleteRequest": {"Key": _key(ks.chunk_ref_pk(org_id, chunk_id), ks.SK_CHUNK_REF)}}
                )
        self._batch_write(writes)

    def get_chunks(self, org_id: str, document_id: str) -> list[Chunk]:
        items = self._query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": {"S": ks.doc_pk(org_id, document_id)},
                ":prefix": {"S": ks.CHUNK_SK_PREFIX},
            },
            ConsistentRead=True,
        )
        return [model_from_item(Chunk, item) for item in items]  # sk order is index order

    def get_chunks_by_id(self, org_id: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks that exist, in the order asked for: pointers first, then the chunk items
        (two BatchGetItem rounds)."""
        refs = self._batch_get([_key(ks.chunk_ref_pk(org_id, cid), ks.SK_CHUNK_REF) for cid in chunk_ids])
        keys = [
            _key(ks.doc_pk(org_id, ref["document_id"]["S"]), ks.chunk_sk(int(ref["chunk_index"]["N"])))
            for ref in refs
        ]
        by_id = {
            chunk.id: chunk for chunk in (model_from_item(Chunk, item) for item in self._batch_get(keys))
        }
        return [by_id[cid] for cid in dict.fromkeys(chunk_ids) if cid in by_id]
