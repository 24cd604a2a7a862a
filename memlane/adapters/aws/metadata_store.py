"""DynamoDB implementation of MetadataStore, on the key design of dynamo_schema.py: one table, the
low-level client throughout, one module per aggregate (memlane.adapters.aws.metadata):
organizations and keys, projects, documents, deletion records, chunks. `DynamoMetadataStore` is
all of them in one object, as memlane.ports.MetadataStore is the union of its parts.

The codec, the content limit and the content key stay importable from here.
"""

from __future__ import annotations

from memlane.adapters.aws.dynamo_codec import (
    conditional_put,
    deserialize,
    model_attributes,
    model_from_item,
    serialize,
    to_iso,
)
from memlane.adapters.aws.metadata.chunks import DynamoChunkStore
from memlane.adapters.aws.metadata.documents import (
    CONTENT_BYTES,
    INLINE_CONTENT_LIMIT_BYTES,
    DynamoDocumentStore,
    content_key,
)
from memlane.adapters.aws.metadata.organizations import DynamoOrganizationStore
from memlane.adapters.aws.metadata.projects import DynamoProjectStore
from memlane.adapters.aws.metadata.records import DynamoDeletionRecordStore

__all__ = [
    "CONTENT_BYTES",
    "INLINE_CONTENT_LIMIT_BYTES",
    "DynamoChunkStore",
    "DynamoDeletionRecordStore",
    "DynamoDocumentStore",
    "DynamoMetadataStore",
    "DynamoOrganizationStore",
    "DynamoProjectStore",
    "conditional_put",
    "content_key",
    "deserialize",
    "model_attributes",
    "model_from_item",
    "serialize",
    "to_iso",
]


class DynamoMetadataStore(DynamoOrganizationStore, DynamoDocumentStore, DynamoDeletionRecordStore, DynamoChunkStore):
    """MetadataStore on one DynamoDB table: `DynamoMetadataStore(table_name, client=None,
    blob_store=None, *, sleep=time.sleep)`; `blob_store` holds content too large for an item
    (DynamoDocumentStore). DynamoDocumentStore is a DynamoProjectStore, so projects come with it."""
