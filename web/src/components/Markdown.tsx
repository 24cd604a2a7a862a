// A memory's content, rendered. Memories are untrusted input:
// - markdown becomes React elements (react-markdown builds a syntax tree; nothing is ever assigned
//   as HTML), and raw HTML in the markdown is shown as the text it is, never as elements;
// - a link is a link only for http(s) and mailto (links.ts); anything else is shown as text;
// - images are not loaded (a remote image reports that the memory was opened): they become links;
// - code is highlighted by highlight.js (lowlight), whose output is a syntax tree too;
// - a memory nested too deep or too costly to parse is shown as plain text (markdownLimits.ts).
import type { Root, RootContent } from 'mdast'
import ReactMarkdown, { type Components } from 'react-markdown'
import rehypeHighlight from 'rehype-highlight'
import remarkGfm from 'remark-gfm'
import { safeHref } from '../links'
import { tooComplexToFormat } from '../markdownLimits'
import { ContentBoundary, PlainText } from './ContentBoundary'

/** Raw HTML in a memory is kept as visible text. */
function remarkHtmlAsText() {
  return (tree: Root) => {
    const visit = (node: Root | RootContent) => {
      if ('children' in node) {
        node.children = node.children.map((child) =>
          child.type === 'html' ? ({ type: 'text', value: child.value } as RootContent) : child,
        ) as typeof node.children
        node.children.forEach(visit)
      }
    }
    visit(tree)
  }
}

// A memory's headings sit under the page's own title (its only h1): each moves one level down.
const demoted = {
  h1: ({ children }: { children?: React.ReactNode }) => <h2>{children}</h2>,
  h2: ({ children }: { children?: React.ReactNode }) => <h3>{children}</h3>,
  h3: ({ children }: { children?: React.ReactNode }) => <h4>{children}</h4>,
  h4: ({ children }: { children?: React.ReactNode }) => <h5>{children}</h5>,
  h5: ({ children }: { children?: React.ReactNode }) => <h6>{children}</h6>,
}

const components: Components = {
  ...demoted,
  a({ href, children }) {
    const safe = safeHref(href)
    if (!safe) {
      return (
        <span className="refused-link" title="Link not followed: only http(s) and mailto links are">
          {children}
        </span>
      )
    }
    return (
      <a href={safe} rel="noopener noreferrer nofollow" target="_blank">
        {children}
      </a>
    )
  },
  img({ src, alt }) {
    const safe = safeHref(typeof src === 'string' ? src : null)
    const label = `image: ${alt || 'untitled'}`
    return safe ? (
      <a href={safe} rel="noopener noreferrer nofollow" target="_blank" className="image-link">
        [{label}]
      </a>
    ) : (
      <span className="refused-link">[{label}]</span>
    )
  },
}

// Only what safeHref allows leaves the markdown; the components above decide how it is shown.
const keepSafe = (url: string) => safeHref(url) ?? ''

export function Markdown({ text }: { text: string }) {
  // Too deep or too costly to parse (markdownLimits.ts): plain text, decided before parsing; and
  // anything that still fails while rendering falls back to plain text too (ContentBoundary).
  const reason = tooComplexToFormat(text)
  if (reason) return <PlainText text={text} reason={reason} />
  return (
    <ContentBoundary text={text}>
      <div className="markdown">
        <ReactMarkdown
          remarkPlugins={[remarkGfm, remarkHtmlAsText]}
          rehypePlugins={[[rehypeHighlight, { detect: false }]]}
          components={components}
          urlTransform={keepSafe}
        >
          {text}
        </ReactMarkdown>
      </div>
    </ContentBoundary>
  )
}

/** Code content (content_type code or json): one highlighted block in its language. */
export function CodeView({ code, language }: { code: string; language: string | null }) {
  const fence = '`'.repeat(Math.max(3, ...Array.from(code.matchAll(/`+/g), (m) => m[0].length + 1)))
  return <Markdown text={`${fence}${language ?? ''}\n${code.replace(/\n$/, '')}\n${fence}`} />
}

export default Markdown
