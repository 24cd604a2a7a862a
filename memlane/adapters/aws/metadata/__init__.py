"""The DynamoDB metadata store, one module per aggregate of memlane.ports.MetadataStore:

    organizations  DynamoOrganizationStore    organizations and API keys
    projects       DynamoProjectStore         projects
    documents      DynamoDocumentStore        documents, their content and listings
    records        DynamoDeletionRecordStore  deletion receipts, the forgotten log
    chunks         DynamoChunkStore           chunk records

Each is usable alone on the table; memlane.adapters.aws.metadata_store.DynamoMetadataStore is all
of them in one object. The item codec they share is memlane.adapters.aws.dynamo_codec.
"""
