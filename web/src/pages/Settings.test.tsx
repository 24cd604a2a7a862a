import { fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import { Settings } from './Settings'

afterEach(() => {
  vi.unstubAllGlobals()
})

const RECEIPT_ID = '5e1a0c3e-0000-4000-8000-0000000000d5'
const DOCSET = {
  id: 'ds-1', name: 'Tide docs', baseUrl: 'https://docs.example/', seedSlug: '/', createdAt: 0, updatedAt: 0,
  status: 'ready',
  indexStatus: { totalPages: 2, indexedPages: 2, pendingPages: 0, errorPages: 0, skippedPages: 0, totalChunks: 4, status: 'ready' },
}
const store = (name: string, remaining = 0) => ({
  store: name, read: `read of ${name}`, remaining, holding: remaining ? ['p-2'] : [], clean: remaining === 0,
})

describe('deleting a documentation set in Settings', () => {
  it('shows the receipt of its pages, read back from the server, naming a store that still holds one', async () => {
    // Given a docset whose delete is recorded with a receipt where the vector index still holds a page
    setKey('mlk_k')
    const calls: string[] = []
    let deleted = false
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push(`${init.method} ${url}`)
        const json = (body: unknown) => new Response(JSON.stringify(body))
        if (url === '/v3/whoami') {
          return json({ user_id: 'u', organization_id: 'o', organization_name: 'Org', key_id: 'k', can_manage_keys: false })
        }
        if (url === '/status') return json({ docsets: deleted ? [] : [DOCSET] })
        if (url.startsWith('/v3/forgotten')) return json({ forgotten: [] })
        if (url === '/docset/ds-1' && init.method === 'DELETE') {
          deleted = true
          return json({ success: true, docsetId: 'ds-1', receiptId: RECEIPT_ID, verified: false })
        }
        if (url === `/v3/deletions/${RECEIPT_ID}`) {
          return json({
            id: RECEIPT_ID, reason: 'docset', subject: 'ds-1', documents: ['p-1', 'p-2'],
            requested_at: '2026-11-24T02:00:00Z', verified_at: '2026-11-24T02:00:01Z', verified: false,
            checks: [store('metadata'), store('content'), store('text index'), store('vector index', 3), store('cache'),
              store('staging')],
          })
        }
        return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      }),
    )
    const { hook } = memoryLocation({ path: '/settings' })
    render(
      <Router hook={hook}>
        <Settings />
      </Router>,
    )
    // When it is deleted, after the confirmation
    fireEvent.click(await screen.findByRole('button', { name: 'Delete…' }))
    fireEvent.click(screen.getByRole('button', { name: 'Delete Tide docs' }))
    // Then the receipt is read back and shown: a warning naming the store, and a link to its page
    const receipt = await screen.findByTestId('receipt')
    expect(calls).toContain(`GET /v3/deletions/${RECEIPT_ID}`)
    expect(within(receipt).getByRole('alert')).toHaveTextContent(
      'these stores still hold something of the 2 deleted documents: vector index (3 items).',
    )
    expect(within(receipt).getByRole('link', { name: 'View this receipt on its own page' })).toHaveAttribute(
      'href',
      `/deletions/${RECEIPT_ID}`,
    )
    expect(screen.getByText('Deleted Tide docs')).toBeInTheDocument()
  })
})

describe('indexing a documentation site in Settings', () => {
  it('sends the name given, and shows progress updating by itself until the set is ready', async () => {
    setKey('mlk_k')
    const bodies: unknown[] = []
    let reads = 0
    const progress = (indexed: number, total: number, status: string) => ({
      ...DOCSET, name: 'Tide handbook',
      indexStatus: { ...DOCSET.indexStatus, indexedPages: indexed, totalPages: total, pendingPages: total - indexed, status },
    })
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        const json = (body: unknown) => new Response(JSON.stringify(body))
        if (url === '/index') {
          bodies.push(JSON.parse(String(init.body)))
          return json({ docsetId: 'ds-1', status: 'indexing', seedIndexed: false })
        }
        if (url === '/status') {
          reads += 1
          if (bodies.length === 0) return json({ docsets: [] })
          return json({ docsets: [reads < 4 ? progress(reads * 10, 47, 'indexing') : progress(47, 47, 'ready')] })
        }
        if (url === '/v3/whoami') {
          return json({ user_id: 'u', organization_id: 'o', organization_name: 'Org', key_id: 'k', can_manage_keys: false })
        }
        if (url.startsWith('/v3/keys')) return json({ keys: [] })
        if (url.startsWith('/v3/forgotten')) return json({ forgotten: [] })
        return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      }),
    )
    render(
      <Router hook={memoryLocation({ path: '/settings' }).hook}>
        <Settings />
      </Router>,
    )
    await screen.findByText('No documentation sets.')
    fireEvent.change(screen.getByLabelText('Documentation site URL'), { target: { value: 'https://docs.example/' } })
    fireEvent.change(screen.getByLabelText(/^Name/), { target: { value: 'Tide handbook' } })
    fireEvent.click(screen.getByRole('button', { name: 'Index site' }))
    expect(await screen.findByText(/Indexing started/)).toBeInTheDocument()
    expect(bodies).toEqual([{ baseUrl: 'https://docs.example/', seedSlug: '/', name: 'Tide handbook' }])
    // no reload: the table follows the crawl until the set is ready
    expect(await screen.findByText('47/47 indexed', {}, { timeout: 9000 })).toBeInTheDocument()
    expect(screen.getByTestId('docset-status')).toHaveTextContent(/^ready$/)
    const settled = reads
    await new Promise((r) => setTimeout(r, 2500))
    expect(reads).toBe(settled) // and stops asking once it is
  }, 15000)
})
