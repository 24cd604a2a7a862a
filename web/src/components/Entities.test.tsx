import { render } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Markdown } from './Markdown'

// The served page requires Trusted Types with no policy: assigning a string to innerHTML throws.
// The same refusal here, so a renderer that decodes through the DOM fails this test as it fails
// in the browser. (Vitest resolves packages with node conditions, so the browser build that the
// vite alias replaces is only exercised by the Chromium e2e test in tests/web.)
const original = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML')!

beforeEach(() => {
  Object.defineProperty(Element.prototype, 'innerHTML', {
    configurable: true,
    get: original.get,
    set() {
      throw new TypeError("This document requires 'TrustedHTML' assignment.")
    },
  })
})
afterEach(() => {
  Object.defineProperty(Element.prototype, 'innerHTML', original)
})

describe('Markdown with character references under Trusted Types', () => {
  it.each([
    ['Tom &amp; Jerry', 'Tom & Jerry'],
    ['&copy; 2026 &mdash; all rights', '© 2026 — all rights'],
    ['&lt;b&gt;not bold&lt;/b&gt; &quot;quoted&quot; &apos;x&apos;', '<b>not bold</b> "quoted" \'x\''],
    ['caf&eacute; na&iuml;ve &Ouml;l &euro;5 &frac12; &hellip;', 'café naïve Öl €5 ½ …'],
    ['&nbsp;x&ensp;y', '\u00a0x\u2002y'],
    ['&#169; &#x1F600; &#0;', '© 😀 \uFFFD'],
    ['&AMP &notanentity; &amp', '&AMP &notanentity; &amp'],
    ['&NotNestedGreaterGreater; &CounterClockwiseContourIntegral;', '⪢̸ ∳'],
  ])('renders %j as %j', (source, shown) => {
    const { container } = render(<Markdown text={source} />)
    expect(container.querySelector('p')?.textContent).toBe(shown)
  })

  it('renders entities inside headings, links, code, tables and raw HTML', () => {
    const text = [
      '# R&amp;D &gt; sales',
      '[Q&amp;A](https://example.com/?a=1&amp;b=2)',
      '`&amp; stays in code`',
      '| a &amp; b | &copy; |\n|---|---|\n| &lt;td&gt; | x |',
      '<div title="&amp;">raw &amp; html</div>',
      '> quote &hearts;\n\n- item &check;\n\n1. &rarr; one',
      '```\n&amp; in a fence\n```',
      '***',
      '~~strike &amp;~~ and a footnote[^1]\n\n[^1]: note &para;',
    ].join('\n\n')
    const { container } = render(<Markdown text={text} />)
    expect(container.querySelector('h2')?.textContent).toBe('R&D > sales')
    const link = container.querySelector('a[href^="https://example.com"]')
    expect(link?.textContent).toBe('Q&A')
    expect(link?.getAttribute('href')).toBe('https://example.com/?a=1&b=2')
    expect(container.querySelector('p code')?.textContent).toBe('&amp; stays in code')
    expect([...container.querySelectorAll('th')].map((t) => t.textContent)).toEqual(['a & b', '©'])
    expect(container.textContent).toContain('<div title="&amp;">raw &amp; html</div>')
    expect(container.querySelector('.markdown div')).toBeNull() // raw HTML is text, not an element
    expect(container.querySelector('blockquote')?.textContent?.trim()).toBe('quote ♥')
    expect(container.querySelector('pre')?.textContent).toBe('&amp; in a fence\n')
    expect(container.querySelector('del')?.textContent).toBe('strike &')
  })
})
