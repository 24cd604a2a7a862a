import { render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import { Dashboard } from './Dashboard'

afterEach(() => vi.unstubAllGlobals())

const project = (id: string, name: string, memories: number, documents: number) => ({
  id, name, slug: id, description: null, memory_count: memories, document_count: documents, is_default: false,
  created_at: '2026-01-01T00:00:00Z',
})
const DOCSET = {
  id: 'ds-1', name: 'Tide docs', projectId: 'p-docs', baseUrl: 'https://docs.example/', seedSlug: '/', allowedPaths: [],
  createdAt: 0, updatedAt: 0, status: 'ready',
  indexStatus: { docsetId: 'ds-1', totalPages: 47, indexedPages: 47, pendingPages: 0, errorPages: 0, skippedPages: 0,
    totalChunks: 90, status: 'ready', retriedPages: 0 },
}

describe('the dashboard', () => {
  it('counts and lists memories only, with documentation sets in a section of their own', async () => {
    setKey('mlk_k')
    const recalls: unknown[] = []
    vi.stubGlobal('fetch', vi.fn(async (url: string, init: RequestInit) => {
      const json = (body: unknown) => new Response(JSON.stringify(body))
      if (url === '/v3/stats') return json({ total_memories: 54, memories_this_week: 54, storage_bytes: 1, project_count: 2 })
      if (url === '/v3/projects') return json({ projects: [project('p-home', 'Home', 6, 7), project('p-docs', 'docs.example', 47, 47)] })
      if (url === '/status') return json({ docsets: [DOCSET] })
      if (url === '/v3/recall') {
        recalls.push(JSON.parse(String(init.body)))
        return json({ results: [], total: 0, query_time_ms: 1 })
      }
      return new Response('{"error":"no"}', { status: 404 })
    }))
    render(
      <Router hook={memoryLocation({ path: '/' }).hook}>
        <Dashboard />
      </Router>,
    )
    await waitFor(() => expect(screen.getByTestId('stat-total').textContent).toBe('6'))
    expect(screen.getByTestId('stat-projects').textContent).toBe('1')
    await waitFor(() => expect(recalls).toEqual([{ query: '', limit: 20, project_ids: ['p-home'] }]))
    const projects = screen.getByRole('heading', { name: 'Projects' }).parentElement!
    expect(within(projects).getByText('6 memories')).toBeTruthy()
    expect(within(projects).queryByText('docs.example')).toBeNull()
    const docs = screen.getByTestId('docsets')
    expect(within(docs).getByRole('link', { name: 'Tide docs' }).getAttribute('href')).toBe('/projects/p-docs')
    expect(docs.textContent).toContain('47 pages')
  })
})
