/** The toolbar badge and its tooltip: how many saves wait, and, for a few seconds after a save,
 * how it went (a save from the context menu or the shortcut has no popup to say so). What waits
 * changes often (every outbox operation reports it, a flush right after each save among them), so
 * a save's ✓ or ! is held for its time and the count shown after it, never in its place. */

export interface BadgeView {
  text: string;
  color: string;
  title: string;
}

/** The part of chrome.action the badge uses. */
export interface ActionApi {
  setBadgeText(details: { text: string }): Promise<void>;
  setBadgeBackgroundColor(details: { color: string }): Promise<void>;
  setTitle(details: { title: string }): Promise<void>;
}

export const SAVED_HOLD_MS = 5_000;
export const FAILED_HOLD_MS = 15_000;

const GREEN = '#15803d';
const AMBER = '#b45309';
const RED = '#b91c1c';

export function pendingView(pending: number): BadgeView {
  return {
    text: pending ? String(pending) : '',
    color: AMBER,
    title: pending ? `memlane: ${pending} save(s) waiting to be sent` : 'memlane',
  };
}

export const savedView = (title: string): BadgeView => ({ text: '✓', color: GREEN, title });
export const failedView = (title: string): BadgeView => ({ text: '!', color: RED, title });

export class Badge {
  private pending = 0;
  private heldUntil = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private drawing: Promise<void> = Promise.resolve();

  constructor(
    private readonly action: ActionApi,
    private readonly now: () => number = Date.now,
  ) {}

  /** The number of saves waiting: shown now, or once a save's ✓ or ! has had its time. */
  waiting(pending: number): Promise<void> {
    this.pending = pending;
    return this.now() < this.heldUntil ? this.drawing : this.draw(pendingView(pending));
  }

  /** Shows `view` for `holdMs`, then what waits. */
  flash(view: BadgeView, holdMs: number): Promise<void> {
    this.heldUntil = this.now() + holdMs;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.heldUntil = 0;
      void this.draw(pendingView(this.pending));
    }, holdMs);
    return this.draw(view);
  }

  /** One drawing at a time, so a badge's text, colour and tooltip always belong together. */
  private draw(view: BadgeView): Promise<void> {
    this.drawing = this.drawing.then(async () => {
      await this.action.setBadgeBackgroundColor({ color: view.color });
      await this.action.setBadgeText({ text: view.text });
      await this.action.setTitle({ title: view.title });
    }).catch(() => undefined);
    return this.drawing;
  }
}
