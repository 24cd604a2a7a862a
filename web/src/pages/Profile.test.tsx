import { render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import { MemoryPage } from './Memory'
import { ProfilePage } from './Profile'

afterEach(() => vi.unstubAllGlobals())

const json = (body: unknown) => new Response(JSON.stringify(body))
const PROJECT = { id: 'p-1', name: 'Home', slug: 'home', description: null, memory_count: 3, document_count: 4,
  is_default: true, created_at: '2026-01-01T00:00:00Z' }
const PROFILE = {
  project_id: 'p-1', subject: 'Alice', updated_at: '2026-11-25T10:00:00Z', extraction: 'on', text: '',
  facts: [
    { id: 'f-2', text: 'Alice lives in Berlin', subject: 'Alice', since: '2026-11-25T10:00:00Z', sources: 2,
      replaces: 'Alice lives in Paris' },
    { id: 'f-3', text: '<img src=x onerror=alert(1)> likes hiking', subject: 'Alice', since: '2026-11-20T10:00:00Z',
      sources: 1, replaces: null },
  ],
  recent: [
    { id: 'f-2', kind: 'fact', text: 'Alice lives in Berlin', at: '2026-11-25T10:00:00Z', speaker: null,
      change: 'update', replaces: 'Alice lives in Paris' },
    { id: 'm-9', kind: 'message', text: 'I moved to Berlin last month.', at: '2026-11-25T09:59:00Z', speaker: 'Alice',
      change: null, replaces: null },
  ],
}

describe('the profile page', () => {
  it('shows the current facts, what changed lately and the latest messages, as text', async () => {
    setKey('mlk_k')
    const asked: string[] = []
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (url === '/v3/projects') return json({ projects: [PROJECT] })
      if (url.startsWith('/v3/profile')) {
        asked.push(url)
        return json(PROFILE)
      }
      return new Response('{"error":"no"}', { status: 404 })
    }))
    render(
      <Router hook={memoryLocation({ path: '/profile' }).hook}>
        <ProfilePage />
      </Router>,
    )
    const facts = await screen.findByTestId('profile-facts')
    await waitFor(() => expect(within(facts).getAllByRole('listitem')).toHaveLength(2))
    expect(within(facts).getByRole('link', { name: 'Alice lives in Berlin' }).getAttribute('href')).toBe('/memories/f-2')
    expect(facts.textContent).toContain('2 messages')
    expect(facts.textContent).toContain('was: Alice lives in Paris')
    // stored text stays text: no element is made of it
    expect(facts.querySelector('img')).toBeNull()
    const recent = screen.getByTestId('profile-recent')
    expect(recent.textContent).toContain('Updated:')
    expect(recent.textContent).toContain('Alice:')
    expect(asked).toEqual(['/v3/profile'])
  })

  it('says when extraction is off', async () => {
    setKey('mlk_k')
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (url === '/v3/projects') return json({ projects: [PROJECT] })
      return json({ ...PROFILE, facts: [], recent: [], extraction: 'off: no LLM is configured' })
    }))
    render(
      <Router hook={memoryLocation({ path: '/profile' }).hook}>
        <ProfilePage />
      </Router>,
    )
    expect(await screen.findByText(/Fact extraction is off: no LLM is configured/)).toBeTruthy()
    expect(screen.getByText('No facts yet.')).toBeTruthy()
  })
})

describe("a fact's page", () => {
  it('lists every reconciliation decision with its reason and the messages the fact came from', async () => {
    setKey('mlk_k')
    const decision = (outcome: string, reason: string, at: string, supersedes: string | null = null) => ({
      outcome, reason, fact: 'Alice lives in Berlin', against: ['f-1'], supersedes, sources: ['m-9'], decided_at: at,
      model: 'openai-compatible:llama3.1',
    })
    const doc = {
      id: 'f-2', project_id: 'p-1', title: 'Fact about Alice', content: 'Alice lives in Berlin', summary: null,
      content_type: 'text', source_url: null, metadata: {}, content_hash: 'h', updates_memory_id: 'f-1',
      forget_after: null, created_at: '2026-11-25T10:00:00Z', updated_at: '2026-11-25T10:00:00Z',
      last_accessed_at: null, status: 'ready', status_reason: null, chunk_count: 1, superseded_by: null, media: null,
      source_changed_at: null, conversation_id: null, message_index: null, kind: 'fact', derived_facts: [],
      fact: { subject: 'Alice', sources: ['m-9', 'm-12'], decisions: [
        decision('update', 'home changed from Paris to Berlin', '2026-11-25T10:00:00Z', 'f-1'),
        decision('duplicate', 'both say home is Berlin', '2026-11-25T11:00:00Z'),
      ] },
      chunks: [], versions: [{ id: 'f-1', title: 'Fact about Alice', created_at: '2026-10-01T00:00:00Z', summary: null },
        { id: 'f-2', title: 'Fact about Alice', created_at: '2026-11-25T10:00:00Z', summary: null }],
    }
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      if (url.startsWith('/v3/documents/f-2/related')) return json({ document_id: 'f-2', related: [], floor: null })
      if (url.startsWith('/v3/documents/f-2')) return json(doc)
      if (url === '/v3/projects') return json({ projects: [PROJECT] })
      return new Response('{"error":"no"}', { status: 404 })
    }))
    render(
      <Router hook={memoryLocation({ path: '/memories/f-2' }).hook}>
        <MemoryPage id="f-2" />
      </Router>,
    )
    const history = await screen.findByTestId('decision-history')
    const items = within(history).getAllByRole('listitem')
    expect(items.map((li) => li.querySelector('strong')?.textContent)).toEqual(['Updated an earlier fact', 'Confirmed again'])
    expect(items[0].textContent).toContain('home changed from Paris to Berlin')
    expect(within(items[0]).getByRole('link', { name: 'the earlier fact' }).getAttribute('href')).toBe('/memories/f-1')
    expect(screen.getByTestId('fact-subject').textContent).toBe('Alice')
    expect(screen.getByRole('link', { name: 'message 2' }).getAttribute('href')).toBe('/memories/m-12')
  })
})
