"""DynamoDB key design for memlane's metadata table, shared by the adapter and the CDK stack so
the two cannot drift.

One table, `pk`/`sk` strings, two sparse GSIs, TTL on `expires_at` (epoch seconds).

| access pattern                                 | key                                                           |
| ---------------------------------------------- | ------------------------------------------------------------- |
| get organization                               | pk=ORG#{org}           sk=ORG                                  |
| organization by slug (unique, conditional put)  | pk=ORGSLUG#{slug}      sk=ORGSLUG                              |
| API key by SHA-256 of the secret (authorizer)  | pk=KEY#{hash}          sk=KEY                                  |
| an organization's keys                         | GSI1 gsi1pk=ORG#{org}#KEYS            gsi1sk={created_at}      |
| an organization's projects                     | pk=ORG#{org}           sk=PROJECT#{project}                    |
| project slug (unique, conditional put)         | pk=ORG#{org}           sk=PROJSLUG#{slug}                      |
| get document (tenant in the key)               | pk=ORG#{org}#DOC#{doc} sk=DOC                                  |
| a document's chunks, in index order            | pk=ORG#{org}#DOC#{doc} sk=CHUNK#{index:06d}                    |
| recent documents of a project                  | GSI1 gsi1pk=ORG#{org}#PROJECT#{project} gsi1sk={created_at}#{doc} |
| dedupe: content hash within a project          | pk=ORG#{org}#PROJECT#{project}#HASH#{sha256} sk=HASH           |
| documents due to be forgotten                  | GSI2 gsi2pk=FORGET#{shard 0-9}        gsi2sk={forget_after}#{doc} |
| idempotency records, cache entries, rate windows | pk=IDEMP#… / CACHE#… / RATE#…  sk=…, expiring by TTL         |
"""

from __future__ import annotations

PK = "pk"
SK = "sk"
GSI1 = "gsi1"
GSI1_PK = "gsi1pk"
GSI1_SK = "gsi1sk"
GSI2 = "gsi2"
GSI2_PK = "gsi2pk"
GSI2_SK = "gsi2sk"
TTL_ATTRIBUTE = "expires_at"
FORGET_SHARDS = 10

# Environment variables the functions read (set by the CDK stack).
ENV_TABLE = "MEMLANE_TABLE"
ENV_BUCKET = "MEMLANE_BUCKET"
ENV_INGEST_QUEUE_URL = "MEMLANE_INGEST_QUEUE_URL"
ENV_STATE_MACHINE_ARN = "MEMLANE_STATE_MACHINE_ARN"
ENV_SEARCH_ENDPOINT = "MEMLANE_SEARCH_ENDPOINT"
ENV_SEARCH_KIND = "MEMLANE_SEARCH_KIND"  # "managed" | "serverless"
ENV_SEARCH_INDEX_ALIAS = "MEMLANE_SEARCH_INDEX"
ENV_EMBEDDER = "MEMLANE_EMBEDDER"  # "openai" | "bedrock"
ENV_OPENAI_SECRET_NAME = "MEMLANE_OPENAI_SECRET_NAME"
ENV_PAGE_QUEUE_URL = "MEMLANE_PAGE_QUEUE_URL"


def org_pk(org_id: str) -> str:
    return f"ORG#{org_id}"


def doc_pk(org_id: str, document_id: str) -> str:
    return f"ORG#{org_id}#DOC#{document_id}"


def project_gsi_pk(org_id: str, project_id: str) -> str:
    return f"ORG#{org_id}#PROJECT#{project_id}"


def hash_pk(org_id: str, project_id: str, content_hash: str) -> str:
    return f"ORG#{org_id}#PROJECT#{project_id}#HASH#{content_hash}"


def chunk_sk(index: int) -> str:
    return f"CHUNK#{index:06d}"
