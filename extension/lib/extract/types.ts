/** What every extractor returns: the body of a POST /v3/memory, minus the user's choices. */
export type ContentType = 'text' | 'markdown' | 'code' | 'tweet' | 'video';

export interface Extracted {
  title: string;
  content: string;
  contentType: ContentType;
  /** The page the content came from; memlane versions saves by it. */
  sourceUrl: string;
  /** Facts about the source (author, dates, language, path…), stored in the memory's metadata. */
  metadata: Record<string, unknown>;
}

/** spec §7.3: content is limited to 100,000 characters. */
export const MAX_CONTENT_CHARS = 100_000;

export function capped(extracted: Extracted): Extracted {
  if (extracted.content.length <= MAX_CONTENT_CHARS) return extracted;
  // Cut on a code point boundary: a lone surrogate is not valid UTF-8 and the server would refuse it.
  let end = MAX_CONTENT_CHARS;
  const code = extracted.content.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return {
    ...extracted,
    content: extracted.content.slice(0, end),
    metadata: { ...extracted.metadata, truncated: true, original_length: extracted.content.length },
  };
}

/** Collapses runs of spaces and blank lines the way a reader would see the text. */
export function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Text of an element with images replaced by their alt text (emoji on X are <img alt="🚀">). */
export function textWithAlts(el: Element): string {
  let out = '';
  const walk = (node: Node): void => {
    if (node.nodeType === 3) {
      out += node.nodeValue ?? '';
      return;
    }
    if (node.nodeType !== 1) return;
    const element = node as Element;
    const tag = element.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style') return;
    if (tag === 'img') {
      out += element.getAttribute('alt') ?? '';
      return;
    }
    if (tag === 'br') {
      out += '\n';
      return;
    }
    element.childNodes.forEach(walk);
  };
  walk(el);
  return out;
}

/** The page's URL without the parts that do not change what it shows (fragments, tracking). */
export function canonicalUrl(href: string): string {
  const url = new URL(href);
  // Hash routes (#/path, #!/path) are pages of their own in single-page apps; other fragments are not.
  if (!/^#!?\//.test(url.hash)) url.hash = '';
  for (const name of [...url.searchParams.keys()]) {
    if (/^(utm_|fbclid$|gclid$|mc_cid$|mc_eid$)/.test(name)) url.searchParams.delete(name);
  }
  return url.toString();
}

export function metaContent(doc: Document, selector: string): string | undefined {
  const value = doc.querySelector(selector)?.getAttribute('content')?.trim();
  return value || undefined;
}
