import { describe, expect, it } from 'vitest';
import { extractWith, platformFor } from '@/lib/extract';
import { extractGithub, githubRoute, languageOfPath } from '@/lib/extract/github';
import { page } from './fixtures';

describe('GitHub README', () => {
  it('keeps the README with its formatting and leaves the page around it', () => {
    // Given a repository page
    const doc = page('github-readme.html', 'https://github.com/acme/rocket');
    // When it is extracted
    const e = extractGithub(doc)!;
    // Then the README comes back as Markdown: headings, fenced code with languages, lists, tables
    expect(e.title).toBe('acme/rocket: README');
    expect(e.contentType).toBe('markdown');
    expect(e.sourceUrl).toBe('https://github.com/acme/rocket');
    expect(e.content.startsWith('# rocket\n\nPlans launch windows for **small satellites**')).toBe(true);
    expect(e.content).toContain('## Install\n\n```shell\npip install acme-rocket\nrocket plan --orbit LEO\n```');
    expect(e.content).toContain('- Keep at least `12%` reserve for deorbit.');
    expect(e.content).toContain('| Orbit | Reserve |');
    expect(e.content).toContain('| SSO | 15% |');
    expect(e.content).toContain('```python\nfrom rocket import Planner\nplan = Planner(orbit="LEO").window()\n```');
    expect(e.content).toContain('See the [guide](/acme/rocket/blob/main/docs/guide.md) for details.');
    // and nothing of GitHub's header, file list, sidebar, footer, heading anchors or copy buttons
    for (const noise of ['Sign in', 'Pricing', 'Add orbit planner', 'stars', '© 2026', '](#', 'Permalink', 'Copy']) {
      expect(e.content).not.toContain(noise);
    }
    expect(e.metadata).toMatchObject({ source: 'github', kind: 'readme', repository: 'acme/rocket' });
  });

  it('is chosen for github.com and left for other sites', () => {
    expect(platformFor('https://github.com/acme/rocket')).toBe('github');
    expect(platformFor('https://gist.github.com/x')).toBeNull();
    expect(platformFor('http://github.com/acme/rocket')).toBeNull();
  });
});

describe('GitHub issue and pull request', () => {
  it('saves the issue body with formatting, then the discussion', () => {
    const doc = page('github-issue.html', 'https://github.com/acme/rocket/issues/42?q=is%3Aopen#issuecomment-1');
    const e = extractGithub(doc)!;
    expect(e.title).toBe('Planner crashes when the orbit is GEO · acme/rocket#42');
    expect(e.sourceUrl).toBe('https://github.com/acme/rocket/issues/42');
    expect(e.content.split('\n').slice(0, 3)).toEqual([
      '# Planner crashes when the orbit is GEO (acme/rocket#42)',
      '',
      'Issue by @octocat on 2026-03-01T10:15:00Z',
    ]);
    expect(e.content).toContain('### Steps to reproduce\n\n1. Run `rocket plan --orbit GEO`\n2. Wait for the transfer burn');
    expect(e.content).toContain('```python\nTraceback (most recent call last):\n  File "planner.py", line 88, in window\nZeroDivisionError: division by zero\n```');
    expect(e.content).toContain('The **apogee kick** is computed before the margin is known.');
    expect(e.content).toContain('## Comments\n\n### @margaret on 2026-03-02T08:00:00Z\n\nConfirmed on `main`.');
    expect(e.content).not.toContain('Assignees');
    expect(e.metadata).toMatchObject({
      source: 'github', kind: 'issue', repository: 'acme/rocket', number: 42, author: 'octocat',
      state: 'open', created_at: '2026-03-01T10:15:00Z', comment_count: 1,
    });
  });

  it('reads a pull request in the older conversation view, task lists included', () => {
    const e = extractGithub(page('github-pull.html', 'https://github.com/acme/rocket/pull/43'))!;
    expect(e.title).toBe('Compute the fuel margin before the kick burn · acme/rocket#43');
    expect(e.content).toContain('Pull request by @margaret on 2026-03-02T09:30:00Z\n\nFixes [#42](/acme/rocket/issues/42).');
    expect(e.content).toContain('- [x] compute the margin first\n- [ ] add a GEO regression test');
    expect(e.content).toContain('### @octocat on 2026-03-02T11:00:00Z\n\nLooks good, thanks!');
    expect(e.metadata).toMatchObject({ kind: 'pull_request', number: 43, author: 'margaret', state: 'merged', comment_count: 1 });
  });
});

describe('GitHub file', () => {
  it("saves a code file's exact text with its path and language", () => {
    const e = extractGithub(page('github-blob.html', 'https://github.com/acme/rocket/blob/main/src/rocket/launch.py'))!;
    expect(e.contentType).toBe('code');
    expect(e.title).toBe('src/rocket/launch.py · acme/rocket');
    expect(e.content.startsWith('"""Launch windows."""\n\nfrom dataclasses import dataclass\n')).toBe(true);
    expect(e.content).toContain('    def length(self) -> float:\n        return self.closes_at - self.opens_at\n');
    expect(e.content).toContain('    # The longest window leaves the most room for a hold.\n');
    expect(e.metadata).toMatchObject({ kind: 'file', path: 'src/rocket/launch.py', language: 'python', ref: 'main', repository: 'acme/rocket' });
    expect(e.sourceUrl).toBe('https://github.com/acme/rocket/blob/main/src/rocket/launch.py');
  });

  it('knows routes and languages', () => {
    expect(githubRoute('https://github.com/acme/rocket/tree/main/docs')).toEqual({ kind: 'repo', repo: 'acme/rocket' });
    expect(githubRoute('https://github.com/settings/profile')).toBeNull();
    expect(githubRoute('https://github.com/acme/rocket/actions')).toBeNull();
    expect(languageOfPath('build/Dockerfile')).toBe('dockerfile');
    expect(languageOfPath('a/b.tsx')).toBe('typescript');
    expect(languageOfPath('LICENSE')).toBeUndefined();
  });

  it('falls back to the default extraction on other GitHub pages', () => {
    const doc = page('news-article.html', 'https://github.com/acme/rocket/wiki/Sails');
    const e = extractWith('github', doc);
    expect(e.metadata.extractor).toBe('readability');
  });
});
