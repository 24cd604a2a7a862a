/** Which extractor a page gets. Each platform's extractor is also built as a content script of its
 * own (entrypoints/*.content.ts); when it finds nothing it knows (a GitHub settings page, an X
 * search page), the page gets the default extraction. */
import { extractGdocs } from './gdocs';
import { extractGeneric } from './generic';
import { extractGithub } from './github';
import { extractTwitter } from './twitter';
import type { Extracted } from './types';
import { extractYoutube } from './youtube';
import type { Platform } from './platforms';

export { platformFor, type Platform } from './platforms';

const EXTRACTORS: Record<Platform, (doc: Document) => Extracted | null> = {
  github: extractGithub,
  twitter: extractTwitter,
  youtube: extractYoutube,
  gdocs: extractGdocs,
};

export function extractWith(platform: Platform | null, doc: Document): Extracted {
  const found = platform ? EXTRACTORS[platform](doc) : null;
  return found ?? extractGeneric(doc);
}

/** What the popup is offered for a tab: the page, and the text selected on it ('' when none),
 * which is saved apart from the page when the user chooses it. */
export interface PageRead {
  page: Extracted;
  selection: string;
}

export function readPage(platform: Platform | null, doc: Document, selection: string): PageRead {
  return { page: extractWith(platform, doc), selection };
}

export type { Extracted } from './types';
