// memlane's HTTP API as TypeScript types. src/schema.d.ts is generated from the server's
// /openapi.json (clients/typescript/openapi.json) by openapi-typescript: never edit it, run
// `make types` after changing the API. This file gives the schemas the client, the web app (web/)
// and the browser extension (extension/) use friendly names.
import type { components, operations, paths } from './schema.js'

export type { components, operations, paths }

type Schemas = components['schemas']

/** A response model as the server sends it: every field present (`null` when empty), in nested
 * models too. The OpenAPI document describes each model as the server validates it, where a field
 * with a default may be left out; responses are serialized whole, so nothing is missing. */
export type Sent<T> = T extends readonly (infer U)[]
  ? Sent<U>[]
  : T extends object
    ? { [K in keyof T]-?: Sent<Exclude<T[K], undefined>> }
    : T

// ------------------------------------------------------------------------------ shared values

export type ContentType = Schemas['ContentType']
export type DocumentStatus = Schemas['DocumentStatus']

// ------------------------------------------------------------------- request bodies (as sent)

export type MemoryIn = Schemas['MemoryIn']
export type RecallIn = Schemas['RecallIn']
export type RecallFilters = Schemas['RecallFiltersIn']
export type DocumentPatch = Schemas['DocumentPatchIn']
export type ProjectIn = Schemas['ProjectIn']
export type ProjectPatch = Schemas['ProjectPatchIn']
export type KeyCreateIn = Schemas['KeyCreateIn']
export type IndexIn = Schemas['IndexIn']
export type RefreshIn = Schemas['RefreshIn']
export type ContextIn = Schemas['ContextIn']
export type RetrieveIn = Schemas['RetrieveIn']

// -------------------------------------------------------------- responses (as the server sends)

/** GET /v3/whoami */
export type WhoAmI = Sent<Schemas['WhoAmIOut']>
/** A connection as POST /v3/connections/confirm answers it. */
export type ConnectionOut = Sent<Schemas['ConnectionOut']>
/** GET /v3/stats */
export type Stats = Sent<Schemas['StatsOut']>

/** GET, POST and PATCH /v3/projects… */
export type Project = Sent<Schemas['ProjectOut']>
/** GET /v3/projects */
export type ProjectList = Sent<Schemas['ProjectListOut']>
/** DELETE /v3/projects/{project_id} */
export type ProjectDeleted = Sent<Schemas['ProjectDeletedOut']>

/** POST /v3/memory */
export type MemoryOut = Sent<Schemas['MemoryOut']>
/** POST /v3/memories */
export type BulkMemoriesOut = Sent<Schemas['BulkMemoriesOut']>
/** POST /v3/context */
export type ContextOut = Sent<Schemas['ContextOut']>
export type ContextPiece = Sent<Schemas['ContextPiece']>
/** POST /retrieve */
export type RetrieveOut = Sent<Schemas['RetrieveOut']>
/** POST /v3/recall */
export type RecallOut = Sent<Schemas['RecallOut']>
export type RecalledDocument = Sent<Schemas['RecalledDocument']>
export type RecalledChunk = Sent<Schemas['RecalledChunk']>

/** GET and PATCH /v3/documents/{document_id} */
export type DocumentOut = Sent<Schemas['DocumentOut']>
export type Version = Sent<Schemas['VersionOut']>
export type FactInfo = Sent<Schemas['FactOut']>
export type Decision = Sent<Schemas['Decision']>
/** GET /v3/profile */
export type Profile = Sent<Schemas['ProfileOut']>
/** POST /v3/conversations */
export type ConversationIn = Schemas['ConversationIn']
export type ConversationOut = Sent<Schemas['ConversationOut']>
export type ConversationMessageIn = Schemas['MessageIn']
/** GET /v3/conversations/{conversation_id} */
export type ConversationMessages = Sent<Schemas['ConversationMessagesOut']>
export type ConversationMessage = Sent<Schemas['ConversationMessageOut']>
/** GET /v3/extractions/{extraction_id} */
export type Extraction = Sent<Schemas['ExtractionOut']>
/** DELETE /v3/documents/{document_id} */
export type DocumentDeleted = Sent<Schemas['DeletedOut']>
/** GET /v3/projects/{project_id}/documents */
export type DocumentList = Sent<Schemas['DocumentListOut']>
export type DocumentListItem = Sent<Schemas['DocumentListItem']>
/** GET /v3/documents/{document_id}/related */
export type RelatedList = Sent<Schemas['RelatedOut']>
export type RelatedDocument = Sent<Schemas['RelatedDocument']>

/** GET /v3/memory-graph */
export type MemoryGraph = Sent<Schemas['MemoryGraphOut']>
export type GraphNode = Sent<Schemas['GraphNode']>
export type GraphEdge = Sent<Schemas['GraphEdge']>

/** GET /v3/keys */
export type KeyList = Sent<Schemas['KeyListOut']>
export type ApiKeyInfo = Sent<Schemas['KeyOut']>
/** POST /v3/keys: the secret is shown once. */
export type KeyCreated = Sent<Schemas['KeyCreatedOut']>
/** DELETE /v3/keys/{key_id} */
export type KeyRevoked = Sent<Schemas['KeyRevokedOut']>

/** GET /v3/forgotten */
export type ForgottenList = Sent<Schemas['ForgottenOut']>
export type Forgotten = Sent<Schemas['ForgottenRecord']>

/** GET /v3/deletions/{receipt_id}: ids and counts only, never content. `verified` only when every
 * check is clean. */
export type DeletionReceipt = Sent<Schemas['DeletionReceipt']>
/** One store read back after a delete: what was read and what of the deleted documents it still holds. */
export type StoreCheck = Sent<Schemas['StoreCheck']>

/** GET /status (the docsets) */
export type DocsetStatus = Sent<Schemas['StatusOut']>
export type Docset = Sent<Schemas['DocsetOut']>
export type IndexStatus = Sent<Schemas['IndexStatusOut']>
/** GET /docset/{docset_id}/pages */
export type DocsetPages = Sent<Schemas['PagesOut']>
export type DocsetPage = Sent<Schemas['PageOut']>
/** POST /index */
export type Indexed = Sent<Schemas['IndexOut']>
/** POST /refresh */
export type Refreshed = Sent<Schemas['RefreshOut']>
/** DELETE /docset/{docset_id} */
export type DocsetDeleted = Sent<Schemas['DeleteOut']>
