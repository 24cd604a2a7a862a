/** The service worker (spec §7.2): the only part that talks to memlane and holds the key. It saves
 * through the outbox (lib/outbox.ts), extracts pages through content scripts, and answers the
 * popup and the options page. */
import { browser, type Browser } from 'wxt/browser';
import { defineBackground } from 'wxt/utils/define-background';
import {
  ApiError,
  call,
  type Connection,
  type DocumentOut,
  type MemoryOut,
  normalizeBaseUrl,
  type ProjectList,
  type RecallIn,
  type RecallOut,
  testConnection,
} from '@/lib/api';
import { servesWebApp } from '@/lib/app';
import { platformFor } from '@/lib/extract/platforms';
import type { Extracted } from '@/lib/extract/types';
import { linkExtract, memoryBody, type SaveChoices, selectionExtract } from '@/lib/memory';
import { EXTRACT_MESSAGE, type Replies, type Reply, type Request } from '@/lib/messages';
import { Outbox, type OutboxItem, type Outcome } from '@/lib/outbox';
import { idbOutbox, loadSettings, saveSettings, type Settings } from '@/lib/stores';

const MENU_ID = 'save-to-memory';
const COMMAND = 'save-page';
const RETRY_ALARM = 'memlane-outbox';
const APP_CHECK_TTL_MS = 60_000;

// ------------------------------------------------------------------------------ connection

/** The host permission pattern for the memlane URL; loopback is granted by the manifest, any other
 * server is granted by the user on the options page. */
function permissionPattern(url: string): string {
  return `${new URL(url).origin}/*`;
}

async function connection(settings?: Settings): Promise<Connection> {
  const s = settings ?? (await loadSettings());
  if (!s.apiKey) throw new ApiError('auth', 'no API key yet: open the extension options and enter your memlane URL and key');
  const granted = await browser.permissions.contains({ origins: [permissionPattern(s.url)] });
  if (!granted) {
    throw new ApiError('auth', `the extension may not reach ${new URL(s.url).origin}: open the options and save to allow it`);
  }
  return { url: s.url, apiKey: s.apiKey };
}

// --------------------------------------------------------------------------------- outbox

async function sendItem(item: OutboxItem, attempts: number): Promise<MemoryOut> {
  return call<MemoryOut>(await connection(), 'POST', '/v3/memory', { body: item.body, idempotencyKey: item.id, attempts });
}

async function scheduleRetry(when: number | null, pending: number): Promise<void> {
  if (when === null) await browser.alarms.clear(RETRY_ALARM);
  else await browser.alarms.create(RETRY_ALARM, { when: Math.max(when, Date.now() + 1000) });
  await browser.action.setBadgeBackgroundColor({ color: '#b45309' });
  await browser.action.setBadgeText({ text: pending ? String(pending) : '' });
  await browser.action.setTitle({ title: pending ? `memlane: ${pending} save(s) waiting to be sent` : 'memlane' });
}

const outbox = new Outbox(idbOutbox, sendItem, scheduleRetry);

/** After any call memlane answered: it is reachable, so whatever waits goes now. */
function reachable<T>(value: T): T {
  void outbox.flush(true).catch(() => undefined);
  return value;
}

// ----------------------------------------------------------------------------- extraction

function isWebPage(url: string | undefined): url is string {
  return !!url && /^https?:\/\//.test(url);
}

async function extractFromTab(tabId: number): Promise<Extracted> {
  const tab = await browser.tabs.get(tabId);
  if (!isWebPage(tab.url)) throw new Error('memlane saves web pages (http and https) only');
  if (platformFor(tab.url)) {
    try {
      const reply = (await browser.tabs.sendMessage(tabId, { type: EXTRACT_MESSAGE }, { frameId: 0 })) as
        | Reply<'preview'>
        | undefined;
      if (reply?.ok) return reply.value;
      if (reply && !reply.ok) throw new Error(reply.error);
    } catch (err) {
      // No content script in this tab (it was open before the extension was installed): inject below.
      if (!/Receiving end does not exist|Could not establish connection/i.test((err as Error).message)) throw err;
    }
  }
  const [injection] = await browser.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: ['/extract-page.js'] });
  const result = injection?.result as Extracted | undefined;
  if (!result?.content?.trim()) throw new Error('this page has no text to save');
  return result;
}

async function readSelection(tabId: number, frameId: number, fallback: string): Promise<string> {
  // The menu's selectionText has its line breaks collapsed; the page's selection keeps them.
  try {
    const [res] = await browser.scripting.executeScript({
      target: { tabId, frameIds: [frameId] },
      func: () => window.getSelection()?.toString() ?? '',
    });
    const text = typeof res?.result === 'string' ? res.result : '';
    if (text.trim()) return text;
  } catch {
    // a frame we may not script: the menu's copy is what we have
  }
  return fallback;
}

async function readLinkText(tabId: number, frameId: number, href: string): Promise<string> {
  try {
    const [res] = await browser.scripting.executeScript({
      target: { tabId, frameIds: [frameId] },
      args: [href],
      func: (wanted: string) => {
        const link = [...document.querySelectorAll('a[href]')].find((a) => (a as HTMLAnchorElement).href === wanted);
        return (link?.textContent ?? '').replace(/\s+/g, ' ').trim();
      },
    });
    return typeof res?.result === 'string' ? res.result : '';
  } catch {
    return '';
  }
}

// ----------------------------------------------------------------------------------- saves

async function save(extracted: Extracted, choices: SaveChoices): Promise<Outcome> {
  if (choices.projectId) await saveSettings({ lastProjectId: choices.projectId });
  return outbox.submit(memoryBody(extracted, choices));
}

async function quickChoices(): Promise<SaveChoices> {
  const { lastProjectId } = await loadSettings();
  return lastProjectId ? { projectId: lastProjectId } : {};
}

/** The toolbar badge says how a save from the menu or the shortcut went (there is no popup then). */
async function announce(outcome: Outcome): Promise<void> {
  if (outcome.state === 'saved') {
    await browser.action.setBadgeBackgroundColor({ color: '#15803d' });
    await browser.action.setBadgeText({ text: '✓' });
    await browser.action.setTitle({ title: `memlane: saved "${outcome.memory.title}"` });
    setTimeout(() => void outbox.status().then((s) => scheduleRetry(s.nextAttemptAt, s.pending)), 4000);
  } else if (outcome.state === 'failed') {
    await browser.action.setBadgeBackgroundColor({ color: '#b91c1c' });
    await browser.action.setBadgeText({ text: '!' });
    await browser.action.setTitle({ title: `memlane: not saved: ${outcome.error}` });
  }
  // queued: the outbox already shows the number waiting
}

async function failed(error: unknown): Promise<Outcome> {
  const outcome: Outcome = { state: 'failed', error: (error as Error).message };
  await announce(outcome);
  return outcome;
}

/** Right-click "Save to memlane" (spec §7.5): a selection saves the selection, a link the link,
 * anywhere else the page. */
async function onContextMenuClicked(info: Browser.contextMenus.OnClickData, tab?: Browser.tabs.Tab): Promise<Outcome> {
  if (info.menuItemId !== MENU_ID || tab?.id === undefined) return failed(new Error('no tab to save from'));
  const frameId = info.frameId ?? 0;
  try {
    let extracted: Extracted;
    if (info.selectionText) {
      const text = await readSelection(tab.id, frameId, info.selectionText);
      extracted = selectionExtract(info.pageUrl ?? tab.url ?? '', tab.title ?? '', text);
    } else if (info.linkUrl) {
      if (!isWebPage(info.linkUrl)) throw new Error('memlane saves web links (http and https) only');
      extracted = linkExtract(info.linkUrl, await readLinkText(tab.id, frameId, info.linkUrl), info.pageUrl);
    } else {
      extracted = await extractFromTab(tab.id);
    }
    const outcome = await save(extracted, await quickChoices());
    await announce(outcome);
    return outcome;
  } catch (err) {
    return failed(err);
  }
}

/** The keyboard shortcut: save the page in the active tab. */
async function onCommand(command: string, tab?: Browser.tabs.Tab): Promise<Outcome> {
  if (command !== COMMAND) return failed(new Error(`unknown command ${command}`));
  try {
    const target = tab?.id !== undefined ? tab : (await browser.tabs.query({ active: true, lastFocusedWindow: true }))[0];
    if (target?.id === undefined) throw new Error('no active tab');
    const outcome = await save(await extractFromTab(target.id), await quickChoices());
    await announce(outcome);
    return outcome;
  } catch (err) {
    return failed(err);
  }
}

// --------------------------------------------------------------------------------- messages

let appCheck: { url: string; at: number; app: string | null } | undefined;

/** The memlane URL when it serves the web app (checked at most once a minute), else null. */
async function appUrl(): Promise<string | null> {
  const { url } = await loadSettings();
  if (appCheck && appCheck.url === url && Date.now() - appCheck.at < APP_CHECK_TTL_MS) return appCheck.app;
  const app = (await servesWebApp(url)) ? url : null;
  appCheck = { url, at: Date.now(), app };
  return app;
}

async function describeSettings(settings?: Settings): Promise<Replies['settings-get']> {
  const s = settings ?? (await loadSettings());
  return {
    url: s.url,
    hasKey: !!s.apiKey,
    keyHint: s.apiKey ? `${s.apiKey.slice(0, 8)}…` : '',
    origin: new URL(browser.runtime.getURL('/')).origin,
    lastProjectId: s.lastProjectId,
  };
}

async function handle(request: Request): Promise<Replies[Request['type']]> {
  switch (request.type) {
    case 'preview':
      return extractFromTab(request.tabId);
    case 'save':
      return save(request.extracted, request.choices);
    case 'projects': {
      const out = await call<ProjectList>(await connection(), 'GET', '/v3/projects', { attempts: 2 });
      return reachable(out.projects);
    }
    case 'recall': {
      const body: RecallIn = { query: request.query, limit: 8 };
      if (request.projectId) body.project_id = request.projectId;
      const out = await call<RecallOut>(await connection(), 'POST', '/v3/recall', { body, attempts: 2 });
      return reachable(out.results);
    }
    case 'document':
      return call<DocumentOut>(await connection(), 'GET', `/v3/documents/${encodeURIComponent(request.id)}`, { attempts: 2 });
    case 'app-url':
      return appUrl();
    case 'outbox-status':
      return outbox.status();
    case 'outbox-flush':
      return outbox.flush(true);
    case 'outbox-discard':
      await outbox.discard(request.id);
      return null;
    case 'settings-get':
      return describeSettings();
    case 'settings-set': {
      const update: Partial<Settings> = { url: normalizeBaseUrl(request.url) };
      if (request.apiKey !== undefined && request.apiKey.trim()) update.apiKey = request.apiKey.trim();
      const next = await saveSettings(update);
      appCheck = undefined;
      void outbox.flush(true).catch(() => undefined);
      return describeSettings(next);
    }
    case 'whoami': {
      // "Test connection" checks what the form holds, saved or not.
      const saved = await loadSettings();
      const url = request.url ? normalizeBaseUrl(request.url) : saved.url;
      const conn = await connection({ ...saved, url, apiKey: request.apiKey?.trim() || saved.apiKey });
      return reachable(await testConnection(conn, new URL(browser.runtime.getURL('/')).origin));
    }
  }
}

function fromExtensionPage(sender: Browser.runtime.MessageSender): boolean {
  // Only the popup and the options page may ask; content scripts (sender.url is a web page) may not.
  return sender.id === browser.runtime.id && !!sender.url?.startsWith(browser.runtime.getURL('/'));
}

export default defineBackground(() => {
  browser.runtime.onInstalled.addListener(() => {
    void browser.contextMenus.removeAll().then(() =>
      browser.contextMenus.create({ id: MENU_ID, title: 'Save to memlane', contexts: ['selection', 'page', 'link'] }),
    );
    void outbox.flush(true).catch(() => undefined);
  });
  browser.runtime.onStartup.addListener(() => void outbox.flush(true).catch(() => undefined));
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === RETRY_ALARM) void outbox.flush().catch(() => undefined);
  });
  browser.contextMenus.onClicked.addListener((info, tab) => void onContextMenuClicked(info, tab));
  browser.commands.onCommand.addListener((command, tab) => void onCommand(command, tab));
  browser.runtime.onMessage.addListener((message: unknown, sender, sendResponse) => {
    if (!fromExtensionPage(sender)) return false;
    handle(message as Request).then(
      (value) => sendResponse({ ok: true, value }),
      (err: unknown) => sendResponse({ ok: false, error: (err as Error)?.message ?? String(err) }),
    );
    return true; // answered asynchronously
  });
  globalThis.addEventListener?.('online', () => void outbox.flush(true).catch(() => undefined));
  // The handlers the browser calls, reachable from the service worker's console and the end-to-end
  // tests (a native context menu or shortcut cannot be clicked from a test).
  (globalThis as Record<string, unknown>).memlane = { onContextMenuClicked, onCommand, outbox };
});
