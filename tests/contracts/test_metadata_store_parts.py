"""The metadata port is narrowed by aggregate: MetadataStore is exactly the union of its parts
(OrganizationStore, ProjectStore, DocumentStore, DeletionRecordStore, ChunkStore), each method in
one part, and the DynamoDB and SQLite stores are each composed of one class per part that
implements it alone."""

from __future__ import annotations

import inspect

import pytest

from memlane.adapters.aws.metadata.chunks import DynamoChunkStore
from memlane.adapters.aws.metadata.documents import DynamoDocumentStore
from memlane.adapters.aws.metadata.organizations import DynamoOrganizationStore
from memlane.adapters.aws.metadata.projects import DynamoProjectStore
from memlane.adapters.aws.metadata.records import DynamoDeletionRecordStore
from memlane.adapters.aws.metadata_store import DynamoMetadataStore
from memlane.adapters.local.metadata.chunks import SqliteChunkStore
from memlane.adapters.local.metadata.documents import SqliteDocumentStore
from memlane.adapters.local.metadata.organizations import SqliteOrganizationStore
from memlane.adapters.local.metadata.projects import SqliteProjectStore
from memlane.adapters.local.metadata.records import SqliteDeletionRecordStore
from memlane.adapters.local.metadata_store import SqliteMetadataStore
from memlane.ports import (
    ChunkStore,
    DeletionRecordStore,
    DocumentStore,
    MetadataStore,
    OrganizationStore,
    ProjectStore,
)

PARTS = {
    OrganizationStore: (DynamoOrganizationStore, SqliteOrganizationStore),
    ProjectStore: (DynamoProjectStore, SqliteProjectStore),
    DocumentStore: (DynamoDocumentStore, SqliteDocumentStore),
    DeletionRecordStore: (DynamoDeletionRecordStore, SqliteDeletionRecordStore),
    ChunkStore: (DynamoChunkStore, SqliteChunkStore),
}
IMPLEMENTATIONS = [(part, implementation) for part, pair in PARTS.items() for implementation in pair]


def own_methods(protocol: type) -> set[str]:
    return {name for name, value in vars(protocol).items() if not name.startswith("_") and callable(value)}


def all_methods(protocol: type) -> set[str]:
    return {name for klass in protocol.__mro__ if klass is not object for name in own_methods(klass)}


def test_the_metadata_store_is_exactly_its_parts():
    assert own_methods(MetadataStore) == set(), "MetadataStore declares nothing of its own"
    assert set(MetadataStore.__mro__) >= set(PARTS)
    union: set[str] = set()
    for part in PARTS:
        methods = own_methods(part)
        assert methods, part.__name__
        assert not methods & union, f"{part.__name__} repeats {methods & union}"
        union |= methods
    assert all_methods(MetadataStore) == union
    # as many as the one Protocol had before the split, the conversation reads since (issue 22:
    # next_message_index, conversation_documents, conversation_around), and add_document (issue 36:
    # a save's atomic store-unless-duplicate, so a conversation re-sent twice at once stores once), and
    # conversation_messages (issue 35: which recall candidates are messages, read without their content)
    assert len(union) == 35 + 3 + 1 + 1


@pytest.mark.parametrize(("part", "implementation"), IMPLEMENTATIONS, ids=lambda p: getattr(p, "__name__", ""))
def test_each_part_implements_its_port_with_the_same_signatures(part: type, implementation: type):
    for name in own_methods(part):
        method = getattr(implementation, name, None)
        assert callable(method), f"{implementation.__name__} lacks {name}"
        declared = list(inspect.signature(getattr(part, name)).parameters)
        assert list(inspect.signature(method).parameters)[: len(declared)] == declared, name


@pytest.mark.parametrize(("store", "index"), [(DynamoMetadataStore, 0), (SqliteMetadataStore, 1)])
def test_each_store_is_composed_of_its_parts(store: type, index: int):
    assert all(callable(getattr(store, name, None)) for name in all_methods(MetadataStore))
    assert all(issubclass(store, pair[index]) for pair in PARTS.values())
