/** The popup (spec §7.4): save this page, or the selection on it, with a title, project, tags and
 * auto-forget; quick search. Everything shown from memlane or the page is set as text, never as
 * HTML: memories are untrusted. */
import { browser } from 'wxt/browser';
import type { RecalledDocument } from '@/lib/api';
import { memoryPageUrl } from '@/lib/app';
import type { Extracted } from '@/lib/extract/types';
import { parseTags } from '@/lib/memory';
import { ask, type Preview, type ProjectsView } from '@/lib/messages';
import type { Outcome, OutboxStatus } from '@/lib/outbox';
import { setStatus, showMessage } from '@/lib/pages';
import { duplicateNote } from '@/lib/resave';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

let offer: Preview | null = null;
/** What Save sends: the page, or the selection. */
let extracted: Extracted | null = null;
/** The title the popup filled in for it: a title field still holding it was not typed. */
let suggestedTitle = '';

/** Opened from the toolbar, the popup saves the active tab; opened as a page (popup.html?tabId=N,
 * as the end-to-end tests do), the tab it names. */
async function targetTabId(): Promise<number | undefined> {
  const fromQuery = Number(new URLSearchParams(location.search).get('tabId'));
  if (Number.isInteger(fromQuery) && fromQuery > 0) return fromQuery;
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  return tab?.id;
}

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
function choose(what: 'page' | 'selection'): void {
  if (!offer) return;
  extracted = what === 'selection' && offer.selection ? offer.selection : offer.page;
  const title = $<HTMLInputElement>('title');
  if (title.value === suggestedTitle) title.value = extracted.title;
  suggestedTitle = extracted.title;
  $('save-heading').textContent = extracted === offer.selection ? 'Save this selection?' : 'Save this page?';
  setStatus($('page-info'), describe(extracted), '');
  $('page-info').classList.add('muted');
}

/** The page, and when text is selected on it, the selection (chosen first: it is why the popup
 * was opened) as a memory of its own. */
async function loadPreview(tabId: number): Promise<void> {
  try {
    offer = await ask({ type: 'preview', tabId });
    $('what').hidden = !offer.selection;
    choose(offer.selection ? 'selection' : 'page');
    $<HTMLButtonElement>('save').disabled = false;
  } catch (err) {
    setStatus($('page-info'), `Cannot read this page: ${(err as Error).message}`, 'bad');
  }
}

function projectLabel(p: ProjectsView['projects'][number]): string {
  return `${p.name} (${p.memory_count} ${p.memory_count === 1 ? 'memory' : 'memories'})`;
}

/** memlane's projects, or the list it last gave when it cannot be reached: the project picked is
 * the one a waiting save is sent to. */
async function loadProjects(lastProjectId?: string): Promise<void> {
  const view = await ask({ type: 'projects' }).catch(
    (err: Error): ProjectsView => ({ projects: [], live: false, problem: { kind: 'server', message: err.message } }),
  );
  showConnection(view);
  if (!view.projects.length) return; // nothing known yet: saves go to the default project
  const select = $<HTMLSelectElement>('project');
  select.replaceChildren(...view.projects.map((p) => new Option(projectLabel(p), p.id)));
  const preferred = view.projects.find((p) => p.id === lastProjectId) ?? view.projects.find((p) => p.is_default);
  if (preferred) select.value = preferred.id;
}

function seenWhen(at: number | undefined): string {
  if (at === undefined) return 'No project list seen yet: saves go to the default project.';
  const when = new Date(at).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });
  return `Projects as memlane listed them on ${when}.`;
}

/** Why memlane cannot be used now, and what still works: saves wait here, to the project chosen. */
function showConnection(view: ProjectsView): void {
  const box = $('connection');
  const problem = view.problem;
  box.hidden = !problem || problem.message.startsWith('no API key yet'); // the setup notice says that
  document.body.dataset.connection = problem?.kind ?? 'ok';
  if (!problem) return;
  const text = $('connection-text');
  const waits = 'Saves wait here and are sent to the project chosen once memlane takes them.';
  if (problem.kind === 'unreachable') {
    showMessage(text, `Offline: ${problem.message}. ${seenWhen(view.seenAt)} ${waits}`, 'warn');
  } else if (problem.kind === 'auth') {
    showMessage(text, `memlane refused the API key (${problem.message}): fix it in the options. ${seenWhen(view.seenAt)} ${waits}`, 'bad');
  } else if (problem.kind === 'origin') {
    showMessage(text, problem.message, 'bad'); // ends with the command that lets this extension in
  } else {
    showMessage(text, `${problem.message}${problem.message.endsWith('.') ? '' : '.'} ${waits}`, 'bad');
  }
}

async function showOutbox(): Promise<void> {
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
  appUrl ??= await ask({ type: 'app-url' }).catch(() => null);
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

async function onSave(event: SubmitEvent): Promise<void> {
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

// ------------------------------------------------------------------------------- search

let appUrl: string | null | undefined;
let searchSeq = 0;

function resultItem(r: RecalledDocument): HTMLLIElement {
  const li = document.createElement('li');
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'result';
  button.dataset.id = r.document_id;
  const title = document.createElement('span');
  title.className = 'result-title';
  title.textContent = r.title;
  const snippet = document.createElement('span');
  snippet.className = 'snippet';
  snippet.textContent = (r.summary || r.chunks[0]?.content || '').slice(0, 240);
  button.append(title, snippet);
  button.addEventListener('click', () => void openResult(r));
  li.append(button);
  return li;
}

async function openResult(r: RecalledDocument): Promise<void> {
  appUrl ??= await ask({ type: 'app-url' }).catch(() => null);
  if (appUrl) {
    await browser.tabs.create({ url: memoryPageUrl(appUrl, r.document_id) });
    window.close();
    return;
  }
  // No web app on this server: show the memory's text here.
  $('results').hidden = true;
  const reader = $('reader');
  reader.hidden = false;
  $('reader-title').textContent = r.title;
  $('reader-source').textContent = r.source_url ?? '';
  $('reader-text').textContent = 'Loading…';
  try {
    const doc = await ask({ type: 'document', id: r.document_id });
    $('reader-text').textContent = doc.content;
  } catch (err) {
    $('reader-text').textContent = `Could not load it: ${(err as Error).message}`;
  }
}

async function search(query: string): Promise<void> {
  const seq = ++searchSeq;
  const status = $('search-status');
  $('reader').hidden = true;
  $('results').hidden = false;
  if (!query.trim()) {
    $('results').replaceChildren();
    setStatus(status, '');
    return;
  }
  setStatus(status, 'Searching…');
  try {
    const results = await ask({ type: 'recall', query });
    if (seq !== searchSeq) return; // a newer query is on its way
    $('results').replaceChildren(...results.map(resultItem));
    setStatus(status, results.length ? '' : 'No memories match.');
  } catch (err) {
    if (seq === searchSeq) setStatus(status, `Search failed: ${(err as Error).message}`, 'bad');
  }
}

/** ↓ from the search box goes to the first result, ↓ and ↑ move through them, ↑ from the first
 * goes back to the box; Enter opens the result in focus (it is a button). */
function onSearchKey(event: KeyboardEvent): void {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  const results = [...document.querySelectorAll<HTMLButtonElement>('#results button.result')];
  if (!results.length || $('results').hidden) return;
  event.preventDefault();
  const at = results.indexOf(document.activeElement as HTMLButtonElement);
  const next = event.key === 'ArrowDown' ? Math.min(at + 1, results.length - 1) : at - 1;
  if (next < 0) $('query').focus();
  else results[next].focus();
}

// --------------------------------------------------------------------------------- start

async function main(): Promise<void> {
  $('open-options').addEventListener('click', () => void browser.runtime.openOptionsPage());
  $('setup-options').addEventListener('click', () => void browser.runtime.openOptionsPage());
  $('cancel').addEventListener('click', () => window.close());
  $('save-form').addEventListener('submit', (e) => void onSave(e as SubmitEvent));
  $('retry').addEventListener('click', () => {
    setStatus($('outbox-text'), 'Sending…');
    void ask({ type: 'outbox-flush' }).finally(showOutbox);
  });
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="what"]')) {
    radio.addEventListener('change', () => choose(radio.value as 'page' | 'selection'));
  }
  $('search').addEventListener('keydown', onSearchKey);
  $('reader-close').addEventListener('click', () => {
    $('reader').hidden = true;
    $('results').hidden = false;
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const query = $<HTMLInputElement>('query');
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(timer);
    void search(query.value);
  });
  query.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void search(query.value), 350);
  });

  const settings = await ask({ type: 'settings-get' });
  $('setup').hidden = settings.hasKey;
  const tabId = await targetTabId();
  await Promise.all([
    tabId === undefined ? Promise.resolve() : loadPreview(tabId),
    loadProjects(settings.lastProjectId),
    // Opening the popup is a good moment to send what waits.
    ask({ type: 'outbox-flush' }).catch(() => undefined).then(showOutbox),
  ]);
  document.body.dataset.ready = 'true';
}

void main();
