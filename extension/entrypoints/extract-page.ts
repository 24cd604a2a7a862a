/** Injected on demand (activeTab) into the page being saved when no platform content script is
 * there: the default extraction (lib/extract/generic.ts), or the platform's. Its return value is
 * the result of scripting.executeScript. */
import { defineUnlistedScript } from 'wxt/utils/define-unlisted-script';
import { platformFor, readPage } from '@/lib/extract';

export default defineUnlistedScript(() =>
  readPage(platformFor(location.href), document, window.getSelection()?.toString() ?? ''),
);
