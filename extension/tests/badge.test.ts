import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ActionApi, Badge, SAVED_HOLD_MS, failedView, savedView } from '@/lib/badge';

/** chrome.action as the toolbar shows it. */
function toolbar(): ActionApi & { shown: () => [string, string] } {
  let text = '';
  let title = '';
  return {
    setBadgeText: async (d) => void (text = d.text),
    setBadgeBackgroundColor: async () => undefined,
    setTitle: async (d) => void (title = d.title),
    shown: () => [text, title],
  };
}

describe('the toolbar badge', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("keeps a save's ✓ and tooltip while what waits is reported, then shows what waits", async () => {
    const action = toolbar();
    const badge = new Badge(action, () => Date.now());
    await badge.waiting(0);
    // Given a save announced
    await badge.flash(savedView('memlane: saved "Pad"'), SAVED_HOLD_MS);
    // When the outbox reports right after (its flush after each save), Then the ✓ stays
    await badge.waiting(0);
    await badge.waiting(2);
    expect(action.shown()).toEqual(['✓', 'memlane: saved "Pad"']);
    await vi.advanceTimersByTimeAsync(SAVED_HOLD_MS - 1);
    expect(action.shown()[0]).toBe('✓');
    // and once its time is up, the latest count shows
    await vi.advanceTimersByTimeAsync(1);
    expect(action.shown()).toEqual(['2', 'memlane: 2 save(s) waiting to be sent']);
    await badge.waiting(0);
    expect(action.shown()).toEqual(['', 'memlane']);
  });

  it('gives a newer announcement its full time', async () => {
    const action = toolbar();
    const badge = new Badge(action, () => Date.now());
    await badge.flash(savedView('first'), SAVED_HOLD_MS);
    await vi.advanceTimersByTimeAsync(SAVED_HOLD_MS - 1000);
    await badge.flash(failedView('memlane: not saved: x'), SAVED_HOLD_MS);
    await vi.advanceTimersByTimeAsync(1000);
    expect(action.shown()).toEqual(['!', 'memlane: not saved: x']);
    await vi.advanceTimersByTimeAsync(SAVED_HOLD_MS);
    expect(action.shown()[0]).toBe('');
  });
});
