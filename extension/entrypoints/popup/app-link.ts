/** memlane's web app, when the server serves one: saved and found memories open there. */
import { memoryPageUrl } from '@/lib/app';
import { ask } from '@/lib/messages';

let appUrl: string | null | undefined;

/** The web app's URL (asked of the service worker once per popup), or null. */
export async function memlaneApp(): Promise<string | null> {
  appUrl ??= await ask({ type: 'app-url' }).catch(() => null);
  return appUrl;
}

export { memoryPageUrl };
