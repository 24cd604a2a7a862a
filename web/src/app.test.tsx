import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { App } from './app'
import { setKey } from './auth'

afterEach(() => vi.unstubAllGlobals())

const EMPTY: Record<string, unknown> = {
  '/v3/whoami': { organization_name: 'Home', key_id: 'k1' },
  '/v3/stats': { total_memories: 3, memories_this_week: 1, storage_bytes: 10, project_count: 1 },
  '/v3/projects': { projects: [{ id: 'p1', name: 'Home', memory_count: 3, document_count: 4 }] },
  '/status': { docsets: [] },
  '/v3/recall': { results: [], total: 0, query_time_ms: 1 },
}

describe('the app with the server down', () => {
  it('says "Cannot reach memlane" once, with a Retry that loads the page when the server is back', async () => {
    setKey('mlk_k')
    let up = false
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (!up) throw new TypeError('Failed to fetch')
      const path = url.split('?')[0]
      return new Response(JSON.stringify(EMPTY[path] ?? {}))
    }))
    const { hook } = memoryLocation({ path: '/' })
    render(
      <Router hook={hook}>
        <App />
      </Router>,
    )
    await waitFor(() => expect(screen.getByTestId('offline')).toBeTruthy())
    expect(screen.getAllByRole('alert')).toHaveLength(1)
    expect(screen.getByRole('alert').textContent).toContain('Cannot reach memlane')
    expect(document.body.textContent).not.toContain('Failed to fetch')

    up = true
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Retry' }))
    })
    await waitFor(() => expect(screen.getByTestId('stat-total').textContent).toBe('3'))
    expect(screen.queryByTestId('offline')).toBeNull()
  })

  it('shows "Page not found" for a path the app does not have', async () => {
    setKey('mlk_k')
    vi.stubGlobal('fetch', vi.fn(async (url: string) => new Response(JSON.stringify(EMPTY[url.split('?')[0]] ?? {}))))
    const { hook } = memoryLocation({ path: '/no/such/page' })
    render(
      <Router hook={hook}>
        <App />
      </Router>,
    )
    expect((await screen.findByRole('heading', { level: 1 })).textContent).toBe('Page not found')
  })
})

describe('signing out says why on the sign-in page', () => {
  const answering = (refusal: string) =>
    vi.fn(async (url: string) => {
      const path = url.split('?')[0]
      if (path === '/v3/whoami') return new Response(JSON.stringify({ error: refusal }), { status: 401 })
      return new Response(JSON.stringify(EMPTY[path] ?? {}))
    })

  const open = (path: string) => {
    const { hook } = memoryLocation({ path })
    render(
      <Router hook={hook}>
        <App />
      </Router>,
    )
  }

  afterEach(() => window.sessionStorage.clear())

  it('a revoked key: the key was refused, and what to do', async () => {
    setKey('mlk_revoked')
    vi.stubGlobal('fetch', answering('invalid or revoked API key'))
    open('/projects')
    expect(await screen.findByRole('heading', { name: 'Sign in to memlane' })).toBeTruthy()
    expect(screen.getByRole('status').textContent).toBe(
      'You were signed out: the server no longer accepts the API key this browser used (it was revoked, or the ' +
        'server has a new data directory). Sign in with the link `make run` prints, or paste an active key.',
    )
    expect(window.localStorage.getItem('memlane.apiKey')).toBeNull()
  })

  it('an expired session: says it expired', async () => {
    setKey('mlk_old')
    vi.stubGlobal('fetch', answering('access token expired'))
    open('/')
    expect(await screen.findByText('Your session expired, so you were signed out. Sign in again to continue.'))
      .toBeTruthy()
  })

  it('the Sign out button, and a sign-out in another tab', async () => {
    setKey('mlk_k')
    vi.stubGlobal('fetch', vi.fn(async (url: string) => new Response(JSON.stringify(EMPTY[url.split('?')[0]] ?? {}))))
    open('/')
    fireEvent.click(await screen.findByRole('button', { name: 'Sign out' }))
    expect(await screen.findByText('You signed out. The API key is no longer kept in this browser.')).toBeTruthy()
    cleanup()
    window.sessionStorage.clear()

    setKey('mlk_k')
    open('/')
    await screen.findByTestId('stat-total')
    act(() => {
      window.localStorage.removeItem('memlane.apiKey') // what the other tab's sign-out leaves behind
      window.dispatchEvent(new StorageEvent('storage', { key: 'memlane.apiKey', oldValue: 'mlk_k', newValue: null }))
    })
    expect(await screen.findByText('You were signed out in another tab.')).toBeTruthy()
  })

  it('says it once: the sign-in page opened again later says nothing', async () => {
    setKey('mlk_revoked')
    vi.stubGlobal('fetch', answering('invalid or revoked API key'))
    open('/')
    await screen.findByRole('heading', { name: 'Sign in to memlane' })
    cleanup()
    open('/login')
    await screen.findByRole('heading', { name: 'Sign in to memlane' })
    expect(screen.queryByRole('status')).toBeNull()
  })
})
