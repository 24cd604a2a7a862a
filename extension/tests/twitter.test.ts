import { describe, expect, it } from 'vitest';
import { platformFor } from '@/lib/extract';
import { extractTwitter } from '@/lib/extract/twitter';
import { html, page } from './fixtures';

const STATUS = 'https://x.com/ada/status/1790000000000000002';

describe('X post', () => {
  it('saves the post with its author, date and thread context', () => {
    // Given a reply by @ada that she continues in a thread, under which @bob replies
    const e = extractTwitter(page('x-thread.html', `${STATUS}?s=20`))!;
    // Then the post is the focal one, the post it answers comes first, her continuation after it
    expect(e.contentType).toBe('tweet');
    expect(e.sourceUrl).toBe(STATUS);
    const text = 'We did. It drifts by one column every 400 turns, so we reset the carry before each table 🔧 Notes in the thread.';
    expect(e.title).toBe(`Ada Lovelace on X: "${text.slice(0, 79)}…"`);
    expect(e.content).toBe(
      [
        'In reply to:',
        '',
        'Charles Babbage (@charles) · 2026-05-14T08:00:00.000Z',
        'Has anyone measured how much the Difference Engine drifts after a thousand turns?',
        '',
        '---',
        '',
        'Ada Lovelace (@ada) · 2026-05-14T09:30:00.000Z',
        'We did. It drifts by one column every 400 turns, so we reset the carry before each table 🔧 Notes in the thread.',
        '[media: Chart of column drift against turns]',
        '',
        'Thread continues:',
        '',
        'Ada Lovelace (@ada) · 2026-05-14T09:31:00.000Z',
        '2/ The fix: a locking pawl on the carry lever. Drift went to zero over 5,000 turns. https://example.org/pawl',
      ].join('\n'),
    );
    // and other people's replies below the thread are not part of it
    expect(e.content).not.toContain('Following');
    expect(e.content).not.toContain('Who to follow');
    expect(e.metadata).toEqual({
      source: 'x',
      author: '@ada',
      author_name: 'Ada Lovelace',
      published_at: '2026-05-14T09:30:00.000Z',
      tweet_id: '1790000000000000002',
      media: ['Chart of column drift against turns'],
      thread: [
        { id: '1790000000000000001', author: '@charles', date: '2026-05-14T08:00:00.000Z' },
        { id: '1790000000000000002', author: '@ada', date: '2026-05-14T09:30:00.000Z' },
        { id: '1790000000000000003', author: '@ada', date: '2026-05-14T09:31:00.000Z' },
      ],
    });
  });

  it('takes the first post of a timeline when the page is not one post', () => {
    const e = extractTwitter(page('x-thread.html', 'https://x.com/home'))!;
    expect(e.metadata.author).toBe('@charles');
    expect(e.content).not.toContain('In reply to');
  });

  it('finds nothing on a page without posts, and knows the hosts', () => {
    expect(extractTwitter(html('<main>Search</main>', 'https://x.com/explore'))).toBeNull();
    for (const url of ['https://x.com/a', 'https://twitter.com/a', 'https://mobile.x.com/a']) expect(platformFor(url)).toBe('twitter');
  });
});
