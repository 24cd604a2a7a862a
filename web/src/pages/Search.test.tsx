import { act, fireEvent, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import { criteriaFromSearch, recallBody, Search, searchFromCriteria, TYPING_PAUSE_MS } from './Search'

afterEach(() => {
  vi.unstubAllGlobals()
  vi.useRealTimers()
})

describe('search criteria', () => {
  it('map the URL to the /v3/recall filters and back', () => {
    const c = criteriaFromSearch('q=cat+meds&projects=p1,p2&types=note,code,bogus&tags=home,+vet&after=2025-01-31')
    expect(c.types).toEqual(['note', 'code'])
    expect(recallBody(c)).toEqual({
      query: 'cat meds',
      limit: 20,
      project_ids: ['p1', 'p2'],
      filters: { content_type: ['note', 'code'], tags: ['home', 'vet'], created_after: '2025-01-31' },
    })
    expect(criteriaFromSearch(searchFromCriteria(c))).toEqual(c)
  })

  it('leave filters out when none are set', () => {
    expect(recallBody(criteriaFromSearch('q=hello'))).toEqual({ query: 'hello', limit: 20 })
  })
})

describe('Search page', () => {
  it('searches after a pause in typing, once, and shows scores and matched text', async () => {
    vi.useFakeTimers()
    setKey('mlk_k')
    const recalls: unknown[] = []
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        if (url === '/v3/projects') return new Response(JSON.stringify({ projects: [] }))
        recalls.push(JSON.parse(String(init.body)))
        return new Response(
          JSON.stringify({
            total: 1,
            query_time_ms: 12.3,
            results: [
              {
                document_id: 'd1', title: 'Miso meds', summary: null, score: 0.8123, source_url: null,
                content_type: 'note', created_at: '2025-01-01T00:00:00Z', project_id: 'p', chunks: [
                  { memory_id: 'c1', content: 'Miso needs her thyroid pill', chunk_index: 0, score: 0.8123, heading_path: [] },
                ],
              },
            ],
          }),
        )
      }),
    )
    const { hook } = memoryLocation({ path: '/search' })
    render(
      <Router hook={hook}>
        <Search />
      </Router>,
    )
    const box = screen.getByLabelText('Search across your memories')
    for (const text of ['t', 'th', 'thyroid']) fireEvent.change(box, { target: { value: text } })
    await act(async () => {
      await vi.advanceTimersByTimeAsync(TYPING_PAUSE_MS + 10)
    })
    expect(recalls).toEqual([{ query: 'thyroid', limit: 20 }])
    expect(screen.getByText('Miso meds').getAttribute('href')).toBe('/memories/d1')
    expect(screen.getAllByText('0.812').length).toBeGreaterThan(0)
    expect(screen.getByText('thyroid').tagName).toBe('MARK')
  })

  it('shows guidance with examples on an empty page, and asks nothing of the server', async () => {
    setKey('mlk_k')
    const calls: string[] = []
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      calls.push(url)
      return new Response(JSON.stringify({ projects: [] }))
    }))
    const { hook } = memoryLocation({ path: '/search' })
    render(
      <Router hook={hook}>
        <Search />
      </Router>,
    )
    expect(screen.getByRole('heading', { name: 'What to type' })).toBeTruthy()
    const example = screen.getByRole('link', { name: 'when does my passport expire' })
    expect(example.getAttribute('href')).toBe('/search?q=when%20does%20my%20passport%20expire')
    expect(calls.filter((u) => u.includes('recall'))).toEqual([])
  })

  it('says that no memory matches when the answer is empty, and shows a bounded snippet otherwise', async () => {
    vi.useFakeTimers()
    setKey('mlk_k')
    const long = `${'filler words here '.repeat(60)}the thyroid pill is given with food ${'more filler text '.repeat(60)}`
    let answer: unknown[] = []
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (url === '/v3/projects') return new Response(JSON.stringify({ projects: [] }))
      return new Response(JSON.stringify({ total: answer.length, query_time_ms: 3, results: answer }))
    }))
    const { hook } = memoryLocation({ path: '/search' })
    render(
      <Router hook={hook}>
        <Search />
      </Router>,
    )
    const box = screen.getByLabelText('Search across your memories')
    fireEvent.change(box, { target: { value: 'zebra migration' } })
    await act(async () => {
      await vi.advanceTimersByTimeAsync(TYPING_PAUSE_MS + 10)
    })
    expect(screen.getByRole('heading', { name: 'No memory matches' })).toBeTruthy()
    expect(screen.getByTestId('no-matches').textContent).toContain('“zebra migration”')
    expect(screen.queryByRole('heading', { name: 'What to type' })).toBeNull()

    answer = [{
      document_id: 'd1', title: 'Miso', summary: null, score: 0.7, source_url: null, content_type: 'markdown',
      created_at: '2025-01-01T00:00:00Z', project_id: 'p', chunks: [
        { memory_id: 'c1', content: `## Care\n\n**${long}**`, chunk_index: 0, score: 0.7, heading_path: ['Miso', 'Care'] },
      ],
    }]
    fireEvent.change(box, { target: { value: 'thyroid pill' } })
    await act(async () => {
      await vi.advanceTimersByTimeAsync(TYPING_PAUSE_MS + 10)
    })
    expect(screen.queryByTestId('no-matches')).toBeNull()
    const shown = screen.getByTestId('snippet').textContent ?? ''
    expect(shown.length).toBeLessThanOrEqual(300)
    expect(shown).toContain('the thyroid pill is given with food')
    expect(shown).not.toContain('**')
    expect(screen.getByTestId('search-status').textContent).toMatch(/^1 result in \d+ ms$/)
  })

  it('shows weak matches under "Weaker matches" with a short explanation, never "No memory matches"', async () => {
    vi.useFakeTimers()
    setKey('mlk_k')
    const doc = (id: string, title: string, match: 'strong' | 'weak') => ({
      document_id: id, title, summary: null, score: 0.5, relevance: match === 'strong' ? 0.9 : 0.4, match,
      source_url: null, content_type: 'note', created_at: '2025-01-01T00:00:00Z', project_id: 'p',
      chunks: [{ memory_id: `${id}c`, content: `${title} text`, chunk_index: 0, score: 0.5, heading_path: [] }],
    })
    let answer: unknown[] = [doc('d1', 'Passport', 'weak')]
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (url === '/v3/projects') return new Response(JSON.stringify({ projects: [] }))
      return new Response(JSON.stringify({ total: answer.length, query_time_ms: 3, floor: 0.24, strong: 0.65, results: answer }))
    }))
    const { hook } = memoryLocation({ path: '/search' })
    render(
      <Router hook={hook}>
        <Search />
      </Router>,
    )
    const box = screen.getByLabelText('Search across your memories')
    fireEvent.change(box, { target: { value: 'travel document' } })
    await act(async () => {
      await vi.advanceTimersByTimeAsync(TYPING_PAUSE_MS + 10)
    })
    // nothing strong: no "No memory matches", the weak one under its own heading, with why
    expect(screen.queryByTestId('no-matches')).toBeNull()
    expect(screen.getByRole('heading', { name: 'Weaker matches' })).toBeTruthy()
    const weaker = screen.getByTestId('weaker-matches')
    expect(weaker.textContent).toContain('Nothing you saved is a close match for “travel document”')
    expect(weaker.textContent).toContain('Passport')
    expect(screen.getByTestId('search-results').textContent).toBe('')

    answer = [doc('d2', 'Router', 'strong'), doc('d1', 'Passport', 'weak')]
    fireEvent.change(box, { target: { value: 'wifi' } })
    await act(async () => {
      await vi.advanceTimersByTimeAsync(TYPING_PAUSE_MS + 10)
    })
    expect(screen.getByTestId('search-results').textContent).toContain('Router')
    expect(screen.getByTestId('search-results').textContent).not.toContain('Passport')
    expect(screen.getByTestId('weaker-matches').textContent).toContain('memlane is less sure of them')
  })
})
