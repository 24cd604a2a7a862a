import { describe, expect, it } from 'vitest'
import { safeHref } from './links'

describe('safeHref', () => {
  it('keeps web and mail links', () => {
    expect(safeHref('https://example.com/a?b=1')).toBe('https://example.com/a?b=1')
    expect(safeHref('http://example.com')).toBe('http://example.com/')
    expect(safeHref('mailto:someone@example.com')).toBe('mailto:someone@example.com')
  })

  it.each([
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    '/relative/path',
    '#fragment',
    '',
  ])('refuses %j', (href) => {
    expect(safeHref(href)).toBeNull()
  })
})
