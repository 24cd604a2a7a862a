import { describe, expect, it } from 'vitest'
import { SNIPPET_MAX, snippet, stripMarkdown } from './snippet'

describe('stripMarkdown', () => {
  it('keeps what a reader sees and drops the syntax', () => {
    expect(
      stripMarkdown('# Title\n\nSome **bold** and _em_ text, a [link](https://x.test) and `code`.\n\n- one\n- [x] two\n\n> quoted'),
    ).toBe('Title Some bold and em text, a link and code. one two quoted')
    expect(stripMarkdown('| a | b |\n|---|---|\n| 1 | 2 |')).toBe('a b 1 2')
    expect(stripMarkdown('```python\nprint(1)\n```')).toBe('print(1)')
    expect(stripMarkdown('snake_case_name stays')).toBe('snake_case_name stays')
  })
})

describe('snippet', () => {
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')

  it('is the whole text when short', () => {
    expect(snippet(['## Miso\n\nNeeds her **thyroid** pill.'], 'thyroid')).toBe('Miso Needs her thyroid pill.')
  })

  it('is at most 300 characters around the part holding the query words', () => {
    const text = `${filler(200)} the thyroid pill is given with food at 8am ${filler(200)}`
    const s = snippet([text], 'thyroid pill food')
    expect(s.length).toBeLessThanOrEqual(SNIPPET_MAX)
    expect(s).toContain('the thyroid pill is given with food at 8am')
    expect(s.startsWith('…')).toBe(true)
    expect(s.endsWith('…')).toBe(true)
  })

  it('chooses the chunk that matches best, not the first', () => {
    expect(snippet(['nothing relevant here', 'the vet said thyroid'], 'thyroid vet')).toBe('the vet said thyroid')
  })

  it('starts at the beginning when nothing matches word for word', () => {
    const s = snippet([filler(300)], 'semantic only')
    expect(s.startsWith('word0 word1')).toBe(true)
    expect(s.length).toBeLessThanOrEqual(SNIPPET_MAX)
  })
})
