import { render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import type { DeletionReceipt, StoreCheck } from '../api'
import { setKey } from '../auth'
import { DeletionPage } from '../pages/Deletion'
import { heldSummary, ReceiptView } from './Receipt'

afterEach(() => {
  vi.unstubAllGlobals()
})

const STORES = ['metadata', 'content', 'text index', 'vector index', 'cache', 'staging']
const clean = (store: string): StoreCheck => ({ store, read: `read of ${store}`, remaining: 0, holding: [], clean: true })

function receipt(overrides: Partial<DeletionReceipt> = {}): DeletionReceipt {
  return {
    id: '5e1a0c3e-0000-4000-8000-000000000001',
    reason: 'api',
    subject: null,
    documents: ['d-1'],
    facts: [],
    requested_at: '2026-11-24T02:00:00Z',
    verified_at: '2026-11-24T02:00:01Z',
    verified: true,
    checks: STORES.map(clean),
    ...overrides,
  }
}

describe('a deletion receipt', () => {
  it('when verified, says so and lists every store read back with nothing left', () => {
    // Given a verified receipt / When it is shown
    render(<ReceiptView receipt={receipt()} />)
    // Then the verdict is a status (not an alert) and each store has its row
    expect(screen.getByRole('status')).toHaveTextContent(
      'Verified: all 6 stores, read back after the delete, hold nothing of the 1 deleted document.',
    )
    expect(screen.queryByRole('alert')).toBeNull()
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1)
    expect(rows.map((r) => within(r).getByRole('rowheader').textContent)).toEqual(STORES)
    expect(rows.every((r) => r.textContent?.endsWith('nothing left'))).toBe(true)
    expect(screen.getByTestId('receipt-id')).toHaveTextContent('5e1a0c3e-0000-4000-8000-000000000001')
  })

  it('names the facts removed with the messages they were drawn from', () => {
    render(<ReceiptView receipt={receipt({ documents: ['m-1', 'f-1', 'f-2'], facts: ['f-1', 'f-2'] })} />)
    expect(screen.getByTestId('receipt-facts')).toHaveTextContent('2 facts drawn only from the deleted messages')
    expect(screen.getByTestId('receipt-documents')).toHaveTextContent('3')
  })

  it('when not verified, warns first and names the stores still holding something, as text only', () => {
    // Given a receipt where two stores still hold something, with markup where ids and text are
    const hostile = '<img src=x onerror="window.__pwned=1">'
    const checks = STORES.map(clean)
    checks[1] = { store: 'content', read: hostile, remaining: 2, holding: ['d-1', hostile], clean: false }
    checks[2] = { store: 'text index', read: 'entries', remaining: 1, holding: ['d-1'], clean: false }
    const { container } = render(
      <ReceiptView receipt={receipt({ verified: false, checks, documents: ['d-1', hostile] })} />,
    )
    // Then an alert names them with their counts
    const alert = screen.getByRole('alert')
    expect(alert).toHaveTextContent('Not verified.')
    expect(alert).toHaveTextContent('these stores still hold something of the 2 deleted documents: content (2 items), text index (1 item).')
    expect(screen.queryByRole('status')).toBeNull()
    const content = screen.getByRole('rowheader', { name: 'content' }).closest('tr')!
    expect(content).toHaveTextContent('still holds 2 items of documents d-1, <img src=x onerror="window.__pwned=1">')
    // and the markup stayed text: no element was made from it
    expect(container.querySelector('img')).toBeNull()
    expect(screen.getAllByText(hostile, { exact: false }).length).toBeGreaterThan(0)
  })

  it('summarises only the stores that hold something', () => {
    const checks = STORES.map(clean)
    checks[3] = { ...clean('vector index'), remaining: 4, clean: false }
    expect(heldSummary(checks)).toBe('vector index (4 items)')
    expect(heldSummary(STORES.map(clean))).toBe('')
  })

  it('shown inline, links to its own page', () => {
    const { hook } = memoryLocation({ path: '/settings' })
    render(
      <Router hook={hook}>
        <ReceiptView receipt={receipt({ reason: 'docset', subject: 'ds-1' })} inline />
      </Router>,
    )
    expect(screen.getByRole('heading', { name: 'Deletion receipt' })).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'View this receipt on its own page' })).toHaveAttribute(
      'href',
      '/deletions/5e1a0c3e-0000-4000-8000-000000000001',
    )
    expect(screen.getByText("a documentation set's pages", { exact: false })).toHaveTextContent('(id ds-1)')
  })
})

describe('the receipt page', () => {
  function open(path: string) {
    const { hook } = memoryLocation({ path })
    render(
      <Router hook={hook}>
        <DeletionPage id={path.split('/')[2]} />
      </Router>,
    )
  }

  it('reads the receipt back by its id', async () => {
    // Given the server holds a receipt
    setKey('mlk_k')
    const urls: string[] = []
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        urls.push(url)
        return new Response(JSON.stringify(receipt()))
      }),
    )
    // When its page is opened
    open('/deletions/5e1a0c3e-0000-4000-8000-000000000001')
    // Then it is read from GET /v3/deletions/{id} and shown
    expect(await screen.findByTestId('receipt-verdict')).toHaveTextContent('Verified')
    expect(urls).toEqual(['/v3/deletions/5e1a0c3e-0000-4000-8000-000000000001'])
  })

  it("says plainly when the organization has no such receipt", async () => {
    setKey('mlk_k')
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify({ error: 'deletion receipt x not found' }), { status: 404 })),
    )
    open('/deletions/5e1a0c3e-0000-4000-8000-000000000002')
    expect(await screen.findByRole('alert')).toHaveTextContent('There is no deletion receipt with this id in your organization.')
  })
})
