/** The popup's save form: the page, or the selection on it as a memory of its own, with the
 * title, project, tags and auto-forget the user chooses; what memlane made of it. */
import { browser } from 'wxt/browser';
import type { Extracted } from '@/lib/extract/types';
import { parseTags } from '@/lib/memory';
import { ask, type Preview } from '@/lib/messages';
import type { Outcome } from '@/lib/outbox';
import { byId as $, setStatus } from '@/lib/pages';
import { duplicateNote } from '@/lib/resave';
import { memlaneApp, memoryPageUrl } from './app-link';
import { showOutbox } from './outbox';

let offer: Preview | null = null;
/** What Save sends: the page, or the selection. */
let extracted: Extracted | null = null;
/** The title the popup filled in for it: a title field still holding it was not typed. */
let suggestedTitle = '';

function describe(e: Extracted): string {
  const m = e.metadata as Record<string, string | number | boolean | unknown[]>;
  const kinds: Record<string, string> = {
    readme: 'GitHub README',
    issue: 'GitHub issue',
    pull_request: 'GitHub pull request',
    file: `GitHub file${m.language ? ` (${m.language})` : ''}`,
  };
  let what = 'Page text';
  if (m.source === 'github') what = kinds[String(m.kind)] ?? 'GitHub page';
  else if (m.source === 'x') what = `X post${Array.isArray(m.thread) && m.thread.length > 1 ? ` with ${m.thread.length - 1} more in the thread` : ''}`;
  else if (m.source === 'youtube') what = m.has_transcript ? 'YouTube video with transcript' : 'YouTube video';
  else if (m.source === 'google-docs') what = 'Google Doc';
  else if (m.extractor === 'readability') what = 'Article';
  else if (m.kind === 'selection') what = 'Selection';
  return `${what} · ${e.content.length.toLocaleString('en')} characters${m.truncated ? ' (cut to 100,000)' : ''}`;
}

/** Switches what Save sends; a title the user typed stays, the suggested one follows the choice. */
export function choose(what: 'page' | 'selection'): void {
  if (!offer) return;
  extracted = what === 'selection' && offer.selection ? offer.selection : offer.page;
  const title = $<HTMLInputElement>('title');
  if (title.value === suggestedTitle) title.value = extracted.title;
  suggestedTitle = extracted.title;
  $('save-heading').textContent = extracted === offer.selection ? 'Save this selection?' : 'Save this page?';
  setStatus($('page-info'), describe(extracted), 'muted');
}

/** The page, and when text is selected on it, the selection (chosen first: it is why the popup
 * was opened) as a memory of its own. */
export async function loadPreview(tabId: number): Promise<void> {
  try {
    offer = await ask({ type: 'preview', tabId });
    $('what').hidden = !offer.selection;
    choose(offer.selection ? 'selection' : 'page');
    $<HTMLButtonElement>('save').disabled = false;
  } catch (err) {
    setStatus($('page-info'), `Cannot read this page: ${(err as Error).message}`, 'bad');
  }
}

function report(outcome: Outcome): void {
  const el = $('save-status');
  if (outcome.state === 'saved') {
    const note = duplicateNote({ duplicate: !!outcome.memory.duplicate, ...outcome });
    const again = note ? ` (${note})` : '';
    setStatus(el, 'Saved ✓ ', 'ok');
    el.dataset.memoryId = outcome.memory.id;
    void linkToMemory(el, outcome.memory.id, outcome.memory.title, again);
  } else if (outcome.state === 'queued') {
    setStatus(el, 'Kept here: it is sent as soon as memlane takes it.', 'warn');
  } else {
    setStatus(el, `Not saved: ${outcome.error}`, 'bad');
  }
}

/** "Saved ✓ <title>": the title links to the memory in the web app when the server serves one. */
async function linkToMemory(el: HTMLElement, id: string, title: string, again: string): Promise<void> {
  const appUrl = await memlaneApp();
  if (el.dataset.memoryId !== id) return; // a newer save replaced this one
  if (appUrl) {
    const link = document.createElement('a');
    link.href = memoryPageUrl(appUrl, id);
    link.textContent = `"${title}"`;
    link.id = 'saved-link';
    link.addEventListener('click', (e) => {
      e.preventDefault();
      void browser.tabs.create({ url: link.href }).then(() => window.close());
    });
    el.append(link, `${again}: open it in memlane`);
  } else {
    el.append(`"${title}"${again}`);
  }
}

/** The title field's value when the user changed it, else undefined (the page's own title is used). */
function typedTitle(): string | undefined {
  const value = $<HTMLInputElement>('title').value.trim();
  return value && value !== suggestedTitle.trim() ? value : undefined;
}

export async function onSave(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  if (!extracted) return;
  const button = $<HTMLButtonElement>('save');
  button.disabled = true;
  setStatus($('save-status'), 'Saving…');
  try {
    const outcome = await ask({
      type: 'save',
      extracted,
      choices: {
        title: typedTitle(),
        projectId: $<HTMLSelectElement>('project').value || undefined,
        tags: parseTags($<HTMLInputElement>('tags').value),
        autoForget: $<HTMLInputElement>('auto-forget').checked,
      },
    });
    report(outcome);
  } catch (err) {
    setStatus($('save-status'), `Not saved: ${(err as Error).message}`, 'bad');
  } finally {
    button.disabled = false;
    await showOutbox();
  }
}
