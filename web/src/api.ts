// The memlane API as the app uses it: same origin (the local server, or CloudFront in front of
// API Gateway), the key in a header on every call (never a cookie, so no other site can make the
// browser act with it), errors as ApiError with the server's `{"error": "field: what is wrong"}`.
import { clearKey, getKey } from './auth'

export type ContentType =
  | 'text' | 'markdown' | 'html' | 'pdf' | 'image' | 'video' | 'code' | 'json' | 'tweet' | 'email' | 'note'
export const CONTENT_TYPES: ContentType[] = [
  'text', 'markdown', 'html', 'pdf', 'image', 'video', 'code', 'json', 'tweet', 'email', 'note',
]
export type DocumentStatus = 'queued' | 'processing' | 'ready' | 'failed'

export interface WhoAmI {
  user_id: string
  organization_id: string
  organization_name: string
  key_id: string
  can_manage_keys: boolean
}
export interface Project {
  id: string
  name: string
  slug: string
  description: string | null
  document_count: number
  is_default: boolean
  created_at: string
}
export interface Stats {
  total_memories: number
  memories_this_week: number
  storage_bytes: number
  project_count: number
}
export interface RecalledChunk {
  memory_id: string
  content: string
  chunk_index: number
  score: number
  heading_path: string[]
}
export interface RecalledDocument {
  document_id: string
  title: string
  summary: string | null
  score: number
  source_url: string | null
  content_type: ContentType
  created_at: string
  project_id: string
  chunks: RecalledChunk[]
}
export interface RecallOut {
  results: RecalledDocument[]
  total: number
  query_time_ms: number
}
export interface RecallFilters {
  content_type?: ContentType[]
  tags?: string[]
  created_after?: string
}
export interface RecallIn {
  query: string
  project_ids?: string[]
  limit?: number
  filters?: RecallFilters
}
export interface Version {
  id: string
  title: string
  created_at: string
  summary: string | null
}
export interface DocumentOut {
  id: string
  project_id: string
  title: string
  content: string
  summary: string | null
  content_type: ContentType
  source_url: string | null
  metadata: Record<string, unknown>
  updates_memory_id: string | null
  forget_after: string | null
  created_at: string
  updated_at: string
  last_accessed_at: string | null
  status: DocumentStatus
  status_reason: string | null
  chunk_count: number
  superseded_by: string | null
  versions: Version[] | null
}
export interface DocumentListItem {
  id: string
  project_id: string
  title: string
  summary: string | null
  content_type: ContentType
  source_url: string | null
  tags: string[]
  status: DocumentStatus
  created_at: string
  updated_at: string
  forget_after: string | null
  updates_memory_id: string | null
  superseded_by: string | null
}
export interface DocumentList {
  documents: DocumentListItem[]
  next_cursor: string | null
}
export interface RelatedDocument {
  document_id: string
  title: string
  summary: string | null
  score: number
  content_type: ContentType
  project_id: string
  created_at: string
}
export interface MemoryIn {
  content: string
  title?: string
  project_id?: string
  source_url?: string
  metadata?: Record<string, unknown>
  updates_memory_id?: string
  forget_after?: string
}
export interface MemoryOut {
  id: string
  title: string
  status: DocumentStatus
  duplicate: boolean
  project_id: string
}
export interface DocumentPatch {
  title?: string
  tags?: string[]
  forget_after?: string | null
}
export interface GraphNode {
  id: string
  label: string
  type: string
  document_count: number
}
export interface GraphEdge {
  source: string
  target: string
  relation: string
  weight: number
}
export interface MemoryGraph {
  nodes: GraphNode[]
  edges: GraphEdge[]
}
export interface ApiKeyInfo {
  id: string
  name: string
  prefix: string
  created_at: string
  revoked_at: string | null
  active: boolean
  can_manage_keys: boolean
}
export interface Forgotten {
  document_id: string
  project_id: string
  forgotten_at: string
  reason: string
}
export interface IndexStatus {
  totalPages: number
  indexedPages: number
  pendingPages: number
  errorPages: number
  skippedPages: number
  totalChunks: number
  status: string
}
export interface Docset {
  id: string
  name: string
  baseUrl: string
  seedSlug: string
  createdAt: number
  updatedAt: number
  status: string
  indexStatus: IndexStatus
}
export interface DocsetPage {
  id: string
  url: string
  title: string | null
  status: string
  errorMessage?: string | null
}

/** One store read back after a delete: what was read and what of the deleted documents it still holds. */
export interface StoreCheck {
  store: string
  read: string
  remaining: number
  holding: string[]
  clean: boolean
}
/** GET /v3/deletions/{id}: ids and counts only, never content. `verified` only when every check is clean. */
export interface DeletionReceipt {
  id: string
  reason: string
  subject: string | null
  documents: string[]
  requested_at: string
  verified_at: string
  verified: boolean
  checks: StoreCheck[]
}

/** A connection as POST /v3/connections/confirm answers it (the fields the confirmation page shows). */
export interface ConnectionOut {
  id: string
  provider: string
  name: string
  status: string
  account: string | null
}

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

// Called when the server says the key is no longer valid (revoked, or wrong): the app signs out.
let onUnauthorized: () => void = () => {}
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler
}

export async function request<T>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const key = getKey()
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (key) headers.Authorization = `Bearer ${key}`
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  })
  const text = await response.text()
  let payload: unknown = null
  try {
    payload = text ? JSON.parse(text) : null
  } catch {
    payload = null
  }
  if (!response.ok) {
    const message =
      payload && typeof payload === 'object' && 'error' in payload ? String((payload as { error: unknown }).error) : `HTTP ${response.status}`
    if (response.status === 401 && key) {
      clearKey()
      onUnauthorized()
    }
    throw new ApiError(response.status, message)
  }
  return payload as T
}

const q = (params: Record<string, string | number | boolean | undefined | null>): string => {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v))
  const s = search.toString()
  return s ? `?${s}` : ''
}
const id = (value: string): string => encodeURIComponent(value)

export const api = {
  whoami: () => request<WhoAmI>('GET', '/v3/whoami'),
  stats: () => request<Stats>('GET', '/v3/stats'),
  projects: () => request<{ projects: Project[] }>('GET', '/v3/projects').then((r) => r.projects),
  project: (projectId: string) => request<Project>('GET', `/v3/projects/${id(projectId)}`),
  createProject: (name: string, description?: string) =>
    request<Project>('POST', '/v3/projects', { name, ...(description ? { description } : {}) }),
  updateProject: (projectId: string, patch: { name?: string; description?: string | null }) =>
    request<Project>('PATCH', `/v3/projects/${id(projectId)}`, patch),
  deleteProject: (projectId: string) =>
    request<{ id: string; deleted: boolean; documents_deleted: number; receipt: DeletionReceipt }>(
      'DELETE',
      `/v3/projects/${id(projectId)}`,
    ),
  projectDocuments: (projectId: string, limit: number, cursor?: string | null) =>
    request<DocumentList>('GET', `/v3/projects/${id(projectId)}/documents${q({ limit, cursor })}`),
  recall: (body: RecallIn, signal?: AbortSignal) => request<RecallOut>('POST', '/v3/recall', body, signal),
  save: (body: MemoryIn) => request<MemoryOut>('POST', '/v3/memory', body),
  document: (documentId: string) =>
    request<DocumentOut>('GET', `/v3/documents/${id(documentId)}?include_versions=true`),
  updateDocument: (documentId: string, patch: DocumentPatch) =>
    request<DocumentOut>('PATCH', `/v3/documents/${id(documentId)}`, patch),
  deleteDocument: (documentId: string) =>
    request<{ id: string; deleted: boolean; receipt: DeletionReceipt }>('DELETE', `/v3/documents/${id(documentId)}`),
  deletion: (receiptId: string) => request<DeletionReceipt>('GET', `/v3/deletions/${id(receiptId)}`),
  related: (documentId: string, limit = 5) =>
    request<{ related: RelatedDocument[] }>('GET', `/v3/documents/${id(documentId)}/related${q({ limit })}`).then(
      (r) => r.related,
    ),
  graph: (projectId?: string, maxNodes = 60) =>
    request<MemoryGraph>('GET', `/v3/memory-graph${q({ project_id: projectId, max_nodes: maxNodes, max_edges: 300 })}`),
  keys: () => request<{ keys: ApiKeyInfo[] }>('GET', '/v3/keys').then((r) => r.keys),
  createKey: (name: string, canManageKeys: boolean) =>
    request<{ key: ApiKeyInfo; secret: string }>('POST', '/v3/keys', { name, can_manage_keys: canManageKeys }),
  revokeKey: (keyId: string) => request<{ revoked: boolean }>('DELETE', `/v3/keys/${id(keyId)}`),
  forgotten: (limit = 100) =>
    request<{ forgotten: Forgotten[] }>('GET', `/v3/forgotten${q({ limit })}`).then((r) => r.forgotten),
  docsets: () => request<{ docsets: Docset[] }>('GET', '/status').then((r) => r.docsets),
  docsetPages: (docsetId: string, limit = 50) =>
    request<{ pages: DocsetPage[]; total: number }>('GET', `/docset/${id(docsetId)}/pages${q({ limit })}`),
  refreshDocset: (docsetId: string) =>
    request<{ message: string; refreshed: boolean }>('POST', '/refresh', { docsetId, force: true }),
  deleteDocset: (docsetId: string) =>
    request<{ success: boolean; receiptId: string | null; verified: boolean | null }>('DELETE', `/docset/${id(docsetId)}`),
  confirmConnection: (flow: string) => request<ConnectionOut>('POST', '/v3/connections/confirm', { flow }),
  indexDocset: (baseUrl: string, seedSlug: string, name?: string) =>
    request<{ docsetId: string; status: string }>('POST', '/index', { baseUrl, seedSlug, ...(name ? { name } : {}) }),
}
