/** memlane's REST API (/v3), as the service worker calls it, through the one client
 * (clients/typescript, @memlane/client): retries with backoff (spec §12.2: immediately, after 1 s,
 * after 2 s), errors classified so the outbox knows what to keep. */
import { endpoint, type Method, MemlaneClient, MemlaneError, MemlaneUnreachable } from '../../clients/typescript/src';

export interface Connection {
  url: string;
  apiKey: string;
  /** This extension's origin (chrome-extension://<id>), named in the command that allows it. */
  origin?: string;
}

/** unreachable: network down or server not answering; server: 5xx/429; auth: the key is refused;
 * origin: memlane refuses this extension's origin; setup: no key yet, no permission for the URL, or
 * the URL answers but is not memlane; rejected: memlane refused the request itself (bad input,
 * unknown project) and will again. Only `rejected` is final: the others are fixed by the user or
 * by time, and a save waits for them. */
export type ErrorKind = 'unreachable' | 'server' | 'auth' | 'origin' | 'setup' | 'rejected';

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
  const text = raw.trim();
  if (!text) throw new Error('the memlane URL is empty: enter it as http://127.0.0.1:7432 (the local server) or https://…');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`the memlane URL "${text}" is not a web address: enter it as http://127.0.0.1:7432 or https://…`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the memlane URL must start with http:// or https://');
  url.hash = '';
  url.search = '';
  return url.toString().replace(/\/$/, '');
}

/** The server's refusal of a browser origin it does not know (memlane's origin check, a 403). */
const ORIGIN_REFUSED = /^origin not allowed/i;

export function allowOriginCommand(origin: string): string {
  return `memlane serve --allow-origin ${origin}`;
}

/** The outbox's view of a failure of the one client (@memlane/client): what kind, and whether to keep it. */
function classify(err: MemlaneError, conn: Connection, method: string, path: string): ApiError {
  if (err instanceof MemlaneUnreachable) {
    return new ApiError('unreachable', `memlane is not reachable at ${conn.url} (${err.reason})`);
  }
  const { status, error: message } = err;
  const retryAfterMs = err.retryAfterMs ?? 0;
  if (!isMemlaneAnswer(err.body) && status < 500) {
    // A page where memlane's JSON should be (a web server's 404 page): the URL is not memlane's.
    return notMemlane(conn, `${method} ${path} gave HTTP ${status} with a page`, status);
  }
  if (status === 403 && ORIGIN_REFUSED.test(message)) {
    const origin = conn.origin ?? message.replace(ORIGIN_REFUSED, '').replace(/^:\s*/, '');
    return new ApiError('origin', `memlane refuses requests from this extension (${origin}). Start it with: ${allowOriginCommand(origin)}`, 403);
  }
  if (status === 401 || status === 403) return new ApiError('auth', message, status);
  if (serverSide(status, message)) return new ApiError('server', message, status, retryAfterMs);
  return new ApiError('rejected', message, status);
}

/** The answer of a server that is not memlane, in words (never its page). */
function notMemlane(conn: Connection, what: string, status = 0): ApiError {
  return new ApiError('setup', `${conn.url} does not answer as memlane: ${what} that is not memlane's. Check the memlane URL in the options.`, status);
}

/** memlane answers every error with JSON `{"error": "..."}`; anything else came from another server. */
function isMemlaneAnswer(body: unknown): boolean {
  return !!body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string';
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
    if (err instanceof MemlaneError) throw classify(err, conn, method, path);
    throw err;
  }
}

// ----------------------------------------------------------------------------------- connection test

/** A search sent exactly as quick search sends it (a POST from the service worker, so the browser
 * adds this extension's Origin header as it does to every save and search; a GET carries none).
 * memlane serves GETs to an origin it refuses, so only a POST shows the refusal. */
export async function probeOrigin(conn: Connection, options: Pick<CallOptions, 'fetchImpl' | 'sleep'> = {}): Promise<void> {
  await call(conn, 'POST', '/v3/recall', { attempts: 1, timeoutMs: 10_000, ...options, body: { query: '', limit: 1 } });
}

/** "Test connection": the key (GET /v3/whoami), then the origin (probeOrigin). A server that
 * refuses the origin says so with the command that allows it, rather than "Connected" followed by
 * failing searches; a server that is not memlane says that, not its 404 page. */
export async function testConnection(conn: Connection, options: Pick<CallOptions, 'fetchImpl' | 'sleep'> = {}): Promise<WhoAmI> {
  const who = await call<WhoAmI>(conn, 'GET', '/v3/whoami', { attempts: 1, timeoutMs: 10_000, ...options });
  if (typeof who !== 'object' || typeof who?.organization_id !== 'string') {
    // A server that answers every path with a page (a single-page app's host): not memlane either.
    throw notMemlane(conn, 'GET /v3/whoami gave a page');
  }
  await probeOrigin(conn, options);
  return who;
}

// ----------------------------------------------------------------------------------- shapes
// Generated from memlane's OpenAPI document (clients/typescript, `make types`).

import type { MemoryIn, WhoAmI } from '../../clients/typescript/src';

/** POST /v3/memory as the extension sends it: metadata always says what saved it (saved_with). */
export type MemoryBody = MemoryIn & { metadata: Record<string, unknown> };

export type {
  DocumentOut,
  DocumentPatch,
  MemoryOut,
  Project,
  ProjectList,
  RecallIn,
  RecallOut,
  RecalledDocument,
  WhoAmI,
} from '../../clients/typescript/src';
