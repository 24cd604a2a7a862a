import { describe, expect, it } from 'vitest';
import { ApiError, call, endpoint, normalizeBaseUrl, testConnection } from '@/lib/api';

const conn = { url: 'http://127.0.0.1:7432', apiKey: 'mlk_test' };

type Answer = Response | Error;

/** A fetch that answers from a script and records what it was asked. */
function scripted(answers: Answer[]) {
  const requests: { url: string; init: RequestInit }[] = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    requests.push({ url, init });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    if (next instanceof Error) throw next;
    return next;
  }) as unknown as typeof fetch;
  const sleeps: number[] = [];
  const sleep = async (ms: number) => {
    sleeps.push(ms);
  };
  return { requests, fetchImpl, sleeps, sleep };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

describe('calling memlane', () => {
  it('retries a network failure after 1 s and 2 s, with the same Idempotency-Key each time', async () => {
    // Given memlane unreachable twice, then answering
    const f = scripted([new TypeError('Failed to fetch'), new TypeError('Failed to fetch'), json(201, { id: 'd1' })]);
    // When a save is sent
    const out = await call(conn, 'POST', '/v3/memory', { body: { content: 'x' }, idempotencyKey: 'k-1', ...f });
    // Then it arrives on the third attempt, after the spec's backoff
    expect(out).toEqual({ id: 'd1' });
    expect(f.sleeps).toEqual([1000, 2000]);
    expect(f.requests.map((r) => (r.init.headers as Record<string, string>)['Idempotency-Key'])).toEqual(['k-1', 'k-1', 'k-1']);
    const headers = f.requests[0].init.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer mlk_test');
    expect(headers['Content-Type']).toBe('application/json');
    expect(f.requests[0].init.body).toBe('{"content":"x"}');
    expect(f.requests[0].url).toBe('http://127.0.0.1:7432/v3/memory');
  });

  it('gives up after three attempts and says memlane is unreachable', async () => {
    const f = scripted([new TypeError('a'), new TypeError('b'), new TypeError('c')]);
    const err = (await call(conn, 'GET', '/v3/projects', f).catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.kind).toBe('unreachable');
    expect(err.keep).toBe(true);
    expect(err.message).toContain('not reachable at http://127.0.0.1:7432');
  });

  it("does not retry what memlane refused, and reports memlane's own message", async () => {
    const f = scripted([json(400, { error: 'content: must not be empty' })]);
    const err = (await call(conn, 'POST', '/v3/memory', { body: {}, ...f }).catch((e) => e)) as ApiError;
    expect([err.kind, err.status, err.message, err.keep]).toEqual(['rejected', 400, 'content: must not be empty', false]);
    expect(f.requests).toHaveLength(1);
    const auth = scripted([json(401, { error: 'invalid or revoked API key' })]);
    const denied = (await call(conn, 'GET', '/v3/whoami', auth).catch((e) => e)) as ApiError;
    expect([denied.kind, denied.keep, auth.requests.length]).toEqual(['auth', true, 1]);
  });

  it('waits as long as Retry-After asks (up to 5 s) on 429, and retries 5xx and 409 in progress', async () => {
    const f = scripted([
      json(429, { error: 'rate limit' }, { 'Retry-After': '3' }),
      json(409, { error: 'Idempotency-Key: a request with this key is still in progress' }),
      json(200, { ok: true }),
    ]);
    expect(await call(conn, 'POST', '/v3/memory', { body: {}, ...f })).toEqual({ ok: true });
    expect(f.sleeps).toEqual([3000, 2000]);
    const conflict = scripted([json(409, { error: 'Idempotency-Key: already used with a different request body' })]);
    const err = (await call(conn, 'POST', '/v3/memory', { body: {}, ...conflict }).catch((e) => e)) as ApiError;
    expect(err.kind).toBe('rejected');
    const down = scripted([json(503, {}), json(502, {}), json(500, { error: 'internal error' })]);
    const last = (await call(conn, 'GET', '/v3/projects', down).catch((e) => e)) as ApiError;
    expect([last.kind, last.status, last.message]).toEqual(['server', 500, 'internal error']);
  });

  it('joins paths onto a base URL with a stage path', () => {
    expect(endpoint('https://abc.execute-api.eu-west-1.amazonaws.com/prod', '/v3/recall')).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com/prod/v3/recall',
    );
    expect(normalizeBaseUrl(' http://127.0.0.1:7432/ ')).toBe('http://127.0.0.1:7432');
    expect(() => normalizeBaseUrl('ftp://x')).toThrow('http:// or https://');
  });

  it('says in words what is wrong with a URL that is not one', () => {
    expect(() => normalizeBaseUrl('127.0.0.1 7432')).toThrow(
      /^the memlane URL "127.0.0.1 7432" is not a web address: enter it as http:\/\/127.0.0.1:7432 or https:\/\/…$/,
    );
    expect(() => normalizeBaseUrl('  ')).toThrow(/^the memlane URL is empty/);
  });

  it('names a server that answers with a page instead of memlane, and keeps what waits for it', async () => {
    const page = new Response('<!DOCTYPE html><html><title>Error response</title><p>Error code: 404</p></html>', {
      status: 404,
      headers: { 'Content-Type': 'text/html' },
    });
    const err = (await call(conn, 'GET', '/v3/whoami', scripted([page])).catch((e) => e)) as ApiError;
    expect([err.kind, err.status, err.keep]).toEqual(['setup', 404, true]);
    expect(err.message).toBe(
      "http://127.0.0.1:7432 does not answer as memlane: GET /v3/whoami gave HTTP 404 with a page that is not memlane's. Check the memlane URL in the options.",
    );
    expect(err.message).not.toContain('<');
  });

  it("turns memlane's refusal of this extension's origin into the command that allows it, for every call", async () => {
    const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
    const f = scripted([json(403, { error: `origin not allowed: ${ORIGIN}` })]);
    const err = (await call({ ...conn, origin: ORIGIN }, 'POST', '/v3/memory', { body: {}, ...f }).catch((e) => e)) as ApiError;
    expect([err.kind, err.keep]).toEqual(['origin', true]);
    expect(err.message).toBe(`memlane refuses requests from this extension (${ORIGIN}). Start it with: memlane serve --allow-origin ${ORIGIN}`);
  });
});

describe('testing the connection', () => {
  const ORIGIN = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
  const ext = { ...conn, origin: ORIGIN };
  const WHO = { user_id: 'u', organization_id: 'o', organization_name: 'Home', key_id: 'k', can_manage_keys: false };

  it('sends a search as quick search does (a POST, which carries the Origin) after the key check', async () => {
    const s = scripted([json(200, WHO), json(200, { results: [], total: 0, query_time_ms: 1 })]);
    expect(await testConnection(ext, s)).toEqual(WHO);
    expect(s.requests.map((r) => `${r.init.method} ${r.url}`)).toEqual([
      'GET http://127.0.0.1:7432/v3/whoami',
      'POST http://127.0.0.1:7432/v3/recall',
    ]);
    expect((s.requests[1].init.headers as Record<string, string>).Authorization).toBe('Bearer mlk_test');
  });

  it('on an origin refusal, names the exact command that allows this extension', async () => {
    const s = scripted([json(200, WHO), json(403, { error: `origin not allowed: ${ORIGIN}` })]);
    const failure = testConnection(ext, s);
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(testConnection(ext, scripted([json(403, { error: `origin not allowed: ${ORIGIN}` })]))).rejects.toThrow(
      `memlane refuses requests from this extension (${ORIGIN}). Start it with: memlane serve --allow-origin ${ORIGIN}`,
    );
  });

  it('reports a refused key as it is, without the origin command', async () => {
    const s = scripted([json(401, { error: 'invalid or revoked API key' })]);
    await expect(testConnection(ext, s)).rejects.toThrow(/^invalid or revoked API key$/);
  });

  it('does not call a server that answers every path with a page "Connected"', async () => {
    const s = scripted([new Response('<html>my app</html>', { status: 200, headers: { 'Content-Type': 'text/html' } })]);
    await expect(testConnection(ext, s)).rejects.toThrow(
      "http://127.0.0.1:7432 does not answer as memlane: GET /v3/whoami gave a page that is not memlane's. Check the memlane URL in the options.",
    );
  });
});
