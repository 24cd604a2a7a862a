"""The SQLite metadata store, one module per aggregate of memlane.ports.MetadataStore:

    organizations  SqliteOrganizationStore    organizations and API keys
    projects       SqliteProjectStore         projects
    documents      SqliteDocumentStore        documents, listings, conversations in order
    records        SqliteDeletionRecordStore  deletion receipts, the forgotten log
    chunks         SqliteChunkStore           chunk records

Each works alone on the database; memlane.adapters.local.metadata_store.SqliteMetadataStore is all
of them in one object.
"""
