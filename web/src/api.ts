// The memlane API as the app uses it, through @memlane/client: same origin (the local server, or CloudFront in front of
// API Gateway), the key in a header on every call (never a cookie, so no other site can make the
// browser act with it), errors as ApiError with the server's `{"error": "field: what is wrong"}`.
import { getKey, reasonOfRefusal, signOut } from './auth'

// The API's shapes are generated from its OpenAPI document, and its calls made by the one client
// (clients/typescript, `@memlane/client`; `make types`).
import {
  type ContentType,
  type Docset,
  type DocumentPatch,
  MemlaneClient,
  MemlaneError,
  MemlaneUnreachable,
  type MemoryIn,
  type ProjectPatch,
  type RecallIn,
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

// The one API client (clients/typescript): same origin, the key read at every request, no retries
// (a person is waiting; the page shows the error), no fetch cache, no referrer.
const client = new MemlaneClient({
  baseUrl: '',
  apiKey: getKey,
  timeoutMs: 0,
  retry: { maxRetries: 0 },
  init: { cache: 'no-store', referrerPolicy: 'no-referrer' },
})

/** The app's errors around the client's: ApiError with the server's message, OfflineError when no
 * answer came (the offline banner), and a refused key signs the app out. */
async function call<T>(send: (client: MemlaneClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  const key = getKey()
  try {
    const out = await send(client)
    setOffline(false)
    return out
  } catch (e) {
    if (signal?.aborted || !(e instanceof MemlaneError)) throw e
    if (e instanceof MemlaneUnreachable) {
      setOffline(true)
      throw new OfflineError()
    }
    setOffline(false)
    if (e.status === 401 && key) {
      signOut(reasonOfRefusal(e.error))
      onUnauthorized()
    }
    throw new ApiError(e.status, e.error)
  }
}

export function request<T>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  return call((c) => c.request<T>(method, path, { body, signal }), signal)
}

export const api = {
  whoami: () => call((c) => c.whoami()),
  stats: () => call((c) => c.stats()),
  projects: () => call((c) => c.projects()).then((r) => r.projects),
  project: (projectId: string) => call((c) => c.project(projectId)),
  createProject: (name: string, description?: string) =>
    call((c) => c.createProject({ name, ...(description ? { description } : {}) })),
  updateProject: (projectId: string, patch: ProjectPatch) => call((c) => c.updateProject(projectId, patch)),
  deleteProject: (projectId: string) => call((c) => c.deleteProject(projectId)),
  projectDocuments: (projectId: string, limit: number, cursor?: string | null) =>
    call((c) => c.projectDocuments(projectId, { limit, cursor })),
  recall: (body: RecallIn, signal?: AbortSignal) => call((c) => c.recall(body.query ?? '', { ...body, signal }), signal),
  save: (body: MemoryIn) => call((c) => c.save(body)),
  document: (documentId: string) => call((c) => c.document(documentId, { includeVersions: true })),
  updateDocument: (documentId: string, patch: DocumentPatch) => call((c) => c.updateDocument(documentId, patch)),
  deleteDocument: (documentId: string) => call((c) => c.deleteDocument(documentId)),
  deletion: (receiptId: string) => call((c) => c.deletion(receiptId)),
  related: (documentId: string, limit = 5) => call((c) => c.related(documentId, limit)).then((r) => r.related),
  graph: (projectId?: string, maxNodes = 60) => call((c) => c.memoryGraph({ projectId, maxNodes, maxEdges: 300 })),
  profile: (projectId?: string, subject?: string) => call((c) => c.profile({ projectId, subject })),
  keys: () => call((c) => c.keys()).then((r) => r.keys),
  createKey: (name: string, canManageKeys: boolean) =>
    call((c) => c.createKey({ name, can_manage_keys: canManageKeys })),
  revokeKey: (keyId: string) => call((c) => c.revokeKey(keyId)),
  forgotten: (limit = 100) => call((c) => c.forgotten(limit)).then((r) => r.forgotten),
  docsets: () => call((c) => c.docsets()).then((r): Docset[] => r.docsets),
  docsetPages: (docsetId: string, limit = 50) => call((c) => c.docsetPages(docsetId, { limit })),
  refreshDocset: (docsetId: string) => call((c) => c.refreshDocs({ docsetId, force: true })),
  deleteDocset: (docsetId: string) => call((c) => c.deleteDocset(docsetId)),
  confirmConnection: (flow: string) => call((c) => c.confirmConnection(flow)),
  indexDocset: (baseUrl: string, seedSlug: string, name?: string) =>
    call((c) => c.indexDocs({ baseUrl, seedSlug, ...(name ? { name } : {}) })),
}
