/** Saves are written here before they are sent and removed only once memlane has answered, so a
 * save made while memlane is unreachable (or while the browser closes mid-request) is sent later,
 * not lost. Each save keeps one id for its lifetime and sends it as the Idempotency-Key, so a
 * resend after a lost answer is recognised by memlane and never stored twice. */
import { ApiError, type MemoryBody } from './api';
import type { Delivery, EditedField, Wanted } from './resave';

export interface OutboxItem {
  id: string;
  body: MemoryBody;
  /** The title and tags the user typed: applied if memlane already holds this content. */
  wanted?: Wanted;
  createdAt: number;
  attempts: number;
  nextAttemptAt: number;
  lastError?: string;
  /** memlane refused it for good (bad input, unknown project): kept for the user to see and discard. */
  failed?: boolean;
  /** It waited, then reached memlane: kept (without its content) until the popup has said so. */
  sent?: Receipt;
}

/** How a save that waited was answered, for the popup to tell once. */
export interface Receipt {
  at: number;
  memoryId: string;
  title: string;
  duplicate: boolean;
  updated: EditedField[];
  updateError?: string;
}

/** At most this many receipts are kept; older ones go first. */
export const MAX_RECEIPTS = 20;

export interface ItemStore {
  all(): Promise<OutboxItem[]>;
  put(item: OutboxItem): Promise<void>;
  remove(id: string): Promise<void>;
}

export type Outcome =
  | ({ state: 'saved' } & Delivery)
  | { state: 'queued'; id: string; error: string; pending: number }
  | { state: 'failed'; error: string };

export interface OutboxStatus {
  pending: number;
  nextAttemptAt: number | null;
  lastError?: string;
  failed: { id: string; title: string; error: string }[];
  sent: (Receipt & { id: string })[];
}

/** What the outbox tells its host: the badge and the retry alarm follow what waits; saves that
 * waited are announced when they arrive. */
export interface OutboxEvents {
  scheduled(when: number | null, pending: number): Promise<void> | void;
  delivered?(receipts: Receipt[]): Promise<void> | void;
}

const waiting = (i: OutboxItem) => !i.failed && !i.sent;

/** Waits between background attempts: 30 s (the shortest alarm Chrome allows a packed extension),
 * doubling up to 15 minutes. Opening the popup or a successful call retries at once. */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 15 * 60_000);
}

export class Outbox {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: ItemStore,
    private readonly send: (item: OutboxItem, attempts: number) => Promise<Delivery>,
    private readonly events: OutboxEvents,
    private readonly now: () => number = Date.now,
    private readonly newId: () => string = () => crypto.randomUUID(),
  ) {}

  /** One operation at a time: a flush and a new save never send the same item concurrently. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Persist, then try now (with the in-request retries); queue it if memlane cannot be reached. */
  submit(body: MemoryBody, wanted?: Wanted): Promise<Outcome> {
    return this.exclusive(async () => {
      const item: OutboxItem = { id: this.newId(), body, createdAt: this.now(), attempts: 0, nextAttemptAt: this.now() };
      if (wanted) item.wanted = wanted;
      await this.store.put(item);
      const outcome = await this.attempt(item, 3);
      if (outcome.state === 'failed') await this.store.remove(item.id); // the user sees why, now
      await this.reschedule();
      // memlane answers again: what waited goes now, after this answer (queued behind it, not awaited).
      if (outcome.state === 'saved') void this.flush(true);
      return outcome;
    });
  }

  /** Send whatever waits. `force` ignores the backoff (the user asked, or memlane just answered). */
  flush(force = false): Promise<{ sent: number; pending: number; delivered: Receipt[] }> {
    return this.exclusive(async () => {
      const delivered = await this.sendRest(force);
      const pending = await this.reschedule();
      if (delivered.length) await this.events.delivered?.(delivered);
      return { sent: delivered.length, pending, delivered };
    });
  }

  status(): Promise<OutboxStatus> {
    return this.exclusive(async () => {
      const items = await this.store.all();
      const queued = items.filter(waiting);
      return {
        pending: queued.length,
        nextAttemptAt: queued.length ? Math.min(...queued.map((i) => i.nextAttemptAt)) : null,
        lastError: queued.find((i) => i.lastError)?.lastError,
        failed: items.filter((i) => i.failed).map((i) => ({ id: i.id, title: i.body.title ?? i.body.source_url ?? '', error: i.lastError ?? '' })),
        sent: items.flatMap((i) => (i.sent ? [{ id: i.id, ...i.sent }] : [])).sort((a, b) => a.at - b.at),
      };
    });
  }

  /** Drops a refused save, or a receipt the user has seen; a waiting save is never dropped. */
  discard(id: string): Promise<void> {
    return this.exclusive(async () => {
      const item = (await this.store.all()).find((i) => i.id === id);
      if (item?.failed || item?.sent) await this.store.remove(id);
      await this.reschedule();
    });
  }

  private async sendRest(force = true): Promise<Receipt[]> {
    const items = (await this.store.all()).filter(waiting).sort((a, b) => a.createdAt - b.createdAt);
    const delivered: Receipt[] = [];
    for (const item of items) {
      if (!force && item.nextAttemptAt > this.now()) continue;
      const outcome = await this.attempt(item, 1);
      if (outcome.state === 'saved') delivered.push(await this.keepReceipt(item, outcome));
      // Unreachable now means unreachable for the rest too: stop instead of timing out on each.
      if (outcome.state === 'queued') break;
    }
    if (delivered.length) await this.pruneReceipts();
    return delivered;
  }

  /** A save that waited and arrived: its content goes, what memlane answered stays for the popup. */
  private async keepReceipt(item: OutboxItem, delivery: Delivery): Promise<Receipt> {
    const receipt: Receipt = {
      at: this.now(),
      memoryId: delivery.memory.id,
      title: delivery.memory.title,
      duplicate: !!delivery.memory.duplicate,
      updated: delivery.updated,
      ...(delivery.updateError ? { updateError: delivery.updateError } : {}),
    };
    const { title, source_url } = item.body;
    await this.store.put({ id: item.id, body: { content: '', title, source_url, metadata: {} }, createdAt: item.createdAt,
      attempts: item.attempts, nextAttemptAt: item.nextAttemptAt, sent: receipt });
    return receipt;
  }

  private async pruneReceipts(): Promise<void> {
    const receipts = (await this.store.all()).filter((i) => i.sent).sort((a, b) => b.sent!.at - a.sent!.at);
    for (const old of receipts.slice(MAX_RECEIPTS)) await this.store.remove(old.id);
  }

  private async attempt(item: OutboxItem, attempts: number): Promise<Outcome> {
    try {
      const delivery = await this.send(item, attempts);
      await this.store.remove(item.id);
      return { state: 'saved', ...delivery };
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError('unreachable', (err as Error).message);
      const tries = item.attempts + 1;
      if (!error.keep) {
        await this.store.put({ ...item, attempts: tries, failed: true, lastError: error.message });
        return { state: 'failed', error: error.message };
      }
      await this.store.put({ ...item, attempts: tries, nextAttemptAt: this.now() + retryDelayMs(tries), lastError: error.message });
      const pending = (await this.store.all()).filter(waiting).length;
      return { state: 'queued', id: item.id, error: error.message, pending };
    }
  }

  private async reschedule(): Promise<number> {
    const queued = (await this.store.all()).filter(waiting);
    await this.events.scheduled(queued.length ? Math.min(...queued.map((i) => i.nextAttemptAt)) : null, queued.length);
    return queued.length;
  }
}
