import { fireEvent, render, screen, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import Graph, { layout } from './Graph'

const GRAPH = {
  nodes: [
    { id: 'tag:cats', label: 'cats', type: 'concept', document_count: 4, kind: 'tag', document_id: null },
    { id: 'tag:vet', label: 'vet', type: 'concept', document_count: 2, kind: 'tag', document_id: null },
    { id: 'tech:python', label: 'python', type: 'technology', document_count: 1, kind: 'tool', document_id: null },
  ],
  edges: [{ source: 'tag:cats', target: 'tag:vet', relation: 'co_occurs', weight: 2 }],
}

afterEach(() => vi.unstubAllGlobals())

describe('graph layout', () => {
  it('places every node inside the drawing, larger for more documents', () => {
    const { nodes, edges } = layout(GRAPH)
    expect(nodes).toHaveLength(3)
    expect(edges).toHaveLength(1)
    for (const n of nodes) {
      expect(Number.isFinite(n.x)).toBe(true)
      expect(Number.isFinite(n.y)).toBe(true)
    }
    const r = Object.fromEntries(nodes.map((n) => [n.node.label, n.r]))
    expect(r.cats).toBeGreaterThan(r.vet)
    expect(r.vet).toBeGreaterThan(r.python)
  })

  it('drops edges to nodes it was not given', () => {
    const { edges } = layout({ ...GRAPH, edges: [...GRAPH.edges, { source: 'tag:cats', target: 'tag:gone', relation: 'co_occurs', weight: 1 }] })
    expect(edges).toHaveLength(1)
  })
})

describe('Graph page', () => {
  it('draws a focusable node per topic, and a click searches for it', async () => {
    setKey('mlk_k')
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) =>
        new Response(JSON.stringify(url.startsWith('/v3/memory-graph') ? GRAPH : { projects: [] })),
      ),
    )
    const location = memoryLocation({ path: '/graph', record: true })
    render(
      <Router hook={location.hook}>
        <Graph />
      </Router>,
    )
    await waitFor(() => expect(screen.getAllByTestId('graph-node')).toHaveLength(3))
    const cats = screen.getByRole('button', { name: /^cats \(concept, 4 memories\)/ })
    expect(cats.getAttribute('tabindex')).toBe('0')
    fireEvent.click(cats)
    expect(location.history.at(-1)).toBe('/search?q=cats')
  })
})
