/** gdocs: answers the service worker's extraction request with lib/extract/gdocs.ts (spec §7.3). */
import { defineContentScript } from 'wxt/utils/define-content-script';
import { answerExtractRequests } from '@/lib/content';

export default defineContentScript({
  // Kept in step with PLATFORM_MATCHES in lib/extract/index.ts (a test checks the built manifest).
  matches: ['https://docs.google.com/document/*'],
  runAt: 'document_idle',
  main() {
    answerExtractRequests('gdocs');
  },
});
