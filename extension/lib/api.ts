/** memlane's REST API (/v3), as the service worker calls it: retries with backoff (spec §12.2:
 * immediately, after 1 s, after 2 s), errors classified so the outbox knows what to keep. */

export interface Connection {
  url: string;
  apiKey: string;
}

/** unreachable: network down or server not answering; server: 5xx/429; auth: the key is refused;
 * rejected: memlane refused the request itself (bad input, unknown project) and will again. */
export type ErrorKind = 'unreachable' | 'server' | 'auth' | 'rejected';

export class ApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly status = 0,
    readonly retryAfterMs = 0,
  ) {
    super(message);
  }

  /** Worth sending again later, unchanged. */
  get keep(): boolean {
    return this.kind !== 'rejected';
  }
}

export interface CallOptions {
  body?: unknown;
  idempotencyKey?: string;
  /** Total attempts; spec §12.2 uses 3. */
  attempts?: number;
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export const BACKOFF_MS = [1000, 2000];
const MAX_RETRY_AFTER_MS = 5000;

export function endpoint(base: string, path: string): string {
  const root = base.endsWith('/') ? base : `${base}/`;
  return new URL(path.replace(/^\//, ''), root).toString();
}

export function normalizeBaseUrl(raw: string): string {
  const url = new URL(raw.trim());
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the memlane URL must start with http:// or https://');
  url.hash = '';
  url.search = '';
  return url.toString().replace(/\/$/, '');
}

async function errorOf(response: Response): Promise<ApiError> {
  let message = `HTTP ${response.status}`;
  try {
    const data = (await response.json()) as { error?: unknown };
    if (typeof data?.error === 'string') message = data.error;
  } catch {
    // not JSON: keep the status line
  }
  const status = response.status;
  const retryAfter = Number(response.headers.get('Retry-After'));
  const retryAfterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 0;
  if (status === 401 || status === 403) return new ApiError('auth', message, status);
  // 409 "still in progress" is the same save being handled: ask again; other 409s are final.
  if (status === 408 || status === 425 || status === 429 || status >= 500 || (status === 409 && /in progress/i.test(message))) {
    return new ApiError('server', message, status, retryAfterMs);
  }
  return new ApiError('rejected', message, status);
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function call<T>(conn: Connection, method: string, path: string, options: CallOptions = {}): Promise<T> {
  const { body, idempotencyKey, attempts = 3, timeoutMs = 30_000, fetchImpl = fetch, sleep = defaultSleep } = options;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (conn.apiKey) headers.Authorization = `Bearer ${conn.apiKey}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  let last: ApiError | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) {
      const backoff = BACKOFF_MS[Math.min(attempt - 1, BACKOFF_MS.length - 1)];
      await sleep(Math.max(backoff, Math.min(last?.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
    }
    let response: Response;
    try {
      response = await fetchImpl(endpoint(conn.url, path), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        credentials: 'omit',
      });
    } catch (err) {
      last = new ApiError('unreachable', `memlane is not reachable at ${conn.url} (${(err as Error).message})`);
      continue;
    }
    if (response.ok) return (await response.json()) as T;
    last = await errorOf(response);
    if (last.kind !== 'server' && last.kind !== 'unreachable') throw last;
  }
  throw last ?? new ApiError('unreachable', `memlane is not reachable at ${conn.url}`);
}

// ----------------------------------------------------------------------------------- connection test

/** The server's refusal of a browser origin it does not know (memlane's origin check, a 403). */
const ORIGIN_REFUSED = /^origin not allowed/i;

export function allowOriginCommand(origin: string): string {
  return `memlane serve --allow-origin ${origin}`;
}

/** "Test connection": the key (GET /v3/whoami), then a search sent exactly as quick search sends
 * it (a POST from the service worker, so the browser adds this extension's Origin header as it
 * does to every save and search). A server that refuses the origin says so with the command
 * that allows it, rather than "Connected" followed by failing searches. */
export async function testConnection(
  conn: Connection,
  origin: string,
  options: Pick<CallOptions, 'fetchImpl' | 'sleep'> = {},
): Promise<WhoAmI> {
  const once = { attempts: 1, timeoutMs: 10_000, ...options };
  try {
    const who = await call<WhoAmI>(conn, 'GET', '/v3/whoami', once);
    await call(conn, 'POST', '/v3/recall', { ...once, body: { query: '', limit: 1 } });
    return who;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403 && ORIGIN_REFUSED.test(err.message)) {
      throw new ApiError(
        'auth',
        `memlane refuses requests from this extension (${origin}). Start it with: ${allowOriginCommand(origin)}`,
        403,
      );
    }
    throw err;
  }
}

// ----------------------------------------------------------------------------------- shapes
// Generated from memlane's OpenAPI document (clients/typescript, `make types`).

import type { MemoryIn, WhoAmI } from '../../clients/typescript/src';

/** POST /v3/memory as the extension sends it: metadata always says what saved it (saved_with). */
export type MemoryBody = MemoryIn & { metadata: Record<string, unknown> };

export type {
  DocumentOut,
  MemoryOut,
  Project,
  ProjectList,
  RecallIn,
  RecallOut,
  RecalledDocument,
  WhoAmI,
} from '../../clients/typescript/src';
