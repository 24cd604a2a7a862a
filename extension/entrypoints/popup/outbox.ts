/** The popup's view of the outbox: saves that wait, saves memlane refused, and saves that waited
 * and have since arrived (told once). */
import { ask } from '@/lib/messages';
import type { OutboxStatus } from '@/lib/outbox';
import { byId as $, setStatus } from '@/lib/pages';
import { duplicateNote } from '@/lib/resave';

export async function showOutbox(): Promise<void> {
  const status = await ask({ type: 'outbox-status' });
  $('outbox').hidden = status.pending === 0 && status.failed.length === 0 && status.sent.length === 0;
  const text = $('outbox-text');
  if (status.pending) {
    const why = status.lastError ? ` Last try: ${status.lastError}` : '';
    setStatus(text, `${status.pending} save${status.pending > 1 ? 's' : ''} waiting to be sent.${why}`, 'warn');
  } else {
    setStatus(text, '');
  }
  $('retry').hidden = status.pending === 0;
  const list = $('failed-list');
  list.replaceChildren();
  for (const f of status.failed) {
    const li = document.createElement('li');
    li.className = 'bad';
    li.textContent = `Not saved: ${f.title}: ${f.error} `;
    const discard = document.createElement('button');
    discard.type = 'button';
    discard.className = 'link';
    discard.textContent = 'Discard';
    discard.addEventListener('click', () => void ask({ type: 'outbox-discard', id: f.id }).then(showOutbox));
    li.append(discard);
    list.append(li);
  }
  showSent(status.sent);
}

/** Saves that waited and have arrived since the popup last said so: said once. */
function showSent(sent: OutboxStatus['sent']): void {
  const list = $('sent-list');
  list.replaceChildren(
    ...sent.map((r) => {
      const li = document.createElement('li');
      li.className = 'ok';
      li.dataset.memoryId = r.memoryId;
      const note = duplicateNote(r);
      li.textContent = `Sent ✓ "${r.title}"${note ? ` (${note})` : ''}`;
      return li;
    }),
  );
  for (const r of sent) void ask({ type: 'outbox-discard', id: r.id }).catch(() => undefined);
}
