"""DynamoDB key design for memlane's metadata table, shared by the adapter and the CDK stack so
the two cannot drift.

One table, `pk`/`sk` strings, three sparse GSIs, TTL on `expires_at` (epoch seconds).

| access pattern                                   | key                                                  |
| ------------------------------------------------ | ---------------------------------------------------- |
| get organization                                 | pk=ORG#{org}  sk=ORG                                 |
| organization by slug (unique, conditional put)   | pk=ORGSLUG#{slug}  sk=ORGSLUG                        |
| API key by SHA-256 of the secret (authorizer)    | pk=KEY#{hash}  sk=KEY                                |
| API key by id (revoke) [added]                   | pk=KEYID#{key}  sk=KEYID  (holds the key's hash)     |
| an organization's keys                           | GSI1 gsi1pk=ORG#{org}#KEYS  gsi1sk={created_at}      |
| an organization's projects                       | pk=ORG#{org}  sk=PROJECT#{project}                   |
| project slug (unique, conditional put)           | pk=ORG#{org}  sk=PROJSLUG#{slug}                     |
| get document (tenant in the key)                 | pk=ORG#{org}#DOC#{doc}  sk=DOC                       |
| who holds a document id (unique, conditional put)| pk=DOCID#{doc}  sk=OWNER  (holds the org) [added]    |
| a document's chunks, in index order              | pk=ORG#{org}#DOC#{doc}  sk=CHUNK#{index:06d}         |
| chunk by id (recall hydration) [added]           | pk=ORG#{org}#CHUNK#{chunk}  sk=CHUNKREF              |
| recent documents of a project                    | GSI1 gsi1pk=ORG#{org}#PROJECT#{project}              |
|                                                  |      gsi1sk={created_at}#{doc}                       |
| a conversation's messages, in conversation order | GSI3 gsi3pk=ORG#{org}#PROJECT#{project}#CONV#{conv}  |
|   [added with the conversation signal]           |      gsi3sk={message_index:010d}#{created_at}#{doc}  |
| dedupe: content hash within a project            | pk=ORG#{org}#PROJECT#{project}#HASH#{sha256} sk=HASH |
| documents due to be forgotten                    | GSI2 gsi2pk=FORGET#{shard 0-9}                       |
|                                                  |      gsi2sk={forget_after}#{doc}                     |
| idempotency records, cache entries, rate windows | pk=IDEMP#… / CACHE#… / RATE#…  sk=…, TTL-expiring    |
| an organization's docsets                        | pk=ORG#{org}  sk=DOCSET#{docset}                     |
| every docset (the refresh job)                   | GSI1 gsi1pk=DOCSETS  gsi1sk={created_at}#{docset}    |
| a docset's pages (crawl state)                   | pk=DOCSET#{docset}  sk=PAGE#{page}                   |
| a docset's text version (the duplicate check)    | pk=DOCSET#{docset}  sk=TEXTS                         |
| pages due to be crawled, oldest first            | GSI2 gsi2pk=PAGEDUE#{shard 0-9}                      |
|                                                  |      gsi2sk={retry_at}#{created_at}                  |
| pages claimed by a worker (stuck when old)       | GSI2 gsi2pk=PAGECLAIMED#{shard 0-9}                  |
|                                                  |      gsi2sk={claimed_at}                             |
| an organization's docset client sessions         | pk=ORG#{org}  sk=DOCSESSION#{session}                |
| a deletion receipt (tenant in the key)           | pk=ORG#{org}#RECEIPT#{receipt}  sk=RECEIPT           |
| an organization's connections                    | pk=ORG#{org}  sk=CONN#{connection}                   |
| every connection (the sync schedule)             | GSI1 gsi1pk=CONNS  gsi1sk={created_at}#{connection}  |
| connection by id (webhooks) [added]              | pk=CONNREF#{connection}  sk=CONNREF (holds the org)  |
| a connection's items (what it synced)            | pk=CONN#{connection}  sk=ITEM#{sha256(external id)}  |
| an OAuth flow by the SHA-256 of its state        | pk=OAUTH#{state hash}  sk=OAUTH, TTL-expiring        |

Connections (memlane.connections) keep their sync lease in a `lease_until` attribute written
only by conditional updates (claim, release); saving a connection never touches it.

[added] rows were added with the AWS adapter: the MetadataStore port revokes a key by its id and
loads chunks by id, and neither was addressable before. A KEYID item points at the key's hash; a
CHUNKREF item holds the chunk's document id and index, so both lookups stay GetItem/BatchGetItem.
A DOCID item makes a document id one organization's: a document's first write puts it in the same
transaction, on condition that it is absent or names the same organization, so another
organization's write of that id fails (IdTakenError) and changes nothing; a delete removes it. A
document written before DOCID items existed claims its id at its next write.

Items carry an `entity` attribute naming what they are. Datetimes are stored as fixed-width
ISO-8601 UTC strings (`2025-01-02T03:04:05.000006+00:00`) so that string order is time order in
sort keys and filter expressions.

GSI1 projects ALL attributes (recent documents are read straight from it, filters included);
GSI2 projects KEYS_ONLY (the forget sweep needs only the table key, which names org and document).
GSI3 is sparse (only documents saved with a conversation_id carry its keys) and projects ALL:
contextual indexing and the recall neighbour stage read a conversation's messages, text included,
with one Query.

Docset timestamps are epoch milliseconds (the Mem-Oracle API's unit), written zero-padded to 13
digits in sort keys so string order is time order. A page is in at most one GSI2 queue: PAGEDUE
while it is pending or a retryable error (`retry_at` set), PAGECLAIMED while a worker has it;
the keys move with every state change. Those queues serve the embedded runner's cross-docset
calls (claim_pages, next_due, release_stuck); on AWS the page queue (SQS) drives the crawl.
"""

from __future__ import annotations

import zlib
from typing import Any

# Environment variables the functions read, set by the CDK stack: declared with the AWS settings
# (memlane.config.aws); named here too because infra sets them beside the table they describe.
from memlane.config.aws import (
    ENV_BUCKET as ENV_BUCKET,
)
from memlane.config.aws import (
    ENV_CONNECTIONS_KEY as ENV_CONNECTIONS_KEY,
)
from memlane.config.aws import (
    ENV_EMBEDDER as ENV_EMBEDDER,
)
from memlane.config.aws import (
    ENV_EXTRACTION_QUEUE_URL as ENV_EXTRACTION_QUEUE_URL,
)
from memlane.config.aws import (
    ENV_INGEST_QUEUE_URL as ENV_INGEST_QUEUE_URL,
)
from memlane.config.aws import (
    ENV_LLM_MODEL_ID as ENV_LLM_MODEL_ID,
)
from memlane.config.aws import (
    ENV_OPENAI_SECRET_NAME as ENV_OPENAI_SECRET_NAME,
)
from memlane.config.aws import (
    ENV_PAGE_QUEUE_URL as ENV_PAGE_QUEUE_URL,
)
from memlane.config.aws import (
    ENV_SEARCH_ENDPOINT as ENV_SEARCH_ENDPOINT,
)
from memlane.config.aws import (
    ENV_SEARCH_INDEX_ALIAS as ENV_SEARCH_INDEX_ALIAS,
)
from memlane.config.aws import (
    ENV_SEARCH_KIND as ENV_SEARCH_KIND,
)
from memlane.config.aws import (
    ENV_STATE_MACHINE_ARN as ENV_STATE_MACHINE_ARN,
)
from memlane.config.aws import (
    ENV_SYNC_QUEUE_URL as ENV_SYNC_QUEUE_URL,
)
from memlane.config.aws import (
    ENV_TABLE as ENV_TABLE,
)
from memlane.config.aws import (
    ENV_VECTOR_BUCKET as ENV_VECTOR_BUCKET,
)

PK = "pk"
SK = "sk"
GSI1 = "gsi1"
GSI1_PK = "gsi1pk"
GSI1_SK = "gsi1sk"
GSI2 = "gsi2"
GSI2_PK = "gsi2pk"
GSI2_SK = "gsi2sk"
GSI3 = "gsi3"
GSI3_PK = "gsi3pk"
GSI3_SK = "gsi3sk"
TTL_ATTRIBUTE = "expires_at"
FORGET_SHARDS = 10
GSI1_PROJECTION = "ALL"
GSI2_PROJECTION = "KEYS_ONLY"
GSI3_PROJECTION = "ALL"

# Sort keys of singleton items.
SK_ORG = "ORG"
SK_ORG_SLUG = "ORGSLUG"
SK_KEY = "KEY"
SK_KEY_ID = "KEYID"
SK_DOC = "DOC"
SK_DOC_OWNER = "OWNER"
SK_HASH = "HASH"
SK_CHUNK_REF = "CHUNKREF"
SK_RECEIPT = "RECEIPT"
PROJECT_SK_PREFIX = "PROJECT#"
CHUNK_SK_PREFIX = "CHUNK#"
DOCSET_SK_PREFIX = "DOCSET#"
DOCSET_PAGES_PK_PREFIX = "DOCSET#"
PAGE_SK_PREFIX = "PAGE#"
SK_DOCSET_TEXTS = "TEXTS"
DOCSET_SESSION_SK_PREFIX = "DOCSESSION#"
ALL_DOCSETS_GSI_PK = "DOCSETS"
PAGE_SHARDS = 10

def org_pk(org_id: str) -> str:
    return f"ORG#{org_id}"


def doc_pk(org_id: str, document_id: str) -> str:
    return f"ORG#{org_id}#DOC#{document_id}"


def doc_owner_pk(document_id: str) -> str:
    return f"DOCID#{document_id}"


def project_gsi_pk(org_id: str, project_id: str) -> str:
    return f"ORG#{org_id}#PROJECT#{project_id}"


def hash_pk(org_id: str, project_id: str, content_hash: str) -> str:
    return f"ORG#{org_id}#PROJECT#{project_id}#HASH#{content_hash}"


def chunk_sk(index: int) -> str:
    return f"CHUNK#{index:06d}"


def org_slug_pk(slug: str) -> str:
    return f"ORGSLUG#{slug}"


def key_pk(key_hash: str) -> str:
    return f"KEY#{key_hash}"


def key_id_pk(key_id: str) -> str:
    return f"KEYID#{key_id}"


def org_keys_gsi_pk(org_id: str) -> str:
    return f"ORG#{org_id}#KEYS"


def project_sk(project_id: str) -> str:
    return f"{PROJECT_SK_PREFIX}{project_id}"


def project_slug_sk(slug: str) -> str:
    return f"PROJSLUG#{slug}"


def chunk_ref_pk(org_id: str, chunk_id: str) -> str:
    return f"ORG#{org_id}#CHUNK#{chunk_id}"


def receipt_pk(org_id: str, receipt_id: str) -> str:
    return f"ORG#{org_id}#RECEIPT#{receipt_id}"


def forget_shard(document_id: str) -> int:
    """A stable shard (not Python's salted hash()) so the forget GSI spreads writes evenly."""
    return zlib.crc32(document_id.encode()) % FORGET_SHARDS


def conversation_gsi_pk(org_id: str, project_id: str, conversation_id: str) -> str:
    return f"ORG#{org_id}#PROJECT#{project_id}#CONV#{conversation_id}"


def conversation_gsi_sk(message_index: int, created_at: str, document_id: str) -> str:
    """Zero-padded, so string order is (message_index, created_at, id): the conversation order of
    memlane.domain.models.conversation_order."""
    return f"{message_index:010d}#{created_at}#{document_id}"


def forget_gsi_pk(shard: int) -> str:
    return f"FORGET#{shard}"


def docset_sk(docset_id: str) -> str:
    return f"{DOCSET_SK_PREFIX}{docset_id}"


def docset_pages_pk(docset_id: str) -> str:
    return f"{DOCSET_PAGES_PK_PREFIX}{docset_id}"


def page_sk(page_id: str) -> str:
    return f"{PAGE_SK_PREFIX}{page_id}"


def docset_session_sk(session_id: str) -> str:
    return f"{DOCSET_SESSION_SK_PREFIX}{session_id}"


def epoch_ms_key(value: int) -> str:
    """Epoch milliseconds as a fixed-width sort-key component (13 digits last until year 2286)."""
    return f"{value:013d}"


def page_shard(page_id: str) -> int:
    return zlib.crc32(page_id.encode()) % PAGE_SHARDS


def page_due_gsi_pk(shard: int) -> str:
    return f"PAGEDUE#{shard}"


def page_claimed_gsi_pk(shard: int) -> str:
    return f"PAGECLAIMED#{shard}"


CONNECTION_SK_PREFIX = "CONN#"
ALL_CONNECTIONS_GSI_PK = "CONNS"
SK_CONNECTION_REF = "CONNREF"
SK_OAUTH = "OAUTH"
ITEM_SK_PREFIX = "ITEM#"


def connection_sk(connection_id: str) -> str:
    return f"{CONNECTION_SK_PREFIX}{connection_id}"


def connection_ref_pk(connection_id: str) -> str:
    return f"CONNREF#{connection_id}"


def connection_items_pk(connection_id: str) -> str:
    return f"CONN#{connection_id}"


def connection_item_sk(external_id: str) -> str:
    """Hashed: an external id (a file path) may be longer than a sort key may be."""
    import hashlib

    return ITEM_SK_PREFIX + hashlib.sha256(external_id.encode("utf-8")).hexdigest()


def oauth_pk(state_hash: str) -> str:
    return f"OAUTH#{state_hash}"


def table_definition(table_name: str) -> dict[str, Any]:
    """CreateTable arguments for the metadata table. The CDK stack declares the same keys and
    projections; the adapter tests create their moto table from this."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"}
            for name in (PK, SK, GSI1_PK, GSI1_SK, GSI2_PK, GSI2_SK, GSI3_PK, GSI3_SK)
        ],
        "KeySchema": [{"AttributeName": PK, "KeyType": "HASH"}, {"AttributeName": SK, "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": GSI1,
                "KeySchema": [
                    {"AttributeName": GSI1_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI1_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": GSI1_PROJECTION},
            },
            {
                "IndexName": GSI2,
                "KeySchema": [
                    {"AttributeName": GSI2_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI2_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": GSI2_PROJECTION},
            },
            {
                "IndexName": GSI3,
                "KeySchema": [
                    {"AttributeName": GSI3_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI3_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": GSI3_PROJECTION},
            },
        ],
    }
