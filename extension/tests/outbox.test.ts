import { describe, expect, it } from 'vitest';
import { ApiError, type MemoryBody } from '@/lib/api';
import { type ItemStore, MAX_RECEIPTS, Outbox, type OutboxItem, type Receipt, retryDelayMs } from '@/lib/outbox';
import type { Delivery } from '@/lib/resave';

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

  /** The ids of saves memlane already held (it answers them `duplicate`), and what it changed. */
  duplicates = new Set<string>();

  send = async (item: OutboxItem, attempts: number): Promise<Delivery> => {
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
      const duplicate = this.duplicates.has(item.id);
      const memory = {
        id: `doc-${item.id}`, title: item.body.title ?? '', status: 'ready' as const, summary: null, chunk_count: 1, metadata: {},
        project_id: 'p', content_type: 'text' as const, created_at: '2026-01-01T00:00:00Z', duplicate,
        conversation_id: null, message_index: null, kind: 'memory' as const,
      };
      return { memory, updated: duplicate && item.wanted?.title ? ['title'] : [] };
    } finally {
      this.inFlight--;
    }
  };
}

function setup() {
  const store = memoryStore();
  const server = new FakeMemlane();
  const schedules: { when: number | null; pending: number }[] = [];
  const announced: Receipt[][] = [];
  let clock = 1_000_000;
  let n = 0;
  const outbox = new Outbox(
    store,
    server.send,
    {
      scheduled: (when, pending) => void schedules.push({ when, pending }),
      delivered: (receipts) => void announced.push(receipts),
    },
    () => clock,
    () => `save-${++n}`,
  );
  return { store, server, schedules, announced, outbox, advance: (ms: number) => (clock += ms), now: () => clock };
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
    expect(await outbox.flush()).toEqual({ sent: 0, pending: 1, delivered: [] });
    // When memlane is back and the answer to the first resend is lost after it stored the save
    server.down = false;
    server.loseNextAnswer = true;
    expect(await outbox.flush(true)).toEqual({ sent: 0, pending: 1, delivered: [] });
    // Then the next resend carries the same Idempotency-Key, and memlane holds the save once
    expect(await outbox.flush(true)).toMatchObject({ sent: 1, pending: 0, delivered: [{ memoryId: 'doc-save-1', title: 'offline' }] });
    expect(server.calls.map((c) => c.key)).toEqual(['save-1', 'save-1', 'save-1']);
    expect([...server.stored.keys()]).toEqual(['save-1']);
    // and what is kept is a receipt for the popup, not the save (its content is gone)
    expect([...store.items.values()].map((i) => [i.sent?.memoryId, i.body.content])).toEqual([['doc-save-1', '']]);
    expect(schedules.at(-1)).toEqual({ when: null, pending: 0 });
  });

  it('sends what waited, oldest first, after the next save that gets through', async () => {
    const { outbox, server } = setup();
    server.down = true;
    await outbox.submit(body('first'));
    await outbox.submit(body('second'));
    server.down = false;
    await outbox.submit(body('third'));
    await outbox.flush(); // waits behind the flush the successful save started
    expect((await outbox.status()).pending).toBe(0);
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

  it('tells once what a save that waited became, a duplicate with its typed title updated included', async () => {
    // Given two saves made while memlane is down, one of content memlane already holds, with a typed title
    const { outbox, server, announced } = setup();
    server.down = true;
    await outbox.submit(body('new page'));
    await outbox.submit(body('held page'), { title: 'My title' });
    server.duplicates.add('save-2');
    // When memlane is back
    server.down = false;
    await outbox.flush(true);
    // Then both are announced, and the status keeps them for the popup, oldest first
    expect(announced.map((r) => r.map((x) => [x.title, x.duplicate, x.updated]))).toEqual([
      [['new page', false, []], ['held page', true, ['title']]],
    ]);
    const status = await outbox.status();
    expect(status.pending).toBe(0);
    expect(status.sent.map((r) => [r.id, r.memoryId])).toEqual([['save-1', 'doc-save-1'], ['save-2', 'doc-save-2']]);
    // and once the popup has said so, they go; a flush never sends a receipt again
    await outbox.discard('save-1');
    await outbox.flush(true);
    expect((await outbox.status()).sent.map((r) => r.id)).toEqual(['save-2']);
    expect(server.calls.filter((c) => c.key === 'save-1')).toHaveLength(2); // the try while down, and the one that arrived
  });

  it(`keeps at most ${MAX_RECEIPTS} receipts, the newest`, async () => {
    const { outbox, server, advance } = setup();
    for (let i = 0; i < MAX_RECEIPTS + 3; i++) {
      server.down = true;
      await outbox.submit(body(`page ${i}`));
      server.down = false;
      advance(1000);
      await outbox.flush(true);
    }
    const sent = (await outbox.status()).sent;
    expect(sent).toHaveLength(MAX_RECEIPTS);
    expect(sent[0].title).toBe('page 3');
  });

  it('backs off from 30 s, doubling, to at most 15 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000]);
  });
});
