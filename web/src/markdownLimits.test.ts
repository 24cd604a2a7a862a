import { describe, expect, it } from 'vitest'
import { MAX_INDENT, MAX_NESTING, tooComplexToFormat } from './markdownLimits'

describe('tooComplexToFormat', () => {
  it('lets anything a person writes be formatted', () => {
    const ordinary = [
      '# Notes', '> a quote\n> > a reply', '- a\n  - b\n    - c\n      - d', '**bold** and _it_ and ~~gone~~ '.repeat(200),
      '[a link](https://example.com) '.repeat(300), '*'.repeat(80), '```python\n' + 'x = [[1], [2]]\n'.repeat(3000) + '```',
    ].join('\n\n')
    expect(tooComplexToFormat(ordinary)).toBeNull()
    expect(tooComplexToFormat('>'.repeat(MAX_NESTING) + ' deep')).toBeNull()
    expect(tooComplexToFormat(' '.repeat(MAX_INDENT) + '- item')).toBeNull()
  })

  it('refuses the nesting and the delimiter work that blank or freeze the page', () => {
    expect(tooComplexToFormat('>'.repeat(3000) + ' deep')).toMatch(/nests 3000 quotes or lists deep/)
    expect(tooComplexToFormat('> - '.repeat(40) + 'x')).toMatch(/nests 80/)
    expect(tooComplexToFormat(' '.repeat(MAX_INDENT + 1) + '- item')).toMatch(/indents a list/)
    expect(tooComplexToFormat('*'.repeat(20000) + 'word' + '*'.repeat(20000))).toMatch(/repeats a mark/)
    expect(tooComplexToFormat('*a '.repeat(20000))).toMatch(/emphasis and link marks/)
    expect(tooComplexToFormat('a]'.repeat(20000))).toMatch(/emphasis and link marks/)
    // one paragraph, not many: the work is quadratic within a paragraph only
    expect(tooComplexToFormat(('a]'.repeat(1000) + '\n\n').repeat(3))).toBeNull()
    expect(tooComplexToFormat(('a]'.repeat(1000) + '\n').repeat(3))).toMatch(/emphasis/)
  })

  it('does not count what is inside fenced code', () => {
    expect(tooComplexToFormat('~~~\n' + '*'.repeat(50000) + '\n~~~\nafter')).toBeNull()
    expect(tooComplexToFormat('```\n' + '>'.repeat(3000) + '\n```')).toBeNull()
  })
})
