import { render } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import { ContentBoundary } from './ContentBoundary'
import { CodeView, Markdown } from './Markdown'

const HOSTILE = [
  '# Notes',
  '<script>window.__pwned = "script"</script>',
  '<img src="x" onerror="window.__pwned = \'img\'">',
  '[click me](javascript:window.__pwned=1)',
  '[data](data:text/html,<b>x</b>)',
  '<a href="javascript:alert(1)">raw anchor</a>',
  '![tracker](https://tracker.example/pixel.png)',
  '[fine](https://example.com/ok)',
].join('\n\n')

describe('Markdown', () => {
  it('renders hostile content inert: no script, no handler, no javascript: link, no remote image', () => {
    const { container } = render(<Markdown text={HOSTILE} />)
    expect(container.querySelector('h1')).toBeNull() // the page's title is the only h1
    expect(container.querySelector('h2')?.textContent).toBe('Notes')
    expect(container.querySelector('script')).toBeNull()
    expect(container.querySelector('img')).toBeNull()
    for (const el of container.querySelectorAll('*')) {
      for (const attr of el.getAttributeNames()) expect(attr.startsWith('on')).toBe(false)
    }
    const hrefs = [...container.querySelectorAll('a')].map((a) => a.getAttribute('href'))
    expect(hrefs).toEqual(['https://tracker.example/pixel.png', 'https://example.com/ok'])
    // the refused link's text is still shown, as text
    const refused = [...container.querySelectorAll('.refused-link')].map((s) => s.textContent)
    expect(refused).toEqual(['click me', 'data'])
    // raw HTML is visible as what it is
    expect(container.textContent).toContain('<script>window.__pwned = "script"</script>')
    expect(container.textContent).toContain('onerror=')
    expect((window as unknown as { __pwned?: unknown }).__pwned).toBeUndefined()
  })

  it('opens allowed links away from the app without a referrer', () => {
    const { container } = render(<Markdown text="[fine](https://example.com/ok)" />)
    const a = container.querySelector('a')!
    expect(a.getAttribute('rel')).toBe('noopener noreferrer nofollow')
    expect(a.getAttribute('target')).toBe('_blank')
  })

  it('renders tables and highlights fenced code', () => {
    const { container } = render(<Markdown text={'| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return 1\n```'} />)
    expect(container.querySelectorAll('td')).toHaveLength(2)
    const code = container.querySelector('pre code')!
    expect(code.className).toContain('language-python')
    expect(code.querySelector('.hljs-keyword')?.textContent).toBe('def')
  })

  it('shows code content as one highlighted block, even when it holds backticks', () => {
    const source = 'const s = `template ${x}`\n// ``` not a fence end\n'
    const { container } = render(<CodeView code={source} language="javascript" />)
    const code = container.querySelector('pre code')!
    expect(code.textContent).toBe(source)
    expect(code.querySelector('.hljs-keyword')?.textContent).toBe('const')
  })
})

describe('Markdown that is too deep or too costly to format', () => {
  it('shows 3,000 nested quotes as plain text instead of overflowing the stack', () => {
    const text = '>'.repeat(3000) + ' deep'
    const { container } = render(<Markdown text={text} />)
    expect(container.querySelector('pre')?.textContent).toBe(text)
    expect(container.textContent).toContain('Shown as plain text: it nests 3000 quotes or lists deep')
    expect(container.querySelector('blockquote')).toBeNull()
  })

  it('shows 20,000 stars either side of a word as plain text, at once', () => {
    const text = '*'.repeat(20000) + 'word' + '*'.repeat(20000)
    const { container } = render(<Markdown text={text} />)
    expect(container.querySelector('pre')?.textContent).toBe(text)
    expect(container.querySelector('em, strong')).toBeNull()
  })

  it('falls back to plain text when rendering fails anyway', () => {
    const Thrower = () => {
      throw new RangeError('Maximum call stack size exceeded')
    }
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {})
    const { container } = render(<ContentBoundary text="the memory's text"><Thrower /></ContentBoundary>)
    quiet.mockRestore()
    expect(container.querySelector('pre')?.textContent).toBe("the memory's text")
    expect(container.textContent).toContain('Shown as plain text: it could not be formatted')
  })
})
