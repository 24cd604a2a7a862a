/** YouTube (spec §7.3): a watch page's title, channel, description, and the transcript when the
 * page shows it (the "Show transcript" panel). The rendered page is read first: YouTube navigates
 * between videos without reloading, so the JSON in the page's first <script> can describe an
 * earlier video; it is used only when its videoId is the one in the address bar. */
import { capped, type Extracted, metaContent, tidy } from './types';

interface PlayerResponse {
  videoDetails?: { videoId?: string; title?: string; shortDescription?: string; author?: string; lengthSeconds?: string };
  microformat?: { playerMicroformatRenderer?: { publishDate?: string; uploadDate?: string } };
}

/** Reads `var ytInitialPlayerResponse = {…};` from the page's scripts without evaluating anything. */
export function initialPlayerResponse(doc: Document): PlayerResponse | null {
  for (const script of doc.querySelectorAll('script:not([src])')) {
    const text = script.textContent ?? '';
    const marker = text.indexOf('ytInitialPlayerResponse');
    if (marker < 0) continue;
    const start = text.indexOf('{', marker);
    if (start < 0) continue;
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          return JSON.parse(text.slice(start, i + 1)) as PlayerResponse;
        } catch {
          break;
        }
      }
    }
  }
  return null;
}

function transcript(doc: Document): string[] {
  const segments = [
    ...doc.querySelectorAll('ytd-transcript-segment-renderer, transcript-segment-view-model'),
  ];
  return segments
    .map((seg) => {
      const time = tidy(seg.querySelector('.segment-timestamp, [class*="timestamp"]')?.textContent ?? '');
      const words = tidy(seg.querySelector('.segment-text, [class*="segment-text"], span[role="text"]')?.textContent ?? '');
      return words ? (time ? `[${time}] ${words}` : words) : '';
    })
    .filter(Boolean);
}

export function extractYoutube(doc: Document): Extracted | null {
  const url = new URL(doc.URL);
  const videoId = url.searchParams.get('v') ?? /^\/(?:shorts|live)\/([\w-]+)/.exec(url.pathname)?.[1];
  if (!videoId) return null;
  const json = initialPlayerResponse(doc);
  const details = json?.videoDetails?.videoId === videoId ? json.videoDetails : undefined;
  const micro = details ? json?.microformat?.playerMicroformatRenderer : undefined;

  const title = tidy(
    doc.querySelector('ytd-watch-metadata h1, h1.ytd-watch-metadata, #title h1')?.textContent ??
      details?.title ??
      metaContent(doc, 'meta[name="title"]') ??
      doc.title.replace(/ - YouTube$/, ''),
  );
  const channel = tidy(
    doc.querySelector('ytd-watch-metadata ytd-channel-name a, #owner ytd-channel-name a, #channel-name a')?.textContent ??
      details?.author ??
      '',
  );
  // Most specific first: the expander also holds its "...more" button.
  const descriptionEl = [
    '#description-inline-expander yt-attributed-string',
    'ytd-text-inline-expander #snippet-text',
    '#description-inline-expander',
  ]
    .map((selector) => doc.querySelector(selector))
    .find(Boolean);
  const description = tidy(descriptionEl?.textContent ?? details?.shortDescription ?? '');
  const published = micro?.publishDate ?? metaContent(doc, 'meta[itemprop="datePublished"], meta[itemprop="uploadDate"]');
  const lines = transcript(doc);
  if (!title) return null;

  const parts = [`# ${title}`];
  const facts = [channel && `Channel: ${channel}`, published && `Published: ${published}`].filter(Boolean);
  if (facts.length) parts.push(facts.join('\n'));
  if (description) parts.push(`## Description\n\n${description}`);
  if (lines.length) parts.push(`## Transcript\n\n${lines.join('\n')}`);
  return capped({
    title,
    content: parts.join('\n\n'),
    contentType: 'video',
    sourceUrl: `${url.origin}/watch?v=${encodeURIComponent(videoId)}`,
    metadata: {
      source: 'youtube',
      video_id: videoId,
      ...(channel ? { channel } : {}),
      ...(published ? { published_at: published } : {}),
      ...(details?.lengthSeconds ? { duration_seconds: Number(details.lengthSeconds) } : {}),
      has_transcript: lines.length > 0,
    },
  });
}
