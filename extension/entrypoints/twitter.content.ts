/** twitter: answers the service worker's extraction request with lib/extract/twitter.ts (spec §7.3). */
import { defineContentScript } from 'wxt/utils/define-content-script';
import { answerExtractRequests } from '@/lib/content';
import { PLATFORM_MATCHES } from '@/lib/extract/platforms';

export default defineContentScript({
  matches: PLATFORM_MATCHES.twitter,
  runAt: 'document_idle',
  main() {
    answerExtractRequests('twitter');
  },
});
