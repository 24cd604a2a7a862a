"""MetadataStore on SQLite: the source of truth in the embedded default. One module per aggregate
(memlane.adapters.local.metadata): organizations and keys, projects, documents, deletion
records, chunks; `SqliteMetadataStore(db)` is all of them in one object."""

from __future__ import annotations

from memlane.adapters.local.metadata.chunks import SqliteChunkStore
from memlane.adapters.local.metadata.documents import SqliteDocumentStore
from memlane.adapters.local.metadata.organizations import SqliteOrganizationStore
from memlane.adapters.local.metadata.projects import SqliteProjectStore
from memlane.adapters.local.metadata.records import SqliteDeletionRecordStore

__all__ = [
    "SqliteChunkStore",
    "SqliteDeletionRecordStore",
    "SqliteDocumentStore",
    "SqliteMetadataStore",
    "SqliteOrganizationStore",
    "SqliteProjectStore",
]


class SqliteMetadataStore(
    SqliteOrganizationStore, SqliteProjectStore, SqliteDocumentStore, SqliteDeletionRecordStore, SqliteChunkStore
):
    """MetadataStore on SQLite."""
