import { render } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { queryWords } from '../snippet'
import { Highlight } from './Highlight'

const marked = (text: string, query: string) =>
  [...render(<Highlight text={text} query={query} />).container.querySelectorAll('mark')].map((m) => m.textContent)

describe('search highlights', () => {
  it('never marks a stop word ("the" was marked four times)', () => {
    const text = 'The digits to open the bicycle padlock are 0417; the other lock is on the cellar door.'
    expect(marked(text, 'digits to open the bicycle padlock')).toEqual(['digits', 'open', 'bicycle', 'padlock'])
  })

  it('keeps the words that say what was asked, in any script', () => {
    expect(queryWords('When is the Bürgeramt appointment?')).toEqual(['bürgeramt', 'appointment'])
    expect(queryWords("what's Aylin's ring size")).toEqual(['aylin', 'ring', 'size'])
  })

  it('marks nothing for a query of stop words alone', () => {
    expect(marked('What is it about?', 'what is it about')).toEqual([])
  })
})
