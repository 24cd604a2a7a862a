/** GitHub (spec §7.3): a repository's README, an issue's or pull request's body (with the
 * discussion), a file's text with its path and language. Anything else on GitHub → null, and the
 * caller falls back to the default extraction. Selectors cover both the React and the older
 * server-rendered views. */
import { htmlToMarkdown } from './markdown';
import { capped, type Extracted, tidy } from './types';

type Route =
  | { kind: 'repo'; repo: string }
  | { kind: 'issue' | 'pull'; repo: string; number: number }
  | { kind: 'blob'; repo: string; ref: string; path: string };

const RESERVED_OWNERS = new Set([
  'about', 'explore', 'features', 'marketplace', 'notifications', 'orgs', 'settings', 'search',
  'sponsors', 'topics', 'trending', 'login', 'signup', 'pricing', 'pulls', 'issues', 'codespaces',
]);

export function githubRoute(href: string): Route | null {
  const url = new URL(href);
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length < 2 || RESERVED_OWNERS.has(parts[0])) return null;
  const repo = `${parts[0]}/${parts[1]}`;
  if (parts.length === 2 || (parts[2] === 'tree' && parts.length >= 4)) return { kind: 'repo', repo };
  if ((parts[2] === 'issues' || parts[2] === 'pull') && /^\d+$/.test(parts[3] ?? '')) {
    return { kind: parts[2] === 'issues' ? 'issue' : 'pull', repo, number: Number(parts[3]) };
  }
  if (parts[2] === 'blob' && parts.length >= 5) {
    return { kind: 'blob', repo, ref: parts[3], path: parts.slice(4).join('/') };
  }
  return null;
}

const LANGUAGES: Record<string, string> = {
  py: 'python', pyi: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
  ts: 'typescript', tsx: 'typescript', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin', rb: 'ruby',
  php: 'php', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp', cs: 'csharp', swift: 'swift',
  scala: 'scala', sh: 'bash', bash: 'bash', zsh: 'bash', ps1: 'powershell', sql: 'sql', r: 'r',
  lua: 'lua', pl: 'perl', hs: 'haskell', ex: 'elixir', exs: 'elixir', erl: 'erlang', clj: 'clojure',
  dart: 'dart', css: 'css', scss: 'scss', html: 'html', vue: 'vue', svelte: 'svelte', json: 'json',
  yaml: 'yaml', yml: 'yaml', toml: 'toml', xml: 'xml', md: 'markdown', tf: 'hcl', proto: 'protobuf',
};
const FILE_LANGUAGES: Record<string, string> = { dockerfile: 'dockerfile', makefile: 'make' };

export function languageOfPath(path: string): string | undefined {
  const name = path.split('/').pop()?.toLowerCase() ?? '';
  if (FILE_LANGUAGES[name]) return FILE_LANGUAGES[name];
  const dot = name.lastIndexOf('.');
  return dot > 0 ? LANGUAGES[name.slice(dot + 1)] : undefined;
}

function markdownOf(el: Element | null | undefined): string {
  return el ? htmlToMarkdown(el.innerHTML) : '';
}

function readme(doc: Document, route: { repo: string }): Extracted | null {
  // A README shown under /tree/<ref>/<dir> belongs to that directory, so the page's own URL is the source.
  const url = new URL(doc.URL);
  const body =
    doc.querySelector('article.markdown-body[itemprop="text"]') ??
    doc.querySelector('#readme article.markdown-body, [data-testid="readme"] article.markdown-body') ??
    doc.querySelector('article.markdown-body');
  const content = markdownOf(body);
  if (!content) return null;
  const about = doc.querySelector('meta[name="description"], meta[property="og:description"]')?.getAttribute('content');
  return {
    title: `${route.repo}: README`,
    content,
    contentType: 'markdown',
    sourceUrl: `${url.origin}${url.pathname.replace(/\/$/, '')}`,
    metadata: { source: 'github', kind: 'readme', repository: route.repo, ...(about ? { description: about } : {}) },
  };
}

interface Comment {
  author: string;
  date?: string;
  body: string;
}

/** The discussion's posts, first the issue or PR body: the React issue view, then the classic one. */
function posts(doc: Document): Comment[] {
  const react = [...doc.querySelectorAll('[data-testid="issue-body"], .react-issue-comment')];
  const containers = react.length
    ? react
    : [...doc.querySelectorAll('.js-discussion .timeline-comment, .js-discussion .js-comment-container')].filter(
        (el, i, all) => !all.some((other, j) => j !== i && other.contains(el)),
      );
  return containers
    .map((el) => {
      const body =
        el.querySelector('[data-testid="markdown-body"] .markdown-body') ??
        el.querySelector('[data-testid="markdown-body"]') ??
        el.querySelector('.comment-body') ??
        el.querySelector('.markdown-body');
      const author = el
        .querySelector('[data-testid="issue-body-header-author"], [data-testid="avatar-link"], a.author, .author')
        ?.textContent?.trim()
        .replace(/^@/, '');
      const date = el.querySelector('relative-time[datetime], time[datetime]')?.getAttribute('datetime') ?? undefined;
      return { author: author ?? 'unknown', date, body: markdownOf(body) };
    })
    .filter((c) => c.body);
}

function discussion(doc: Document, route: { kind: 'issue' | 'pull'; repo: string; number: number }): Extracted | null {
  const all = posts(doc);
  if (!all.length) return null;
  const [first, ...comments] = all;
  const rawTitle =
    doc.querySelector('[data-testid="issue-title"], bdi.js-issue-title, .js-issue-title, h1 .markdown-title')
      ?.textContent ?? doc.title;
  const title = tidy(rawTitle);
  const state = tidy(
    doc.querySelector('[data-testid="header-state"], .gh-header-meta .State, span.State')?.textContent ?? '',
  ).toLowerCase();
  const noun = route.kind === 'issue' ? 'Issue' : 'Pull request';
  const lines = [`# ${title} (${route.repo}#${route.number})`, '', `${noun} by @${first.author}${first.date ? ` on ${first.date}` : ''}`, '', first.body];
  if (comments.length) {
    lines.push('', '## Comments');
    for (const c of comments) lines.push('', `### @${c.author}${c.date ? ` on ${c.date}` : ''}`, '', c.body);
  }
  return {
    title: `${title} · ${route.repo}#${route.number}`,
    content: lines.join('\n'),
    contentType: 'markdown',
    sourceUrl: `${new URL(doc.URL).origin}/${route.repo}/${route.kind === 'issue' ? 'issues' : 'pull'}/${route.number}`,
    metadata: {
      source: 'github',
      kind: route.kind === 'issue' ? 'issue' : 'pull_request',
      repository: route.repo,
      number: route.number,
      author: first.author,
      ...(first.date ? { created_at: first.date } : {}),
      ...(state ? { state } : {}),
      comment_count: comments.length,
    },
  };
}

/** A file's text: the code view keeps it whole in a read-only textarea; older views in table rows. */
function fileText(doc: Document): string | null {
  const area = doc.querySelector<HTMLTextAreaElement>('textarea#read-only-cursor-text-area');
  if (area && (area.value || area.textContent)) return area.value || area.textContent;
  const embedded = doc.querySelector('script[data-target="react-app.embeddedData"]')?.textContent;
  if (embedded) {
    try {
      const lines = JSON.parse(embedded)?.payload?.blob?.rawLines;
      if (Array.isArray(lines)) return lines.join('\n');
    } catch {
      // not the shape we know: fall through to the rendered lines
    }
  }
  const rows = [...doc.querySelectorAll('table.highlight td.blob-code, .blob-code-inner')];
  return rows.length ? rows.map((r) => r.textContent ?? '').join('\n') : null;
}

function blob(doc: Document, route: { repo: string; ref: string; path: string }): Extracted | null {
  const url = new URL(doc.URL);
  const sourceUrl = `${url.origin}${url.pathname}`;
  const language = languageOfPath(route.path);
  const metadata = { source: 'github', kind: 'file', repository: route.repo, ref: route.ref, path: route.path };
  const text = fileText(doc);
  if (text !== null && text.trim()) {
    return {
      title: `${route.path} · ${route.repo}`,
      content: text,
      contentType: 'code',
      sourceUrl,
      metadata: { ...metadata, ...(language ? { language } : {}) },
    };
  }
  // A rendered markdown file (docs/guide.md) shows as an article, not as code lines.
  const rendered = markdownOf(doc.querySelector('article.markdown-body'));
  if (!rendered) return null;
  return { title: `${route.path} · ${route.repo}`, content: rendered, contentType: 'markdown', sourceUrl, metadata: { ...metadata, language: 'markdown' } };
}

export function extractGithub(doc: Document): Extracted | null {
  const route = githubRoute(doc.URL);
  if (!route) return null;
  let found: Extracted | null;
  if (route.kind === 'repo') found = readme(doc, route);
  else if (route.kind === 'blob') found = blob(doc, route);
  else found = discussion(doc, route);
  return found ? capped(found) : null;
}
