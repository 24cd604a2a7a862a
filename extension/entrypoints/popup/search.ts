/** Quick search: memlane's recall as you type, the results a keyboard can walk, a result opened
 * in the web app (or read here when the server has none). */
import { browser } from 'wxt/browser';
import type { RecalledDocument } from '@/lib/api';
import { ask } from '@/lib/messages';
import { byId as $, setStatus } from '@/lib/pages';
import { memlaneApp, memoryPageUrl } from './app-link';

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
  const appUrl = await memlaneApp();
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

export async function search(query: string): Promise<void> {
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
export function onSearchKey(event: KeyboardEvent): void {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  const results = [...document.querySelectorAll<HTMLButtonElement>('#results button.result')];
  if (!results.length || $('results').hidden) return;
  event.preventDefault();
  const at = results.indexOf(document.activeElement as HTMLButtonElement);
  const next = event.key === 'ArrowDown' ? Math.min(at + 1, results.length - 1) : at - 1;
  if (next < 0) $('query').focus();
  else results[next].focus();
}
