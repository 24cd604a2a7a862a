import { describe, expect, it } from 'vitest';
import { extractWith, readPage } from '@/lib/extract';
import { extractGeneric } from '@/lib/extract/generic';
import { canonicalUrl, capped, MAX_CONTENT_CHARS } from '@/lib/extract/types';
import { html, page } from './fixtures';

const ARTICLE = 'http://news.example/space/2026/05/solar-sail?utm_source=feed#comments';

describe('default extraction', () => {
  it('keeps the article, in Markdown, without the site around it', () => {
    const e = extractGeneric(page('news-article.html', ARTICLE));
    expect(e.title).toBe('Solar sail reaches record speed on its first orbit');
    expect(e.contentType).toBe('markdown');
    expect(e.sourceUrl).toBe('http://news.example/space/2026/05/solar-sail');
    expect(e.content).toContain('A light-pushed spacecraft the size of a tennis court has become the fastest solar sail ever flown');
    expect(e.content).toContain('## How the sail steers');
    expect(e.content).toContain('> The hard part was not the physics but folding eighty square metres of film');
    expect(e.content).toContain('clean up dead satellites by dragging them into the atmosphere.');
    for (const noise of ['cookies', 'Subscribe today', 'Moon base', 'All rights reserved', 'dataLayer', 'Privacy policy']) {
      expect(e.content).not.toContain(noise);
    }
    expect(e.metadata).toMatchObject({ extractor: 'readability', author: 'Priya Raman', site_name: 'The Daily Orbit', published_at: '2026-05-20T07:45:00Z' });
  });

  it('keeps the page and the selection apart, on articles and other pages alike', () => {
    const url = 'http://127.0.0.1:8000/notes-board.html';
    const selection = 'Wind limit for the pad is 35 km/h at 60 metres.';
    const board = readPage(null, page('notes-board.html', url), selection);
    expect(board.selection).toBe(selection);
    expect(board.page.metadata.extractor).toBe('body-text');
    expect(board.page.content).toContain('Fuel loaded: 98.5 percent');
    const article = readPage(null, page('news-article.html', ARTICLE), 'record speed');
    expect([article.page.metadata.extractor, article.selection]).toEqual(['readability', 'record speed']);
  });

  it("saves a page that is not an article as its visible text", () => {
    const url = 'http://127.0.0.1:8000/notes-board.html';
    const body = extractGeneric(page('notes-board.html', url));
    expect(body.metadata.extractor).toBe('body-text');
    expect(body.title).toBe('Launch checklist board');
    expect(body.content.split('\n').filter(Boolean)).toEqual([
      'Boards / Launch',
      'Launch checklist',
      'Fuel loaded: 98.5 percent, signed off by Mira.',
      'Wind limit for the pad is 35 km/h at 60 metres.',
      'Range safety call at T-minus 20 minutes.',
      'Pad weather forecast',
    ]);
    expect(body.content).not.toContain('console.log');
  });

  it('caps content at 100,000 characters, never splitting a character', () => {
    const long = `<p>${'word '.repeat(30_000)}</p>`;
    const e = extractGeneric(html(`<title>t</title><body>${long}</body>`));
    expect(e.content.length).toBeLessThanOrEqual(MAX_CONTENT_CHARS);
    expect(e.metadata.truncated).toBe(true);
    const emoji = capped({ title: '', content: `${'a'.repeat(MAX_CONTENT_CHARS - 1)}🚀`, contentType: 'text', sourceUrl: '', metadata: {} });
    expect(emoji.content).toBe('a'.repeat(MAX_CONTENT_CHARS - 1));
  });

  it('is used for every site without an extractor of its own', () => {
    expect(extractWith(null, page('news-article.html', ARTICLE)).metadata.extractor).toBe('readability');
  });

  it('keeps what identifies a page in its URL and drops the rest', () => {
    expect(canonicalUrl('https://a.example/p?id=3&utm_medium=x&gclid=1#top')).toBe('https://a.example/p?id=3');
    expect(canonicalUrl('https://app.example/#/notes/7')).toBe('https://app.example/#/notes/7');
  });
});
