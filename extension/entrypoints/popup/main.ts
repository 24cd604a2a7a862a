/** The popup (spec §7.4): save this page with a title, project, tags and auto-forget; quick search.
 * Everything shown from memlane or the page is set as text, never as HTML: memories are untrusted. */
import { browser } from 'wxt/browser';
import type { Project, RecalledDocument } from '@/lib/api';
import { memoryPageUrl } from '@/lib/app';
import type { Extracted } from '@/lib/extract/types';
import { parseTags } from '@/lib/memory';
import { ask } from '@/lib/messages';
import type { Outcome } from '@/lib/outbox';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

let extracted: Extracted | null = null;

/** Opened from the toolbar, the popup saves the active tab; opened as a page (popup.html?tabId=N,
 * as the end-to-end tests do), the tab it names. */
async function targetTabId(): Promise<number | undefined> {
  const fromQuery = Number(new URLSearchParams(location.search).get('tabId'));
  if (Number.isInteger(fromQuery) && fromQuery > 0) return fromQuery;
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  return tab?.id;
}

function setStatus(el: HTMLElement, text: string, tone: '' | 'ok' | 'warn' | 'bad' = ''): void {
  el.textContent = text;
  el.className = tone;
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
  else if (m.extractor === 'selection') what = 'Selection';
  return `${what} · ${e.content.length.toLocaleString('en')} characters${m.truncated ? ' (cut to 100,000)' : ''}`;
}

async function loadPreview(tabId: number): Promise<void> {
  try {
    extracted = await ask({ type: 'preview', tabId });
    $<HTMLInputElement>('title').value = extracted.title;
    setStatus($('page-info'), describe(extracted));
    $<HTMLButtonElement>('save').disabled = false;
  } catch (err) {
    setStatus($('page-info'), `Cannot read this page: ${(err as Error).message}`, 'bad');
  }
}

async function loadProjects(lastProjectId?: string): Promise<void> {
  const select = $<HTMLSelectElement>('project');
  let projects: Project[];
  try {
    projects = await ask({ type: 'projects' });
  } catch {
    return; // unreachable or not set up: saves go to the default project (or the queue)
  }
  select.replaceChildren();
  for (const p of projects) {
    const option = new Option(`${p.name} (${p.memory_count} ${p.memory_count === 1 ? 'memory' : 'memories'})`, p.id);
    option.dataset.name = p.name;
    select.add(option);
  }
  const preferred = projects.find((p) => p.id === lastProjectId) ?? projects.find((p) => p.is_default);
  if (preferred) select.value = preferred.id;
}

async function showOutbox(): Promise<void> {
  const status = await ask({ type: 'outbox-status' });
  const box = $('outbox');
  box.hidden = status.pending === 0 && status.failed.length === 0;
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
}

function report(outcome: Outcome): void {
  const el = $('save-status');
  if (outcome.state === 'saved') {
    const again = outcome.memory.duplicate ? ' (already saved: nothing changed)' : '';
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
        title: $<HTMLInputElement>('title').value,
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
