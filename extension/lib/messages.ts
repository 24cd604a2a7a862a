/** What the popup and the options page ask the service worker. The worker makes every API call
 * and holds the key; pages get answers, never the key. */
import { browser } from 'wxt/browser';
import type { DocumentOut, ErrorKind, RecalledDocument, WhoAmI } from './api';
import type { Extracted } from './extract/types';
import type { SaveChoices } from './memory';
import type { Outcome, OutboxStatus, Receipt } from './outbox';
import type { ProjectsSeen } from './stores';

/** What the popup may save from a tab: the page, and the selection as a memory of its own. */
export interface Preview {
  page: Extracted;
  selection: Extracted | null;
}

/** Why memlane could not be used just now, as the popup says it. */
export interface Problem {
  kind: ErrorKind;
  message: string;
}

/** The projects to offer: memlane's own (`live`), else the list last seen from it (`seenAt`), with
 * what kept memlane from answering. */
export interface ProjectsView {
  projects: ProjectsSeen['projects'];
  live: boolean;
  seenAt?: number;
  problem?: Problem;
}

export type Request =
  | { type: 'preview'; tabId: number }
  | { type: 'save'; extracted: Extracted; choices: SaveChoices }
  | { type: 'projects' }
  | { type: 'recall'; query: string; projectId?: string }
  | { type: 'document'; id: string }
  | { type: 'app-url' }
  | { type: 'outbox-status' }
  | { type: 'outbox-flush' }
  | { type: 'outbox-discard'; id: string }
  | { type: 'settings-get' }
  | { type: 'settings-set'; url: string; apiKey?: string }
  | { type: 'whoami'; url?: string; apiKey?: string };

export interface Replies {
  preview: Preview;
  save: Outcome;
  projects: ProjectsView;
  recall: RecalledDocument[];
  document: DocumentOut;
  /** `<memlane URL>` when it serves the web app (so memories open there), else null. */
  'app-url': string | null;
  'outbox-status': OutboxStatus;
  'outbox-flush': { sent: number; pending: number; delivered: Receipt[] };
  'outbox-discard': null;
  'settings-get': SettingsView;
  'settings-set': SettingsView;
  whoami: WhoAmI;
}

/** Settings as pages see them: the key only as a hint of its first characters. */
export interface SettingsView {
  url: string;
  hasKey: boolean;
  keyHint: string;
  /** This extension's origin, for `memlane serve --allow-origin`. */
  origin: string;
  lastProjectId?: string;
}

export type Reply<T extends Request['type']> = { ok: true; value: Replies[T] } | { ok: false; error: string };

export async function ask<R extends Request>(request: R): Promise<Replies[R['type']]> {
  const reply = (await browser.runtime.sendMessage(request)) as Reply<R['type']> | undefined;
  if (!reply) throw new Error('the extension did not answer; reload it from the extensions page');
  if (!reply.ok) throw new Error(reply.error);
  return reply.value;
}

/** Asked of a content script: extract this page. */
export const EXTRACT_MESSAGE = 'memlane:extract';
