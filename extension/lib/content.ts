/** The content-script side of extraction: answer the service worker's "extract" request with this
 * page's content. Content scripts never see settings or the API key; they only read the page. */
import { browser } from 'wxt/browser';
import { type Platform, readPage } from './extract';
import { EXTRACT_MESSAGE } from './messages';

export function answerExtractRequests(platform: Platform): void {
  const flag = '__memlaneExtractor';
  const scope = globalThis as Record<string, unknown>;
  if (scope[flag]) return; // injected again into a page that already has it
  scope[flag] = true;
  browser.runtime.onMessage.addListener((message: unknown, sender, sendResponse) => {
    if ((message as { type?: string })?.type !== EXTRACT_MESSAGE || sender.id !== browser.runtime.id || sender.tab) return;
    try {
      sendResponse({ ok: true, value: readPage(platform, document, window.getSelection()?.toString() ?? '') });
    } catch (err) {
      sendResponse({ ok: false, error: `could not read this page: ${(err as Error).message}` });
    }
  });
}
