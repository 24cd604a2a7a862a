import { describe, expect, it } from 'vitest';
import { linkExtract, memoryBody, parseTags, selectionExtract, selectionTitle, selectionUrl, wantedOf } from '@/lib/memory';
import type { Extracted } from '@/lib/extract/types';

const page: Extracted = {
  title: 'Solar sail',
  content: 'A light-pushed spacecraft.',
  contentType: 'markdown',
  sourceUrl: 'https://news.example/sail',
  metadata: { extractor: 'readability' },
};

describe('the memory body', () => {
  it("carries the user's choices: title, project, tags and auto-forget in 30 days", () => {
    const now = new Date('2026-05-20T10:00:00.000Z');
    const b = memoryBody(page, { title: ' My title ', projectId: 'p-1', tags: ['space', 'ml'], autoForget: true }, now);
    expect(b).toEqual({
      content: 'A light-pushed spacecraft.',
      title: 'My title',
      content_type: 'markdown',
      source_url: 'https://news.example/sail',
      project_id: 'p-1',
      forget_after: '2026-06-19T10:00:00.000Z',
      metadata: { extractor: 'readability', saved_with: 'memlane-extension', tags: ['space', 'ml'] },
    });
  });

  it('leaves out what the user did not choose', () => {
    const b = memoryBody({ ...page, sourceUrl: 'file:///tmp/x.html' });
    expect(b.title).toBe('Solar sail');
    expect('project_id' in b || 'forget_after' in b || 'source_url' in b || 'tags' in b.metadata).toBe(false);
  });

  it('parses tags as memlane takes them', () => {
    expect(parseTags(' ai, ml ,, ml,  deep learning ')).toEqual(['ai', 'ml', 'deep learning']);
    expect(parseTags('x'.repeat(150))[0]).toHaveLength(100);
  });

  it('points a selection at its passage with a text fragment, so it is not a version of the page', () => {
    expect(selectionUrl('https://news.example/sail#top', 'record speed')).toBe('https://news.example/sail#:~:text=record%20speed');
    expect(selectionUrl('https://a.example/p', 'one two three four five six seven eight nine ten-eleven')).toBe(
      'https://a.example/p#:~:text=one%20two%20three%20four,seven%20eight%20nine%20ten%2Deleven',
    );
    const e = selectionExtract('https://news.example/sail?utm_source=x', 'Solar sail', '  record speed \n');
    expect(e).toMatchObject({
      content: 'record speed',
      contentType: 'text',
      title: 'record speed',
      metadata: { kind: 'selection', page_url: 'https://news.example/sail', page_title: 'Solar sail' },
    });
  });

  it("titles a selection with its first words, apart from its page's title", () => {
    expect(selectionTitle('  Wind limit for the pad\nis 35 km/h. ')).toBe('Wind limit for the pad is 35 km/h.');
    const long = 'The craft, built by a university team in Delft, unfurled its sail over the Pacific last Tuesday.';
    expect(selectionTitle(long)).toBe('The craft, built by a university team in Delft, unfurled its…');
    expect(selectionTitle('a'.repeat(80))).toBe(`${'a'.repeat(60)}…`);
    expect(selectionExtract('https://a.example/p', 'Page', long).title).toBe(selectionTitle(long));
  });

  it('keeps what the user typed, to apply to a memory memlane already holds', () => {
    expect(wantedOf({ projectId: 'p' })).toBeUndefined();
    expect(wantedOf({ title: '  ', tags: [] })).toBeUndefined();
    expect(wantedOf({ title: ' Mine ', tags: ['a'] })).toEqual({ title: 'Mine', tags: ['a'] });
    expect(wantedOf({ tags: ['a'] })).toEqual({ tags: ['a'] });
  });

  it('saves a link as the link', () => {
    expect(linkExtract('https://wx.example/pad', 'Pad weather', 'https://a.example/board')).toEqual({
      title: 'Pad weather',
      content: 'Pad weather\nhttps://wx.example/pad',
      contentType: 'text',
      sourceUrl: 'https://wx.example/pad',
      metadata: { source: 'web', kind: 'link', found_on: 'https://a.example/board' },
    });
    expect(linkExtract('https://wx.example/pad', '', undefined).title).toBe('https://wx.example/pad');
  });
});
