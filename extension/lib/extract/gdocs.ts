/** Google Docs (spec §7.3): the document's text as the editor page holds it. The editor draws
 * text on a canvas and keeps an accessible copy in the DOM (SVG rects labelled with each line);
 * documents in the older HTML renderer keep it in paragraph elements. */
import { capped, type Extracted, tidy } from './types';

function paragraphsFromCanvasLabels(doc: Document): string[] {
  const groups = [...doc.querySelectorAll('.kix-canvas-tile-content g[role="paragraph"]')];
  return groups
    .map((g) =>
      [...g.querySelectorAll('rect[aria-label]')]
        .map((r) => r.getAttribute('aria-label') ?? '')
        .join(' '),
    )
    .map(tidy)
    .filter(Boolean);
}

function paragraphsFromHtmlRenderer(doc: Document): string[] {
  return [...doc.querySelectorAll('.kix-paragraphrenderer')]
    .map((p) => tidy([...p.querySelectorAll('.kix-lineview')].map((l) => l.textContent ?? '').join(' ') || (p.textContent ?? '')))
    .filter(Boolean);
}

export function extractGdocs(doc: Document): Extracted | null {
  const url = new URL(doc.URL);
  const id = /^\/document\/(?:u\/\d+\/)?d\/([\w-]+)/.exec(url.pathname)?.[1];
  if (!id) return null;
  let paragraphs = paragraphsFromCanvasLabels(doc);
  if (!paragraphs.length) paragraphs = paragraphsFromHtmlRenderer(doc);
  if (!paragraphs.length) return null;
  const input = doc.querySelector<HTMLInputElement>('input.docs-title-input');
  const title = tidy(input?.value || input?.getAttribute('value') || doc.title.replace(/ - Google Docs$/, '')) || 'Untitled document';
  return capped({
    title,
    content: paragraphs.join('\n\n'),
    contentType: 'text',
    sourceUrl: `${url.origin}/document/d/${id}/edit`,
    metadata: { source: 'google-docs', document_id: id },
  });
}
