import { describe, expect, it } from 'vitest';
import { memoryPageUrl, servesWebApp } from '@/lib/app';

const answering = (status: number, type: string) =>
  (async () => new Response('<!doctype html>', { status, headers: { 'Content-Type': type } })) as unknown as typeof fetch;

describe("memlane's web app", () => {
  it('is there when / answers HTML, and memories open at /memories/<id>', async () => {
    expect(await servesWebApp('http://127.0.0.1:7432/', answering(200, 'text/html; charset=utf-8'))).toBe(true);
    expect(memoryPageUrl('https://memlane.example/prod/', 'a1 b')).toBe('https://memlane.example/prod/memories/a1%20b');
  });

  it('is not there when / answers JSON, an error, or nothing', async () => {
    expect(await servesWebApp('http://x', answering(404, 'application/json'))).toBe(false);
    expect(await servesWebApp('http://x', answering(500, 'text/html'))).toBe(false);
    const down = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    expect(await servesWebApp('http://x', down)).toBe(false);
  });
});
