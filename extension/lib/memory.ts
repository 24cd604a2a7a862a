/** The POST /v3/memory body for each way of saving: the page (popup, shortcut, context menu), a
 * selection, a link. */
import type { MemoryBody } from './api';
import { canonicalUrl, capped, type Extracted } from './extract/types';
import type { Wanted } from './resave';

export const AUTO_FORGET_DAYS = 30;
const DAY_MS = 24 * 3600 * 1000;

/** What the user chose for a save. `title` only when they typed one (the page's own title is
 * the default): a typed title and tags are also applied to a memory memlane already holds. */
export interface SaveChoices {
  title?: string;
  projectId?: string;
  tags?: string[];
  autoForget?: boolean;
}

/** The typed title and tags of a save, or undefined when the user typed neither. */
export function wantedOf(choices: SaveChoices): Wanted | undefined {
  const title = choices.title?.trim().slice(0, 500);
  const tags = choices.tags?.length ? choices.tags : undefined;
  if (!title && !tags) return undefined;
  return { ...(title ? { title } : {}), ...(tags ? { tags } : {}) };
}

/** "ai, ml,  ml" → ["ai", "ml"]: memlane allows 100 tags of 100 characters. */
export function parseTags(text: string): string[] {
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const tag = raw.trim().slice(0, 100);
    if (tag) seen.add(tag);
  }
  return [...seen].slice(0, 100);
}

export function memoryBody(extracted: Extracted, choices: SaveChoices = {}, now = new Date()): MemoryBody {
  const e = capped(extracted);
  const metadata: Record<string, unknown> = { ...e.metadata, saved_with: 'memlane-extension' };
  if (choices.tags?.length) metadata.tags = choices.tags;
  const body: MemoryBody = {
    content: e.content,
    title: (choices.title?.trim() || e.title).slice(0, 500),
    content_type: e.contentType,
    metadata,
  };
  if (/^https?:/.test(e.sourceUrl)) body.source_url = e.sourceUrl;
  if (choices.projectId) body.project_id = choices.projectId;
  if (choices.autoForget) body.forget_after = new Date(now.getTime() + AUTO_FORGET_DAYS * DAY_MS).toISOString();
  return body;
}

/** A text fragment (#:~:text=start,end) pointing at the selection: the link opens the page with the
 * passage highlighted, and a selection is not taken for a new version of the whole page (memlane
 * versions by source_url). */
export function selectionUrl(pageUrl: string, text: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/-/g, '%2D');
  const words = text.trim().split(/\s+/).filter(Boolean);
  const directive =
    words.length <= 8 ? enc(words.join(' ')) : `${enc(words.slice(0, 4).join(' '))},${enc(words.slice(-4).join(' '))}`;
  const url = new URL(canonicalUrl(pageUrl));
  url.hash = '';
  return `${url.toString()}#:~:text=${directive}`;
}

const SELECTION_TITLE_CHARS = 60;

/** A selection's title is its first words (up to 60 characters, cut between words), so it reads
 * apart from its page's title in results; the page's title is kept in its metadata. */
export function selectionTitle(text: string): string {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let title = '';
  for (const word of words) {
    const next = title ? `${title} ${word}` : word;
    if (next.length > SELECTION_TITLE_CHARS) {
      return `${(title || word.slice(0, SELECTION_TITLE_CHARS)).replace(/[\s,;:.!?–—-]+$/, '')}…`;
    }
    title = next;
  }
  return title;
}

/** A selection is a memory of its own, never a version of its page: its source_url is the page's
 * address with a text fragment for the passage (memlane versions saves by source_url). */
export function selectionExtract(pageUrl: string, pageTitle: string, text: string): Extracted {
  const page = canonicalUrl(pageUrl);
  return {
    title: selectionTitle(text) || pageTitle || new URL(pageUrl).hostname,
    content: text.trim(),
    contentType: 'text',
    sourceUrl: selectionUrl(pageUrl, text),
    metadata: { source: 'web', kind: 'selection', page_url: page, ...(pageTitle ? { page_title: pageTitle } : {}) },
  };
}

export function linkExtract(linkUrl: string, linkText: string, pageUrl: string | undefined): Extracted {
  const text = linkText.trim();
  return {
    title: text || linkUrl,
    content: text ? `${text}\n${linkUrl}` : linkUrl,
    contentType: 'text',
    sourceUrl: linkUrl,
    metadata: { source: 'web', kind: 'link', ...(pageUrl ? { found_on: canonicalUrl(pageUrl) } : {}) },
  };
}
