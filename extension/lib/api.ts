/** memlane's REST API (/v3), as the service worker calls it, through the one client
 * (clients/typescript, @memlane/client): retries with backoff (spec §12.2: immediately, after 1 s,
 * after 2 s), errors classified so the outbox knows what to keep. */
import { endpoint, type Method, MemlaneClient, MemlaneError, MemlaneUnreachable } from '../../clients/typescript/src';

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

export { endpoint };

export function normalizeBaseUrl(raw: string): string {
  const url = new URL(raw.trim());
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the memlane URL must start with http:// or https://');
  url.hash = '';
  url.search = '';
  return url.toString().replace(/\/$/, '');
}

/** The outbox's view of a failure of the one client (@memlane/client): what kind, and whether to keep it. */
function classify(err: MemlaneError, conn: Connection): ApiError {
  if (err instanceof MemlaneUnreachable) {
    return new ApiError('unreachable', `memlane is not reachable at ${conn.url} (${err.reason})`);
  }
  const { status, error: message } = err;
  const retryAfterMs = err.retryAfterMs ?? 0;
  if (status === 401 || status === 403) return new ApiError('auth', message, status);
  if (serverSide(status, message)) return new ApiError('server', message, status, retryAfterMs);
  return new ApiError('rejected', message, status);
}

// 409 "still in progress" is the same save being handled: ask again; other 409s are final.
function serverSide(status: number, message: string): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500 || (status === 409 && /in progress/i.test(message));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One call through @memlane/client with the spec's retries (§12.2: immediately, after 1 s, after
 * 2 s, or as long as Retry-After asks up to 5 s), a network failure retried too. */
export async function call<T>(conn: Connection, method: string, path: string, options: CallOptions = {}): Promise<T> {
  const { body, idempotencyKey, attempts = 3, timeoutMs = 30_000, fetchImpl, sleep = defaultSleep } = options;
  const client = new MemlaneClient({
    baseUrl: conn.url,
    apiKey: conn.apiKey,
    timeoutMs,
    fetch: fetchImpl,
    sleep,
    retry: {
      maxRetries: attempts - 1,
      retryUnreachable: true,
      retryOn: ({ error }) => serverSide(error.status, error.error),
      delayMs: ({ attempt, error }) =>
        Math.max(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)], Math.min(error.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)),
    },
  });
  try {
    return await client.request<T>(method as Method, path, { body, idempotencyKey });
  } catch (err) {
    if (err instanceof MemlaneError) throw classify(err, conn);
    throw err;
  }
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
