// The memlane API as the app uses it: same origin (the local server, or CloudFront in front of
// API Gateway), the key in a header on every call (never a cookie, so no other site can make the
// browser act with it), errors as ApiError with the server's `{"error": "field: what is wrong"}`.
import { clearKey, getKey } from './auth'

// The API's shapes are generated from its OpenAPI document (clients/typescript, `make types`).
import type {
  ConnectionOut,
  ContentType,
  DeletionReceipt,
  Docset,
  DocsetDeleted,
  DocsetPages,
  DocsetStatus,
  DocumentDeleted,
  DocumentList,
  DocumentOut,
  DocumentPatch,
  ForgottenList,
  IndexIn,
  Indexed,
  KeyCreated,
  KeyCreateIn,
  KeyList,
  KeyRevoked,
  MemoryGraph,
  MemoryIn,
  MemoryOut,
  Project,
  ProjectDeleted,
  ProjectIn,
  ProjectList,
  ProjectPatch,
  Profile,
  RecallIn,
  RecallOut,
  Refreshed,
  RefreshIn,
  RelatedList,
  Stats,
  WhoAmI,
} from '../../clients/typescript/src'

export type {
  ApiKeyInfo,
  Decision,
  Profile,
  ConnectionOut,
  ContentType,
  DeletionReceipt,
  Docset,
  DocsetPage,
  DocumentList,
  DocumentListItem,
  DocumentOut,
  DocumentPatch,
  DocumentStatus,
  Forgotten,
  GraphEdge,
  GraphNode,
  IndexStatus,
  MemoryGraph,
  MemoryIn,
  MemoryOut,
  Project,
  RecalledChunk,
  RecalledDocument,
  RecallFilters,
  RecallIn,
  RecallOut,
  RelatedDocument,
  Stats,
  StoreCheck,
  Version,
  WhoAmI,
} from '../../clients/typescript/src'

// Every content type once, in the order the search filters show them: a type the API adds fails to compile here.
const CONTENT_TYPE_ORDER: Record<ContentType, true> = {
  text: true, markdown: true, html: true, pdf: true, image: true, video: true, audio: true, code: true, json: true,
  tweet: true, email: true, note: true,
}
export const CONTENT_TYPES = Object.keys(CONTENT_TYPE_ORDER) as ContentType[]

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** The server did not answer at all (down, or the network is): one banner says so, not every page. */
export class OfflineError extends Error {
  constructor() {
    super('Cannot reach memlane')
    this.name = 'OfflineError'
  }
}

// Whether the last request reached the server; the app shell shows the offline banner from it.
let offline = false
const offlineListeners = new Set<(offline: boolean) => void>()
function setOffline(value: boolean): void {
  if (offline === value) return
  offline = value
  offlineListeners.forEach((listener) => listener(value))
}
export function isOffline(): boolean {
  return offline
}
export function onOfflineChange(listener: (offline: boolean) => void): () => void {
  offlineListeners.add(listener)
  return () => offlineListeners.delete(listener)
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
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    })
  } catch (e) {
    if (signal?.aborted) throw e
    setOffline(true)
    throw new OfflineError()
  }
  setOffline(false)
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
  projects: () => request<ProjectList>('GET', '/v3/projects').then((r) => r.projects),
  project: (projectId: string) => request<Project>('GET', `/v3/projects/${id(projectId)}`),
  createProject: (name: string, description?: string) =>
    request<Project>('POST', '/v3/projects', { name, ...(description ? { description } : {}) } satisfies ProjectIn),
  updateProject: (projectId: string, patch: ProjectPatch) =>
    request<Project>('PATCH', `/v3/projects/${id(projectId)}`, patch),
  deleteProject: (projectId: string) => request<ProjectDeleted>('DELETE', `/v3/projects/${id(projectId)}`),
  projectDocuments: (projectId: string, limit: number, cursor?: string | null) =>
    request<DocumentList>('GET', `/v3/projects/${id(projectId)}/documents${q({ limit, cursor })}`),
  recall: (body: RecallIn, signal?: AbortSignal) => request<RecallOut>('POST', '/v3/recall', body, signal),
  save: (body: MemoryIn) => request<MemoryOut>('POST', '/v3/memory', body),
  document: (documentId: string) =>
    request<DocumentOut>('GET', `/v3/documents/${id(documentId)}?include_versions=true`),
  updateDocument: (documentId: string, patch: DocumentPatch) =>
    request<DocumentOut>('PATCH', `/v3/documents/${id(documentId)}`, patch),
  deleteDocument: (documentId: string) => request<DocumentDeleted>('DELETE', `/v3/documents/${id(documentId)}`),
  deletion: (receiptId: string) => request<DeletionReceipt>('GET', `/v3/deletions/${id(receiptId)}`),
  related: (documentId: string, limit = 5) =>
    request<RelatedList>('GET', `/v3/documents/${id(documentId)}/related${q({ limit })}`).then((r) => r.related),
  profile: (projectId?: string, subject?: string) =>
    request<Profile>('GET', `/v3/profile${q({ project_id: projectId, subject })}`),
  graph: (projectId?: string, maxNodes = 60) =>
    request<MemoryGraph>('GET', `/v3/memory-graph${q({ project_id: projectId, max_nodes: maxNodes, max_edges: 300 })}`),
  keys: () => request<KeyList>('GET', '/v3/keys').then((r) => r.keys),
  createKey: (name: string, canManageKeys: boolean) =>
    request<KeyCreated>('POST', '/v3/keys', { name, can_manage_keys: canManageKeys } satisfies KeyCreateIn),
  revokeKey: (keyId: string) => request<KeyRevoked>('DELETE', `/v3/keys/${id(keyId)}`),
  forgotten: (limit = 100) => request<ForgottenList>('GET', `/v3/forgotten${q({ limit })}`).then((r) => r.forgotten),
  docsets: () => request<DocsetStatus>('GET', '/status').then((r): Docset[] => r.docsets),
  docsetPages: (docsetId: string, limit = 50) =>
    request<DocsetPages>('GET', `/docset/${id(docsetId)}/pages${q({ limit })}`),
  refreshDocset: (docsetId: string) =>
    request<Refreshed>('POST', '/refresh', { docsetId, force: true } satisfies RefreshIn),
  deleteDocset: (docsetId: string) => request<DocsetDeleted>('DELETE', `/docset/${id(docsetId)}`),
  confirmConnection: (flow: string) => request<ConnectionOut>('POST', '/v3/connections/confirm', { flow }),
  indexDocset: (baseUrl: string, seedSlug: string, name?: string) =>
    request<Indexed>('POST', '/index', { baseUrl, seedSlug, ...(name ? { name } : {}) } satisfies IndexIn),
}
