/** The default extraction (spec §7.3): the article (Mozilla Readability, as Firefox's Reader View),
 * else the page's visible text. The user's selection is not the page: it is saved as a memory of
 * its own (lib/memory.ts, selectionExtract). */
import { Readability, isProbablyReaderable } from '@mozilla/readability';
import { htmlToMarkdown } from './markdown';
import { canonicalUrl, capped, type Extracted, metaContent, tidy } from './types';

function pageTitle(doc: Document): string {
  return (
    metaContent(doc, 'meta[property="og:title"]') ??
    (doc.title.trim() || doc.querySelector('h1')?.textContent?.trim() || new URL(doc.URL).hostname)
  );
}

function article(doc: Document): Extracted | null {
  if (!isProbablyReaderable(doc)) return null;
  // Readability rewrites the tree it is given, so it works on a copy: the user's page stays as it was.
  const parsed = new Readability(doc.cloneNode(true) as Document, { keepClasses: true }).parse();
  if (!parsed?.content || !parsed.textContent?.trim()) return null;
  const body = htmlToMarkdown(parsed.content);
  if (!body) return null;
  const title = parsed.title?.trim() || pageTitle(doc);
  const metadata: Record<string, unknown> = { source: 'web', extractor: 'readability' };
  if (parsed.byline) metadata.author = parsed.byline.trim();
  if (parsed.siteName) metadata.site_name = parsed.siteName.trim();
  if (parsed.publishedTime) metadata.published_at = parsed.publishedTime;
  if (parsed.lang) metadata.lang = parsed.lang;
  return { title, content: body, contentType: 'markdown', sourceUrl: canonicalUrl(doc.URL), metadata };
}

/** The body's text as a reader sees it: innerText where the browser lays the page out, and without
 * scripts, styles and hidden templates where it does not (jsdom has no innerText). */
export function visibleText(doc: Document): string {
  const body = doc.body;
  if (!body) return '';
  const rendered = (body as HTMLElement).innerText;
  if (typeof rendered === 'string' && rendered.trim()) return tidy(rendered);
  const copy = body.cloneNode(true) as HTMLElement;
  copy.querySelectorAll('script, style, noscript, template, [hidden], [aria-hidden="true"]').forEach((n) => n.remove());
  return tidy(copy.textContent ?? '');
}

export function extractGeneric(doc: Document): Extracted {
  const found = article(doc);
  if (found) return capped(found);
  return capped({
    title: pageTitle(doc),
    content: visibleText(doc),
    contentType: 'text',
    sourceUrl: canonicalUrl(doc.URL),
    metadata: { source: 'web', extractor: 'body-text' },
  });
}
