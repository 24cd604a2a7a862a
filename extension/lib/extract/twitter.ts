/** Twitter/X (spec §7.3): the tweet's text, author, date and media, with its thread context: the
 * tweets it replies to above it and the author's own continuation below it. */
import { canonicalUrl, capped, type Extracted, textWithAlts, tidy } from './types';

interface Tweet {
  id?: string;
  name: string;
  handle: string;
  date?: string;
  text: string;
  media: string[];
}

function statusId(href: string): string | undefined {
  return /\/status(?:es)?\/(\d+)/.exec(href)?.[1];
}

function readTweet(article: Element): Tweet | null {
  const textEl = article.querySelector('[data-testid="tweetText"]');
  const userEl = article.querySelector('[data-testid="User-Name"]');
  const text = textEl ? tidy(textWithAlts(textEl)) : '';
  const media = [...article.querySelectorAll('[data-testid="tweetPhoto"] img, img[src*="/media/"]')]
    .map((img) => img.getAttribute('alt')?.trim() || img.getAttribute('src') || '')
    .filter((m, i, all) => m && all.indexOf(m) === i);
  if (!text && !media.length) return null;
  const spans = [...(userEl?.querySelectorAll('span') ?? [])].map((s) => tidy(textWithAlts(s))).filter(Boolean);
  const handle = spans.find((s) => /^@\w+$/.test(s)) ?? '';
  const name = spans.find((s) => s && !s.startsWith('@') && s !== '·') ?? handle;
  const time = article.querySelector('time[datetime]');
  const link = time?.closest('a[href]')?.getAttribute('href') ?? '';
  return { id: statusId(link), name, handle, date: time?.getAttribute('datetime') ?? undefined, text, media };
}

function byline(t: Tweet): string {
  return `${t.name}${t.handle && t.handle !== t.name ? ` (${t.handle})` : ''}${t.date ? ` · ${t.date}` : ''}`;
}

function block(t: Tweet): string {
  const media = t.media.length ? `\n[media: ${t.media.join('; ')}]` : '';
  return `${byline(t)}\n${t.text}${media}`;
}

export function extractTwitter(doc: Document): Extracted | null {
  const focusId = statusId(new URL(doc.URL).pathname);
  const tweets = [...doc.querySelectorAll('article[data-testid="tweet"]')]
    .map(readTweet)
    .filter((t): t is Tweet => t !== null);
  if (!tweets.length) return null;
  // On a status page the focal tweet is the one whose permalink is the page; elsewhere (a profile,
  // the timeline) the first tweet shown.
  let index = focusId ? tweets.findIndex((t) => t.id === focusId) : 0;
  if (index < 0) index = 0;
  const focal = tweets[index];
  const before = tweets.slice(0, index);
  const after: Tweet[] = [];
  for (const t of tweets.slice(index + 1)) {
    if (t.handle !== focal.handle) break; // the author's thread ends where other people's replies start
    after.push(t);
  }
  const sections: string[] = [];
  if (before.length) sections.push(`In reply to:\n\n${before.map(block).join('\n\n')}`, '---');
  sections.push(block(focal));
  if (after.length) sections.push(`Thread continues:\n\n${after.map(block).join('\n\n')}`);
  const first = focal.text.split('\n')[0];
  const snippet = first.length > 80 ? `${first.slice(0, 79)}…` : first;
  const url = new URL(doc.URL);
  return capped({
    title: `${focal.name} on X: "${snippet}"`,
    content: sections.join('\n\n'),
    contentType: 'tweet',
    sourceUrl: focusId ? `${url.origin}${url.pathname.replace(/\/(photo|analytics).*$/, '')}` : canonicalUrl(doc.URL),
    metadata: {
      source: 'x',
      author: focal.handle,
      author_name: focal.name,
      ...(focal.date ? { published_at: focal.date } : {}),
      ...(focal.id ? { tweet_id: focal.id } : {}),
      ...(focal.media.length ? { media: focal.media } : {}),
      thread: [...before, focal, ...after].map((t) => ({ id: t.id, author: t.handle, date: t.date })),
    },
  });
}
