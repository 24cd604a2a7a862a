/** Saves are written here before they are sent and removed only once memlane has answered, so a
 * save made while memlane is unreachable (or while the browser closes mid-request) is sent later,
 * not lost. Each save keeps one id for its lifetime and sends it as the Idempotency-Key, so a
 * resend after a lost answer is recognised by memlane and never stored twice. */
import { ApiError, type MemoryBody, type MemoryOut } from './api';

export interface OutboxItem {
  id: string;
  body: MemoryBody;
  createdAt: number;
  attempts: number;
  nextAttemptAt: number;
  lastError?: string;
  /** memlane refused it for good (bad input, unknown project): kept for the user to see and discard. */
  failed?: boolean;
}

export interface ItemStore {
  all(): Promise<OutboxItem[]>;
  put(item: OutboxItem): Promise<void>;
  remove(id: string): Promise<void>;
}

export type Outcome =
  | { state: 'saved'; memory: MemoryOut }
  | { state: 'queued'; id: string; error: string; pending: number }
  | { state: 'failed'; error: string };

export interface OutboxStatus {
  pending: number;
  nextAttemptAt: number | null;
  lastError?: string;
  failed: { id: string; title: string; error: string }[];
}

/** Waits between background attempts: 30 s (the shortest alarm Chrome allows a packed extension),
 * doubling up to 15 minutes. Opening the popup or a successful call retries at once. */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 15 * 60_000);
}

export class Outbox {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: ItemStore,
    private readonly send: (item: OutboxItem, attempts: number) => Promise<MemoryOut>,
    private readonly schedule: (when: number | null, pending: number) => Promise<void> | void,
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
  submit(body: MemoryBody): Promise<Outcome> {
    return this.exclusive(async () => {
      const item: OutboxItem = { id: this.newId(), body, createdAt: this.now(), attempts: 0, nextAttemptAt: this.now() };
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
  flush(force = false): Promise<{ sent: number; pending: number }> {
    return this.exclusive(async () => {
      const sent = await this.sendRest(force);
      const pending = await this.reschedule();
      return { sent, pending };
    });
  }

  status(): Promise<OutboxStatus> {
    return this.exclusive(async () => {
      const items = await this.store.all();
      const waiting = items.filter((i) => !i.failed);
      return {
        pending: waiting.length,
        nextAttemptAt: waiting.length ? Math.min(...waiting.map((i) => i.nextAttemptAt)) : null,
        lastError: waiting.find((i) => i.lastError)?.lastError,
        failed: items.filter((i) => i.failed).map((i) => ({ id: i.id, title: i.body.title ?? i.body.source_url ?? '', error: i.lastError ?? '' })),
      };
    });
  }

  discard(id: string): Promise<void> {
    return this.exclusive(async () => {
      const item = (await this.store.all()).find((i) => i.id === id);
      if (item?.failed) await this.store.remove(id); // only refused saves; waiting ones are never dropped
      await this.reschedule();
    });
  }

  private async sendRest(force = true): Promise<number> {
    const items = (await this.store.all()).filter((i) => !i.failed).sort((a, b) => a.createdAt - b.createdAt);
    let sent = 0;
    for (const item of items) {
      if (!force && item.nextAttemptAt > this.now()) continue;
      const outcome = await this.attempt(item, 1);
      if (outcome.state === 'saved') sent++;
      // Unreachable now means unreachable for the rest too: stop instead of timing out on each.
      if (outcome.state === 'queued') break;
    }
    return sent;
  }

  private async attempt(item: OutboxItem, attempts: number): Promise<Outcome> {
    try {
      const memory = await this.send(item, attempts);
      await this.store.remove(item.id);
      return { state: 'saved', memory };
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError('unreachable', (err as Error).message);
      const tries = item.attempts + 1;
      if (!error.keep) {
        await this.store.put({ ...item, attempts: tries, failed: true, lastError: error.message });
        return { state: 'failed', error: error.message };
      }
      await this.store.put({ ...item, attempts: tries, nextAttemptAt: this.now() + retryDelayMs(tries), lastError: error.message });
      const pending = (await this.store.all()).filter((i) => !i.failed).length;
      return { state: 'queued', id: item.id, error: error.message, pending };
    }
  }

  private async reschedule(): Promise<number> {
    const waiting = (await this.store.all()).filter((i) => !i.failed);
    await this.schedule(waiting.length ? Math.min(...waiting.map((i) => i.nextAttemptAt)) : null, waiting.length);
    return waiting.length;
  }
}
