// memlane's HTTP API over fetch (Node 20+, browsers, extension service workers). One way out,
// `request`; the typed methods name the routes. 429 and 5xx answers are sent again with backoff,
// waiting at least what Retry-After asks; every save carries an Idempotency-Key, so a retried save
// is stored once. Errors are MemlaneError with the server's `{"error": ...}` text, or
// MemlaneUnreachable when no answer came.
import type {
  ContextIn,
  ContextOut,
  ConversationIn,
  ConversationMessage,
  ConversationMessages,
  ConversationOut,
  Extraction,
  Profile,
  DeletionReceipt,
  DocsetDeleted,
  DocsetPage,
  DocsetPages,
  DocsetStatus,
  DocumentDeleted,
  DocumentList,
  DocumentListItem,
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
  RecallIn,
  RecallOut,
  Refreshed,
  RefreshIn,
  RelatedList,
  Stats,
  WhoAmI,
  ConnectionOut,
  BulkMemoriesOut,
  RetrieveIn,
  RetrieveOut,
} from './types.js'
import { API_VERSION } from './version.js'

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
export type Query = Record<string, string | number | boolean | null | undefined>

/** The server answered with an HTTP error: `status`, the server's `error` text (or the start of a
 * body that was not memlane's JSON), the decoded `body`, and Retry-After in ms when it sent one. */
export class MemlaneError extends Error {
  readonly status: number
  readonly error: string
  readonly body: unknown
  readonly retryAfterMs: number | null

  constructor(status: number, error: string, body: unknown = null, retryAfterMs: number | null = null) {
    super(error)
    this.name = 'MemlaneError'
    this.status = status
    this.error = error
    this.body = body
    this.retryAfterMs = retryAfterMs
  }
}

/** No answer: the server could not be reached, or did not answer within the timeout (status 0). */
export class MemlaneUnreachable extends MemlaneError {
  readonly url: string
  readonly reason: string

  constructor(url: string, reason: string) {
    super(0, `cannot reach memlane at ${url || 'this origin'}: ${reason}`)
    this.name = 'MemlaneUnreachable'
    this.url = url
    this.reason = reason
  }
}

/** What a retry decision sees: the error of the attempt that just failed. */
export interface RetryContext {
  attempt: number
  error: MemlaneError
  /** The request carried an Idempotency-Key (a save): a 409 "in progress" is the same save. */
  idempotent: boolean
}

export interface RetryOptions {
  /** Attempts after the first (default 2; 0 never retries). */
  maxRetries?: number
  /** Whether this failure is worth sending again (default: 429, 500, 502, 503, 504, and a save's
   * 409 "still in progress"; no answer at all only with `retryUnreachable`). */
  retryOn?: (context: RetryContext) => boolean
  /** Send again after no answer (default false: a down server is reported at once). */
  retryUnreachable?: boolean
  /** Milliseconds before the next attempt, or null to give up (default: full-jitter backoff from
   * 500 ms, at most 8 s, never less than Retry-After; a Retry-After over 60 s gives up). */
  delayMs?: (context: RetryContext) => number | null
}

export interface ClientOptions {
  /** The API's base URL; '' for the page's own origin (the web app). */
  baseUrl?: string
  /** Sent as a Bearer token; a function is asked on every request (a key that can change). */
  apiKey?: string | null | (() => string | null | undefined)
  /** Per attempt, in ms (default 60 000; 0: none). */
  timeoutMs?: number
  retry?: RetryOptions
  /** Defaults to the global fetch, looked up at each call (so tests may replace it). */
  fetch?: typeof fetch
  sleep?: (ms: number) => Promise<void>
  headers?: Record<string, string>
  /** Extra fetch options on every request (cache, referrerPolicy, …); credentials are always omitted. */
  init?: Omit<RequestInit, 'method' | 'headers' | 'body' | 'signal'>
}

export interface RequestOptions {
  body?: unknown
  query?: Query
  headers?: Record<string, string>
  idempotencyKey?: string
  signal?: AbortSignal
}

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504])

export function defaultRetryOn({ error, idempotent }: RetryContext): boolean {
  if (RETRY_STATUSES.has(error.status)) return true
  return idempotent && error.status === 409 && /in progress/i.test(error.error)
}

export function defaultDelayMs({ attempt, error }: RetryContext): number | null {
  const backoff = Math.random() * Math.min(8000, 500 * 2 ** attempt)
  if (error.retryAfterMs === null) return backoff
  if (error.retryAfterMs > 60_000) return null
  return Math.max(error.retryAfterMs, backoff)
}

/** Retry-After in ms: seconds, or an HTTP date. */
export function parseRetryAfter(value: string | null): number | null {
  if (!value) return null
  const seconds = Number(value.trim())
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const when = Date.parse(value)
  return Number.isNaN(when) ? null : Math.max(0, when - Date.now())
}

export function newIdempotencyKey(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto
  if (c?.randomUUID) return c.randomUUID()
  const bytes = new Uint8Array(16)
  if (c?.getRandomValues) c.getRandomValues(bytes)
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** `path` joined onto `base` (a base with a stage path keeps it: …/prod + /v3/recall). */
export function endpoint(base: string, path: string): string {
  if (!base) return path
  const root = base.endsWith('/') ? base : `${base}/`
  return new URL(path.replace(/^\//, ''), root).toString()
}

export function queryString(params: Query | undefined): string {
  if (!params) return ''
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v))
  const s = search.toString()
  return s ? `?${s}` : ''
}

const seg = (value: string): string => encodeURIComponent(value)
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function timeoutSignal(ms: number, signal?: AbortSignal): AbortSignal | undefined {
  if (!ms || typeof AbortSignal.timeout !== 'function') return signal
  const timer = AbortSignal.timeout(ms)
  if (!signal) return timer
  return typeof AbortSignal.any === 'function' ? AbortSignal.any([signal, timer]) : signal
}

function errorText(status: number, payload: unknown, text: string): string {
  if (payload && typeof payload === 'object' && typeof (payload as { error?: unknown }).error === 'string') {
    return (payload as { error: string }).error
  }
  return text.trim().slice(0, 500) || `HTTP ${status}`
}

/** A memory's kind: a note (`memory`), a conversation's `message`, or a `fact` drawn from messages. */
export type MemoryKind = NonNullable<NonNullable<RecallIn['filters']>['kind']>[number]
/** A recall: the query and any other RecallIn field; `kind` (joins `filters.kind`) and `asOf` (what was
 * current then, facts superseded since included) as shorthands. */
export type RecallOptions = Omit<RecallIn, 'query'> & {
  kind?: MemoryKind | MemoryKind[]
  asOf?: string | Date
  signal?: AbortSignal
}
/** A save of `content` with any other MemoryIn field, and `tags` (merged into metadata by the server). */
export type RememberOptions = Omit<MemoryIn, 'content'> & { idempotencyKey?: string }

export class MemlaneClient {
  /** The version of memlane's API the types were generated from. */
  static readonly apiVersion = API_VERSION
  readonly baseUrl: string
  private readonly options: ClientOptions

  constructor(options: ClientOptions = {}) {
    this.options = options
    this.baseUrl = (options.baseUrl ?? '').replace(/\/$/, '')
  }

  private key(): string | null | undefined {
    const k = this.options.apiKey
    return typeof k === 'function' ? k() : k
  }

  /** The decoded JSON answer ({} for an empty one). */
  async request<T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
    const { body, query, idempotencyKey, signal } = options
    const retry = this.options.retry ?? {}
    const maxRetries = retry.maxRetries ?? 2
    const retryOn = retry.retryOn ?? defaultRetryOn
    const delayMs = retry.delayMs ?? defaultDelayMs
    const doFetch = this.options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init))
    const sleep = this.options.sleep ?? defaultSleep
    const url = endpoint(this.baseUrl, path) + queryString(query)
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Accept: 'application/json', ...this.options.headers, ...options.headers }
      const key = this.key()
      if (key) headers.Authorization = `Bearer ${key}`
      if (body !== undefined) headers['Content-Type'] = 'application/json'
      if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey
      let error: MemlaneError
      try {
        const response = await doFetch(url, {
          ...this.options.init,
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: timeoutSignal(this.options.timeoutMs ?? 60_000, signal),
          credentials: 'omit',
        })
        const text = await response.text()
        let payload: unknown = null
        try {
          payload = text ? JSON.parse(text) : null
        } catch {
          payload = text
        }
        if (response.ok) return (payload ?? {}) as T
        error = new MemlaneError(response.status, errorText(response.status, payload, text), payload,
          parseRetryAfter(response.headers.get('Retry-After')))
      } catch (e) {
        if (signal?.aborted) throw e // the caller cancelled: not a failure of memlane
        if (e instanceof MemlaneError) throw e
        error = new MemlaneUnreachable(this.baseUrl, (e as Error)?.message || String(e))
      }
      const context: RetryContext = { attempt, error, idempotent: Boolean(idempotencyKey) }
      const unreachable = error instanceof MemlaneUnreachable
      const worth = unreachable ? Boolean(retry.retryUnreachable) : retryOn(context)
      const wait = attempt < maxRetries && worth ? delayMs(context) : null
      if (wait === null) throw error
      await sleep(wait)
    }
  }

  // ------------------------------------------------------------------------------ memories

  /** POST /v3/memory, with an Idempotency-Key (a new one unless given). */
  save(body: MemoryIn, options: { idempotencyKey?: string } = {}): Promise<MemoryOut> {
    return this.request('POST', '/v3/memory', { body, idempotencyKey: options.idempotencyKey ?? newIdempotencyKey() })
  }

  remember(content: string, options: RememberOptions = {}): Promise<MemoryOut> {
    const { idempotencyKey, ...fields } = options
    return this.save({ ...fields, content }, { idempotencyKey })
  }

  /** POST /v3/memories: up to 100 saves, each answered on its own. */
  saveMany(items: MemoryIn[]): Promise<BulkMemoriesOut> {
    return this.request('POST', '/v3/memories', { body: { items } })
  }

  recall(query: string, options: RecallOptions = {}): Promise<RecallOut> {
    const { signal, kind, asOf, ...fields } = options
    const body: RecallIn = { ...fields, query }
    if (kind !== undefined) body.filters = { ...fields.filters, kind: Array.isArray(kind) ? kind : [kind] }
    if (asOf !== undefined) body.as_of = asOf instanceof Date ? asOf.toISOString() : asOf
    return this.request('POST', '/v3/recall', { body, signal })
  }

  /** POST /v3/context: memories and documentation for `query`, packed best first into `budget`. */
  contextPack(query: string, options: Omit<ContextIn, 'query'> = {}): Promise<ContextOut> {
    return this.request('POST', '/v3/context', { body: { ...options, query } satisfies ContextIn })
  }

  document(documentId: string, options: { includeVersions?: boolean } = {}): Promise<DocumentOut> {
    return this.request('GET', `/v3/documents/${seg(documentId)}`,
      { query: { include_versions: options.includeVersions ? 'true' : undefined } })
  }

  updateDocument(documentId: string, patch: DocumentPatch): Promise<DocumentOut> {
    return this.request('PATCH', `/v3/documents/${seg(documentId)}`, { body: patch })
  }

  deleteDocument(documentId: string): Promise<DocumentDeleted> {
    return this.request('DELETE', `/v3/documents/${seg(documentId)}`)
  }

  related(documentId: string, limit?: number): Promise<RelatedList> {
    return this.request('GET', `/v3/documents/${seg(documentId)}/related`, { query: { limit } })
  }

  deletion(receiptId: string): Promise<DeletionReceipt> {
    return this.request('GET', `/v3/deletions/${seg(receiptId)}`)
  }

  memoryGraph(options: { projectId?: string; maxNodes?: number; maxEdges?: number } = {}): Promise<MemoryGraph> {
    return this.request('GET', '/v3/memory-graph',
      { query: { project_id: options.projectId, max_nodes: options.maxNodes, max_edges: options.maxEdges } })
  }

  /** POST /v3/conversations: every message saved; facts drawn off the request path when the server
   * has an LLM (`extraction` says whether, and why not). Sent with an Idempotency-Key (a new one
   * unless given), so a retry after a lost answer saves no message twice and queues one extraction. */
  saveConversation(body: ConversationIn, options: { idempotencyKey?: string } = {}): Promise<ConversationOut> {
    return this.request('POST', '/v3/conversations',
      { body, idempotencyKey: options.idempotencyKey ?? newIdempotencyKey() })
  }

  /** GET /v3/conversations/{id}: one page of its messages in order (`next_cursor`: the next page's).
   * A 404 MemlaneError when the project holds no message of it. */
  conversation(conversationId: string,
    options: { projectId?: string; limit?: number; cursor?: string } = {}): Promise<ConversationMessages> {
    const query = { project_id: options.projectId, limit: options.limit, cursor: options.cursor }
    // an id with a `/` is never a path segment (even encoded, behind most proxies): the query form takes any
    if (conversationId.includes('/')) return this.request('GET', '/v3/conversations', { query: { ...query, conversation_id: conversationId } })
    return this.request('GET', `/v3/conversations/${seg(conversationId)}`, { query })
  }

  /** Every message of a conversation, in order, a page at a time. */
  async *iterConversation(conversationId: string,
    options: { projectId?: string; pageSize?: number } = {}): AsyncGenerator<ConversationMessage> {
    let cursor: string | undefined
    do {
      const page = await this.conversation(conversationId,
        { projectId: options.projectId, limit: options.pageSize ?? 100, cursor })
      yield* page.messages
      cursor = page.next_cursor ?? undefined
    } while (cursor)
  }

  extraction(extractionId: string): Promise<Extraction> {
    return this.request('GET', `/v3/extractions/${seg(extractionId)}`)
  }

  profile(options: { projectId?: string; subject?: string } = {}): Promise<Profile> {
    return this.request('GET', '/v3/profile', { query: { project_id: options.projectId, subject: options.subject } })
  }

  forgotten(limit?: number): Promise<ForgottenList> {
    return this.request('GET', '/v3/forgotten', { query: { limit } })
  }

  stats(): Promise<Stats> {
    return this.request('GET', '/v3/stats')
  }

  // ------------------------------------------------------------------------------ projects

  projects(): Promise<ProjectList> {
    return this.request('GET', '/v3/projects')
  }

  project(projectId: string): Promise<Project> {
    return this.request('GET', `/v3/projects/${seg(projectId)}`)
  }

  createProject(body: ProjectIn): Promise<Project> {
    return this.request('POST', '/v3/projects', { body })
  }

  updateProject(projectId: string, patch: ProjectPatch): Promise<Project> {
    return this.request('PATCH', `/v3/projects/${seg(projectId)}`, { body: patch })
  }

  deleteProject(projectId: string): Promise<ProjectDeleted> {
    return this.request('DELETE', `/v3/projects/${seg(projectId)}`)
  }

  /** One page of a project's documents, newest first (`next_cursor`: the next page). */
  projectDocuments(projectId: string, options: { limit?: number; cursor?: string | null; includeVersions?: boolean } = {}):
    Promise<DocumentList> {
    return this.request('GET', `/v3/projects/${seg(projectId)}/documents`, {
      query: { limit: options.limit, cursor: options.cursor, include_versions: options.includeVersions ? 'true' : undefined },
    })
  }

  /** Every document of a project, newest first, a page at a time. */
  async *iterProjectDocuments(projectId: string, options: { pageSize?: number } = {}): AsyncGenerator<DocumentListItem> {
    let cursor: string | null = null
    do {
      const page: DocumentList = await this.projectDocuments(projectId, { limit: options.pageSize ?? 100, cursor })
      yield* page.documents
      cursor = page.next_cursor
    } while (cursor)
  }

  // ------------------------------------------------------------------------------ identity and keys

  whoami(): Promise<WhoAmI> {
    return this.request('GET', '/v3/whoami')
  }

  keys(): Promise<KeyList> {
    return this.request('GET', '/v3/keys')
  }

  createKey(body: KeyCreateIn): Promise<KeyCreated> {
    return this.request('POST', '/v3/keys', { body })
  }

  revokeKey(keyId: string): Promise<KeyRevoked> {
    return this.request('DELETE', `/v3/keys/${seg(keyId)}`)
  }

  confirmConnection(flow: string): Promise<ConnectionOut> {
    return this.request('POST', '/v3/connections/confirm', { body: { flow } })
  }

  // ------------------------------------------------------------------------------ documentation sets

  docsets(): Promise<DocsetStatus> {
    return this.request('GET', '/status')
  }

  docsetPages(docsetId: string, options: { limit?: number; offset?: number; status?: string } = {}): Promise<DocsetPages> {
    return this.request('GET', `/docset/${seg(docsetId)}/pages`,
      { query: { limit: options.limit, offset: options.offset, status: options.status } })
  }

  /** Every crawled page of a docset, a page of results at a time. */
  async *iterDocsetPages(docsetId: string, options: { pageSize?: number; status?: string } = {}): AsyncGenerator<DocsetPage> {
    let offset = 0
    for (;;) {
      const page = await this.docsetPages(docsetId, { limit: options.pageSize ?? 100, offset, status: options.status })
      yield* page.pages
      offset += page.pages.length
      if (!page.pages.length || offset >= page.total) return
    }
  }

  indexDocs(body: IndexIn): Promise<Indexed> {
    return this.request('POST', '/index', { body })
  }

  retrieveDocs(body: RetrieveIn): Promise<RetrieveOut> {
    return this.request('POST', '/retrieve', { body })
  }

  refreshDocs(body: RefreshIn): Promise<Refreshed> {
    return this.request('POST', '/refresh', { body })
  }

  deleteDocset(docsetId: string): Promise<DocsetDeleted> {
    return this.request('DELETE', `/docset/${seg(docsetId)}`)
  }

  // ------------------------------------------------------------------------------ MCP tools

  /** One of memlane's MCP tools, run by the server through POST /mcp (stateless: no session). */
  async mcpCall(name: string, args: Record<string, unknown> = {}): Promise<McpToolResult> {
    const answer = await this.request<{ result?: McpToolResult; error?: { message?: string } }>('POST', '/mcp', {
      body: { jsonrpc: '2.0', id: newIdempotencyKey(), method: 'tools/call', params: { name, arguments: args } },
      headers: { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
    })
    if (answer.error) throw new MemlaneError(200, answer.error.message ?? 'MCP error', answer)
    return answer.result ?? { content: [] }
  }
}

export interface McpToolResult {
  content: { type: string; text?: string }[]
  structuredContent?: Record<string, unknown>
  isError?: boolean
}
