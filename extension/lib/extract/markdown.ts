/** HTML → Markdown for saved articles, READMEs and issue bodies, so headings, lists, tables and
 * code blocks survive as formatting rather than being flattened to text. */
import TurndownService from 'turndown';
import { gfm } from '@joplin/turndown-plugin-gfm';

let service: TurndownService | undefined;

function languageOf(pre: HTMLElement): string {
  // GitHub: <div class="highlight highlight-source-python"><pre>…</pre></div> or <pre lang="python">;
  // elsewhere: <pre><code class="language-python">.
  const fromLang = pre.getAttribute('lang');
  if (fromLang) return fromLang;
  const wrapper = pre.parentElement?.className ?? '';
  const github = /highlight-source-([\w+#-]+)/.exec(wrapper);
  if (github) return github[1];
  const code = pre.querySelector('code');
  const fromClass = /(?:language|lang)-([\w+#-]+)/.exec(code?.className ?? '');
  return fromClass ? fromClass[1] : '';
}

function build(): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '*',
    hr: '---',
  });
  td.use(gfm);
  // Page furniture inside content: scripts, inline icons, copy-to-clipboard buttons, heading anchors.
  const furniture = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'BUTTON', 'SVG', 'CLIPBOARD-COPY']);
  td.remove((node) => furniture.has(node.nodeName.toUpperCase()));
  td.addRule('heading-anchors', {
    filter: (node) =>
      node.nodeName === 'A' &&
      (node.classList.contains('anchor') || (node.textContent ?? '').trim() === '') &&
      !node.querySelector('img'),
    replacement: () => '',
  });
  // "- item" and "1. item" (turndown pads markers to four columns), continuation lines indented under the text.
  td.addRule('list-item', {
    filter: 'li',
    replacement: (content, node, options) => {
      const parent = node.parentNode as HTMLElement | null;
      let marker = `${options.bulletListMarker} `;
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? '1') || 1;
        marker = `${start + Array.prototype.indexOf.call(parent.children, node)}. `;
      }
      const body = content
        .replace(/^\s+/, '')
        .replace(/^(\[[ x]\]) +/, '$1 ') // a task's checkbox and its text
        .replace(/\n+$/, '\n')
        .replace(/\n(?!$)/g, `\n${' '.repeat(marker.length)}`);
      return marker + body + (node.nextSibling && !body.endsWith('\n') ? '\n' : '');
    },
  });
  td.addRule('fenced-code-with-language', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => {
      const pre = node as HTMLElement;
      const text = (pre.textContent ?? '').replace(/\n$/, '');
      const fence = text.includes('```') ? '~~~~' : '```';
      return `\n\n${fence}${languageOf(pre)}\n${text}\n${fence}\n\n`;
    },
  });
  return td;
}

export function htmlToMarkdown(html: string | Node): string {
  service ??= build();
  return service
    .turndown(html as string)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
