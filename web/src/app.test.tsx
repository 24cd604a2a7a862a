import { act, fireEvent, render, screen, waitFor } from '@testing-library/react'
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
