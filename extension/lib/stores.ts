/** Where the extension keeps its state: IndexedDB databases of the extension's own origin. Only the
 * extension's pages and service worker can open them; content scripts run in the web page's
 * origin (and process) and cannot, unlike chrome.storage.local, which Firefox exposes to content
 * scripts. So the API key and the queued saves never reach a page or a content script. */
import { createStore, del, get, set, values } from 'idb-keyval';
import type { Project } from './api';
import type { ItemStore, OutboxItem } from './outbox';

/** The project list as memlane last gave it (names and counts), for the popup to offer while
 * memlane cannot be reached: a save made then still goes to the project the user picks. */
export interface ProjectsSeen {
  /** The memlane URL the list came from: another server's projects are not offered. */
  url: string;
  at: number;
  projects: Pick<Project, 'id' | 'name' | 'memory_count' | 'is_default'>[];
}

export interface Settings {
  url: string;
  apiKey: string;
  /** The project the popup last saved to: the context menu and the shortcut save there too. */
  lastProjectId?: string;
  projectsSeen?: ProjectsSeen;
}

export const DEFAULT_URL = 'http://127.0.0.1:7432';

let settingsDb: ReturnType<typeof createStore> | undefined;
let outboxDb: ReturnType<typeof createStore> | undefined;

// One database per store: idb-keyval opens each database with a single object store.
const settingsStore = () => (settingsDb ??= createStore('memlane-settings', 'settings'));
const outboxStore = () => (outboxDb ??= createStore('memlane-outbox', 'items'));

export async function loadSettings(): Promise<Settings> {
  const saved = (await get<Partial<Settings>>('settings', settingsStore())) ?? {};
  return { url: saved.url || DEFAULT_URL, apiKey: saved.apiKey ?? '', lastProjectId: saved.lastProjectId,
    projectsSeen: saved.projectsSeen };
}

export async function saveSettings(update: Partial<Settings>): Promise<Settings> {
  const next = { ...(await loadSettings()), ...update };
  await set('settings', next, settingsStore());
  return next;
}

export const idbOutbox: ItemStore = {
  all: () => values<OutboxItem>(outboxStore()),
  put: (item) => set(item.id, item, outboxStore()),
  remove: (id) => del(id, outboxStore()),
};
