import { render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import { MemoryPage } from './Memory'

afterEach(() => vi.unstubAllGlobals())

const json = (body: unknown) => new Response(JSON.stringify(body))
const PROJECT = { id: 'p-1', name: 'Home', slug: 'home', description: null, memory_count: 1, document_count: 1,
  is_default: true, created_at: '2026-01-01T00:00:00Z' }

function documentWith(content: string) {
  return {
    id: 'd-1', project_id: 'p-1', title: 'A hostile memory', content, summary: null, content_type: 'text',
    source_url: null, metadata: {}, content_hash: 'h', updates_memory_id: null, forget_after: null,
    created_at: '2026-11-25T10:00:00Z', updated_at: '2026-11-25T10:00:00Z', last_accessed_at: null, status: 'ready',
    status_reason: null, chunk_count: 1, superseded_by: null, media: null, source_changed_at: null,
    conversation_id: null, message_index: null, kind: 'memory', fact: null, derived_facts: [], chunks: [],
    versions: null,
  }
}

const RECEIPT = { id: 'r-1', reason: 'api', subject: null, documents: ['d-1'], facts: [],
  requested_at: '2026-11-25T10:00:00Z', verified_at: '2026-11-25T10:00:00Z', verified: true, checks: [] }

describe('a memory whose content cannot be formatted', () => {
  it.each([
    ['3,000 nested quotes', '>'.repeat(3000) + ' deep'],
    ['20,000 stars either side of a word', '*'.repeat(20000) + 'word' + '*'.repeat(20000)],
  ])('%s: the page stays usable, shows the text and deletes the memory', { timeout: 60_000 }, async (_, content) => {
    setKey('mlk_k')
    const deleted: string[] = []
    vi.stubGlobal('fetch', vi.fn(async (url: string, init?: RequestInit) => {
      if (url.startsWith('/v3/documents/d-1/related')) return json({ document_id: 'd-1', related: [], floor: null })
      if (url === '/v3/documents/d-1' && init?.method === 'DELETE') {
        deleted.push(url)
        return json({ id: 'd-1', deleted: true, receipt: RECEIPT })
      }
      if (url.startsWith('/v3/documents/d-1')) return json(documentWith(content))
      if (url === '/v3/projects') return json({ projects: [PROJECT] })
      return new Response('{"error":"no"}', { status: 404 })
    }))
    const location = memoryLocation({ path: '/memories/d-1', record: true })
    render(
      <Router hook={location.hook}>
        <MemoryPage id="d-1" />
      </Router>,
    )
    // the renderer is loaded with the first memory opened: on a busy machine that takes a while
    const plain = await screen.findByTestId('plain-content', {}, { timeout: 20_000 })
    expect(plain.querySelector('pre')?.textContent).toBe(content)
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('A hostile memory')
    await userEvent.click(screen.getByRole('button', { name: 'Delete this memory…' }))
    await userEvent.click(screen.getByRole('button', { name: 'Delete memory' }))
    await waitFor(() => expect(deleted).toEqual(['/v3/documents/d-1']))
    await waitFor(() => expect(location.history?.at(-1)).toMatch(/deletions\/r-1/))
  })
})
