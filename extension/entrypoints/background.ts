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
  probeOrigin,
  type ProjectList,
  type RecallIn,
  type RecallOut,
  testConnection,
} from '@/lib/api';
import { servesWebApp } from '@/lib/app';
import { Badge, FAILED_HOLD_MS, failedView, SAVED_HOLD_MS, savedView } from '@/lib/badge';
import type { PageRead } from '@/lib/extract';
import { platformFor } from '@/lib/extract/platforms';
import type { Extracted } from '@/lib/extract/types';
import { linkExtract, memoryBody, type SaveChoices, selectionExtract, wantedOf } from '@/lib/memory';
import { EXTRACT_MESSAGE, type Preview, type ProjectsView, type Replies, type Request } from '@/lib/messages';
import { Outbox, type OutboxItem, type Outcome, type Receipt } from '@/lib/outbox';
import { applyEdits, type Delivery, duplicateNote } from '@/lib/resave';
import { idbOutbox, loadSettings, type ProjectsSeen, saveSettings, type Settings } from '@/lib/stores';

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

function extensionOrigin(): string {
  return new URL(browser.runtime.getURL('/')).origin;
}

async function connection(settings?: Settings): Promise<Connection> {
  const s = settings ?? (await loadSettings());
  if (!s.apiKey) throw new ApiError('setup', 'no API key yet: open the extension options and enter your memlane URL and key');
  const granted = await browser.permissions.contains({ origins: [permissionPattern(s.url)] });
  if (!granted) {
    throw new ApiError('setup', `the extension may not reach ${new URL(s.url).origin}: open the options and save to allow it`);
  }
  return { url: s.url, apiKey: s.apiKey, origin: extensionOrigin() };
}

// --------------------------------------------------------------------------------- outbox

const badge = new Badge(browser.action);

/** POST /v3/memory; a duplicate that brings a typed title or tags gets them (lib/resave.ts). */
async function sendItem(item: OutboxItem, attempts: number): Promise<Delivery> {
  const conn = await connection();
  const memory = await call<MemoryOut>(conn, 'POST', '/v3/memory', { body: item.body, idempotencyKey: item.id, attempts });
  if (!memory.duplicate) await countInProjectsSeen(conn.url, memory.project_id);
  return applyEdits(memory, item.wanted, (id, patch) =>
    call<DocumentOut>(conn, 'PATCH', `/v3/documents/${encodeURIComponent(id)}`, { body: patch, attempts }),
  );
}

/** A new memory counts in the project list kept for the popup, until memlane lists it again. */
async function countInProjectsSeen(url: string, projectId: string): Promise<void> {
  const seen = (await loadSettings()).projectsSeen;
  if (seen?.url !== url || !seen.projects.some((p) => p.id === projectId)) return;
  const projects = seen.projects.map((p) => (p.id === projectId ? { ...p, memory_count: p.memory_count + 1 } : p));
  await saveSettings({ projectsSeen: { ...seen, projects } });
}

async function scheduleRetry(when: number | null, pending: number): Promise<void> {
  if (when === null) await browser.alarms.clear(RETRY_ALARM);
  else await browser.alarms.create(RETRY_ALARM, { when: Math.max(when, Date.now() + 1000) });
  await badge.waiting(pending);
}

function describeReceipts(receipts: Receipt[]): string {
  const each = receipts.map((r) => {
    const note = duplicateNote(r);
    return `"${r.title}"${note ? ` (${note})` : ''}`;
  });
  return `memlane: sent ${receipts.length} save(s) that waited: ${each.join('; ')}`;
}

const outbox = new Outbox(idbOutbox, sendItem, {
  scheduled: scheduleRetry,
  delivered: (receipts) => badge.flash(savedView(describeReceipts(receipts)), SAVED_HOLD_MS),
});

/** After any call memlane answered: it is reachable, so whatever waits goes now. */
function reachable<T>(value: T): T {
  void outbox.flush(true).catch(() => undefined);
  return value;
}

// ----------------------------------------------------------------------------- extraction

function isWebPage(url: string | undefined): url is string {
  return !!url && /^https?:\/\//.test(url);
}

/** The tab's page and its selection: from the platform's content script, else the injected extractor. */
async function readTab(tabId: number): Promise<PageRead> {
  const tab = await browser.tabs.get(tabId);
  if (!isWebPage(tab.url)) throw new Error('memlane saves web pages (http and https) only');
  if (platformFor(tab.url)) {
    try {
      const reply = (await browser.tabs.sendMessage(tabId, { type: EXTRACT_MESSAGE }, { frameId: 0 })) as
        | { ok: true; value: PageRead }
        | { ok: false; error: string }
        | undefined;
      if (reply?.ok) return reply.value;
      if (reply && !reply.ok) throw new Error(reply.error);
    } catch (err) {
      // No content script in this tab (it was open before the extension was installed): inject below.
      if (!/Receiving end does not exist|Could not establish connection/i.test((err as Error).message)) throw err;
    }
  }
  const [injection] = await browser.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: ['/extract-page.js'] });
  const result = injection?.result as PageRead | undefined;
  if (!result?.page?.content?.trim()) throw new Error('this page has no text to save');
  return result;
}

async function extractFromTab(tabId: number): Promise<Extracted> {
  return (await readTab(tabId)).page;
}

/** The popup's offer: the page, and the selection as a memory of its own (never a version of the page). */
async function preview(tabId: number): Promise<Preview> {
  const [{ page, selection }, tab] = await Promise.all([readTab(tabId), browser.tabs.get(tabId)]);
  if (!selection.trim() || !tab.url) return { page, selection: null };
  return { page, selection: selectionExtract(tab.url, tab.title || page.title, selection) };
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
  const outcome = await outbox.submit(memoryBody(extracted, choices), wantedOf(choices));
  await announce(outcome);
  return outcome;
}

async function quickChoices(): Promise<SaveChoices> {
  const { lastProjectId } = await loadSettings();
  return lastProjectId ? { projectId: lastProjectId } : {};
}

/** The toolbar badge says how a save went, for a few seconds (from the menu or the shortcut there
 * is no popup to say it). */
async function announce(outcome: Outcome): Promise<void> {
  if (outcome.state === 'saved') {
    const note = duplicateNote({ duplicate: !!outcome.memory.duplicate, ...outcome });
    await badge.flash(savedView(`memlane: saved "${outcome.memory.title}"${note ? ` (${note})` : ''}`), SAVED_HOLD_MS);
  } else if (outcome.state === 'failed') {
    await badge.flash(failedView(`memlane: not saved: ${outcome.error}`), FAILED_HOLD_MS);
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
    return await save(extracted, await quickChoices());
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
    return await save(await extractFromTab(target.id), await quickChoices());
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
    origin: extensionOrigin(),
    lastProjectId: s.lastProjectId,
  };
}

/** memlane's projects, kept for the next popup; when memlane cannot be used (down, the key or this
 * extension's origin refused) the list last seen from the same URL, with why. The origin is
 * checked too: memlane answers GETs to an origin it refuses, so the list alone looks healthy. */
async function projectsView(): Promise<ProjectsView> {
  const settings = await loadSettings();
  try {
    const conn = await connection(settings);
    const [list] = await Promise.all([
      call<ProjectList>(conn, 'GET', '/v3/projects', { attempts: 2 }),
      probeOrigin(conn).catch((err: unknown) => {
        if (err instanceof ApiError && err.kind === 'origin') throw err; // anything else: the list says it
      }),
    ]);
    const seen: ProjectsSeen = {
      url: settings.url,
      at: Date.now(),
      projects: list.projects.map(({ id, name, memory_count, is_default }) => ({ id, name, memory_count, is_default })),
    };
    await saveSettings({ projectsSeen: seen });
    return reachable({ projects: seen.projects, live: true });
  } catch (err) {
    const seen = settings.projectsSeen?.url === settings.url ? settings.projectsSeen : undefined;
    const problem = err instanceof ApiError ? { kind: err.kind, message: err.message } : { kind: 'server' as const, message: String((err as Error)?.message ?? err) };
    return { projects: seen?.projects ?? [], live: false, seenAt: seen?.at, problem };
  }
}

async function handle(request: Request): Promise<Replies[Request['type']]> {
  switch (request.type) {
    case 'preview':
      return preview(request.tabId);
    case 'save':
      return save(request.extracted, request.choices);
    case 'projects':
      return projectsView();
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
      return reachable(await testConnection(conn));
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
  (globalThis as Record<string, unknown>).memlane = { onContextMenuClicked, onCommand, outbox, badge };
});
