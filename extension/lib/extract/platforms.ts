/** Which sites have an extractor of their own. Kept apart from the extractors, so the service
 * worker can decide without bundling them. */

export type Platform = 'github' | 'twitter' | 'youtube' | 'gdocs';

/** Match patterns of the platform content scripts (their manifest entries). */
export const PLATFORM_MATCHES: Record<Platform, string[]> = {
  github: ['https://github.com/*'],
  twitter: ['https://x.com/*', 'https://twitter.com/*', 'https://mobile.x.com/*', 'https://mobile.twitter.com/*'],
  youtube: ['https://www.youtube.com/*', 'https://m.youtube.com/*'],
  gdocs: ['https://docs.google.com/document/*'],
};

export function platformFor(href: string | undefined): Platform | null {
  if (!href) return null;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:') return null;
  const host = url.hostname;
  if (host === 'github.com') return 'github';
  if (['x.com', 'twitter.com', 'mobile.x.com', 'mobile.twitter.com'].includes(host)) return 'twitter';
  if (host === 'www.youtube.com' || host === 'm.youtube.com') return 'youtube';
  if (host === 'docs.google.com' && url.pathname.startsWith('/document/')) return 'gdocs';
  return null;
}

