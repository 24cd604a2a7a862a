import { describe, expect, it } from 'vitest';
import { ApiError, type MemoryBody, type MemoryOut } from '@/lib/api';
import { type ItemStore, Outbox, type OutboxItem, retryDelayMs } from '@/lib/outbox';

/** The outbox's store, as IndexedDB keeps it: by id, copies in and out. */
function memoryStore(): ItemStore & { items: Map<string, OutboxItem> } {
  const items = new Map<string, OutboxItem>();
  return {
    items,
    all: async () => [...items.values()].map((i) => structuredClone(i)),
    put: async (item) => void items.set(item.id, structuredClone(item)),
    remove: async (id) => void items.delete(id),
  };
}

/** A memlane that honours Idempotency-Key, can be down, and can lose its answer after storing. */
class FakeMemlane {
  stored = new Map<string, MemoryBody>();
  calls: { key: string; attempts: number }[] = [];
  down = false;
  loseNextAnswer = false;
  refuse?: string;
  inFlight = 0;
  maxInFlight = 0;

  send = async (item: OutboxItem, attempts: number): Promise<MemoryOut> => {
    this.calls.push({ key: item.id, attempts });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setTimeout(r, 1));
      if (this.down) throw new ApiError('unreachable', 'memlane is not reachable');
      if (this.refuse) throw new ApiError('rejected', this.refuse, 400);
      if (!this.stored.has(item.id)) this.stored.set(item.id, item.body);
      if (this.loseNextAnswer) {
        this.loseNextAnswer = false;
        throw new ApiError('unreachable', 'connection reset');
      }
      return {
        id: `doc-${item.id}`, title: item.body.title ?? '', status: 'ready', summary: null, chunk_count: 1, metadata: {},
        project_id: 'p', content_type: 'text', created_at: '2026-01-01T00:00:00Z', duplicate: false,
        conversation_id: null, message_index: null, kind: 'memory',
      };
    } finally {
      this.inFlight--;
    }
  };
}

function setup() {
  const store = memoryStore();
  const server = new FakeMemlane();
  const schedules: { when: number | null; pending: number }[] = [];
  let clock = 1_000_000;
  let n = 0;
  const outbox = new Outbox(
    store,
    server.send,
    (when, pending) => void schedules.push({ when, pending }),
    () => clock,
    () => `save-${++n}`,
  );
  return { store, server, schedules, outbox, advance: (ms: number) => (clock += ms), now: () => clock };
}

const body = (title: string): MemoryBody => ({ content: `${title} content`, title, metadata: {} });

describe('the outbox', () => {
  it('sends a save at once with three attempts and keeps nothing once memlane has it', async () => {
    const { outbox, server, store } = setup();
    const outcome = await outbox.submit(body('a'));
    expect(outcome).toMatchObject({ state: 'saved', memory: { id: 'doc-save-1', title: 'a' } });
    expect(server.calls).toEqual([{ key: 'save-1', attempts: 3 }]);
    expect(store.items.size).toBe(0);
  });

  it('keeps a save made while memlane is down and sends it once it is back, exactly once', async () => {
    // Given memlane down
    const { outbox, server, store, schedules, now } = setup();
    server.down = true;
    // When a save is made, Then it is kept and a retry is scheduled
    const outcome = await outbox.submit(body('offline'));
    expect(outcome).toEqual({ state: 'queued', id: 'save-1', error: 'memlane is not reachable', pending: 1 });
    expect(store.items.get('save-1')).toMatchObject({ attempts: 1, lastError: 'memlane is not reachable', nextAttemptAt: now() + 30_000 });
    expect(schedules.at(-1)).toEqual({ when: now() + 30_000, pending: 1 });
    // When a retry comes too early (the alarm is not due), Then nothing is sent
    expect(await outbox.flush()).toEqual({ sent: 0, pending: 1 });
    // When memlane is back and the answer to the first resend is lost after it stored the save
    server.down = false;
    server.loseNextAnswer = true;
    expect(await outbox.flush(true)).toEqual({ sent: 0, pending: 1 });
    // Then the next resend carries the same Idempotency-Key, and memlane holds the save once
    expect(await outbox.flush(true)).toEqual({ sent: 1, pending: 0 });
    expect(server.calls.map((c) => c.key)).toEqual(['save-1', 'save-1', 'save-1']);
    expect([...server.stored.keys()]).toEqual(['save-1']);
    expect(store.items.size).toBe(0);
    expect(schedules.at(-1)).toEqual({ when: null, pending: 0 });
  });

  it('sends what waited, oldest first, after the next save that gets through', async () => {
    const { outbox, server, store } = setup();
    server.down = true;
    await outbox.submit(body('first'));
    await outbox.submit(body('second'));
    server.down = false;
    await outbox.submit(body('third'));
    await outbox.flush(); // waits behind the flush the successful save started
    expect(store.items.size).toBe(0);
    expect([...server.stored.values()].map((b) => b.title)).toEqual(['third', 'first', 'second']);
  });

  it('stops at the first unreachable item instead of timing out on each', async () => {
    const { outbox, server } = setup();
    server.down = true;
    await outbox.submit(body('a'));
    await outbox.submit(body('b'));
    server.calls = [];
    await outbox.flush(true);
    expect(server.calls).toHaveLength(1);
  });

  it('reports a refused save at once and does not keep it', async () => {
    const { outbox, server, store } = setup();
    server.refuse = 'content: must not be empty';
    expect(await outbox.submit(body('bad'))).toEqual({ state: 'failed', error: 'content: must not be empty' });
    expect(store.items.size).toBe(0);
  });

  it('keeps a queued save that memlane later refuses until the user discards it', async () => {
    const { outbox, server, store } = setup();
    server.down = true;
    await outbox.submit(body('later refused'));
    server.down = false;
    server.refuse = 'project_id: project not found';
    await outbox.flush(true);
    const status = await outbox.status();
    expect(status).toMatchObject({ pending: 0, failed: [{ id: 'save-1', title: 'later refused', error: 'project_id: project not found' }] });
    await outbox.discard('save-1');
    expect(store.items.size).toBe(0);
  });

  it('never drops a save that is still waiting, even when asked to', async () => {
    const { outbox, server, store } = setup();
    server.down = true;
    await outbox.submit(body('keep me'));
    await outbox.discard('save-1');
    expect(store.items.has('save-1')).toBe(true);
  });

  it('never sends two things at once, so a flush and a save cannot both send one item', async () => {
    const { outbox, server } = setup();
    server.down = true;
    await outbox.submit(body('a'));
    server.down = false;
    await Promise.all([outbox.flush(true), outbox.submit(body('b')), outbox.flush(true), outbox.flush(true)]);
    expect(server.maxInFlight).toBe(1);
    expect(server.calls.filter((c) => c.key === 'save-1').length).toBe(2); // the failed try and one success
    expect(server.stored.size).toBe(2);
  });

  it('backs off from 30 s, doubling, to at most 15 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000]);
  });
});
