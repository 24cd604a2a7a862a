import { describe, expect, it } from 'vitest';
import { extractYoutube, initialPlayerResponse } from '@/lib/extract/youtube';
import { fixtureHtml, html, page } from './fixtures';

const WATCH = 'https://www.youtube.com/watch?v=Xk3bLq9Tz0w';

describe('YouTube watch page', () => {
  it('saves title, channel, description and the open transcript', () => {
    const e = extractYoutube(page('youtube-watch.html', `${WATCH}&t=42s&list=PL1`))!;
    expect(e.title).toBe('How reaction wheels point a satellite');
    expect(e.contentType).toBe('video');
    expect(e.sourceUrl).toBe(WATCH);
    expect(e.content).toBe(
      [
        '# How reaction wheels point a satellite',
        '',
        'Channel: Orbit Workshop\nPublished: 2026-02-03T04:00:00-08:00',
        '',
        '## Description',
        '',
        'Three spinning wheels and conservation of angular momentum.\nChapters:\n0:00 Intro\n2:10 Momentum dumping',
        '',
        '## Transcript',
        '',
        '[0:00] A satellite has nothing to push against,\n[0:04] so it spins a wheel the other way.\n[2:10] When the wheels saturate, magnetorquers dump the momentum.',
      ].join('\n'),
    );
    expect(e.content).not.toContain('Comments');
    expect(e.content).not.toContain('gyroscopes');
    expect(e.metadata).toEqual({
      source: 'youtube',
      video_id: 'Xk3bLq9Tz0w',
      channel: 'Orbit Workshop',
      published_at: '2026-02-03T04:00:00-08:00',
      duration_seconds: 642,
      has_transcript: true,
    });
  });

  it('saves without a transcript when the page shows none', () => {
    const doc = page('youtube-watch.html', WATCH);
    doc.querySelectorAll('ytd-transcript-segment-renderer').forEach((n) => n.remove());
    const e = extractYoutube(doc)!;
    expect(e.content).not.toContain('## Transcript');
    expect(e.metadata.has_transcript).toBe(false);
  });

  it("ignores the page's first-load JSON once the player has moved to another video", () => {
    // YouTube navigates without reloading: the script still describes the first video
    const doc = page('youtube-watch.html', 'https://www.youtube.com/watch?v=Other000001');
    const e = extractYoutube(doc)!;
    expect(e.sourceUrl).toBe('https://www.youtube.com/watch?v=Other000001');
    expect(e.metadata.duration_seconds).toBeUndefined();
    expect(e.metadata.published_at).toBeUndefined();
  });

  it('reads ytInitialPlayerResponse without evaluating the script, braces in strings included', () => {
    expect(initialPlayerResponse(page('youtube-watch.html', WATCH))?.videoDetails?.author).toBe('Orbit Workshop');
    const doc = html('<script>var ytInitialPlayerResponse = {"videoDetails":{"videoId":"a","title":"x } \\" {"}};</script>');
    expect(initialPlayerResponse(doc)?.videoDetails?.title).toBe('x } " {');
    expect(fixtureHtml('youtube-watch.html')).toContain('ytInitialPlayerResponse');
  });

  it('finds nothing on pages that are not a video', () => {
    expect(extractYoutube(page('youtube-watch.html', 'https://www.youtube.com/feed/subscriptions'))).toBeNull();
  });
});
