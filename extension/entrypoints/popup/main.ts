/** The popup (spec §7.4): save this page, or the selection on it, with a title, project, tags and
 * auto-forget (save.ts); whether memlane can be used and the projects to offer (connection.ts);
 * what waits in the outbox (outbox.ts); quick search (search.ts). Everything shown from memlane or
 * the page is set as text, never as HTML: memories are untrusted. */
import { browser } from 'wxt/browser';
import { ask } from '@/lib/messages';
import { byId as $, setStatus } from '@/lib/pages';
import { loadProjects } from './connection';
import { showOutbox } from './outbox';
import { choose, loadPreview, onSave } from './save';
import { onSearchKey, search } from './search';

/** Opened from the toolbar, the popup saves the active tab; opened as a page (popup.html?tabId=N,
 * as the end-to-end tests do), the tab it names. */
async function targetTabId(): Promise<number | undefined> {
  const fromQuery = Number(new URLSearchParams(location.search).get('tabId'));
  if (Number.isInteger(fromQuery) && fromQuery > 0) return fromQuery;
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  return tab?.id;
}

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
