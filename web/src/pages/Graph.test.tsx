import { fireEvent, render, screen, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import type { GraphNode } from '../api'
import Graph, { fitTransform, kindOf, layout } from './Graph'

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
    const cats = screen.getByRole('button', { name: /^cats \(tag, 4 memories\)/ })
    expect(cats.getAttribute('tabindex')).toBe('0')
    fireEvent.click(cats)
    expect(location.history.at(-1)).toBe('/search?tags=cats')
  })

  it('colours nodes by entity kind, with and without a `kind`, and names each kind in the legend', async () => {
    setKey('mlk_k')
    const graph = {
      nodes: [
        ...GRAPH.nodes,
        { id: 'ent:ada', label: 'Ada Lovelace', type: 'entity', kind: 'person', document_count: 2 },
        { id: 'ent:lisbon', label: 'Lisbon', type: 'entity', kind: 'place', document_count: 1 },
        { id: 'ent:acme', label: 'ACME', type: 'entity', kind: 'organization', document_count: 1 },
        { id: 'ent:x', label: 'x', type: 'entity', kind: 'mystery', document_count: 1 },
      ],
      edges: [],
    }
    vi.stubGlobal('fetch', vi.fn(async (url: string) =>
      new Response(JSON.stringify(url.startsWith('/v3/memory-graph') ? graph : { projects: [] }))))
    render(
      <Router hook={memoryLocation({ path: '/graph' }).hook}>
        <Graph />
      </Router>,
    )
    await waitFor(() => expect(screen.getAllByTestId('graph-node')).toHaveLength(7))
    const kinds = Object.fromEntries(screen.getAllByTestId('graph-node').map((n) => [n.textContent, n.getAttribute('class')]))
    expect(kinds).toEqual({
      cats: 'node kind-tag', vet: 'node kind-tag', python: 'node kind-tool', 'Ada Lovelace': 'node kind-person',
      Lisbon: 'node kind-place', ACME: 'node kind-organization', x: 'node kind-other',
    })
    expect([...screen.getByTestId('graph-legend').querySelectorAll('li')].map((li) => li.textContent?.trim())).toEqual([
      'tag', 'person', 'place', 'organization', 'tool', 'other entity',
    ])
  })
})

describe('fitting the graph', () => {
  const at = (label: string, x: number, y: number, r = 8) => ({ node: { id: label, label, type: 'concept', document_count: 1, kind: 'tag', document_id: null }, r, x, y })

  it('shows every node, label included, inside the drawing', () => {
    const nodes = [at('far-left', -2000, 300), at('far-right', 3000, 250), at('top', 400, -900), at('bottom', 500, 1800)]
    const { x, y, k } = fitTransform(nodes, 900, 600)
    for (const p of nodes) {
      const sx = x + k * p.x
      const sy = y + k * p.y
      expect(sx).toBeGreaterThanOrEqual(0)
      expect(sx).toBeLessThanOrEqual(900)
      expect(sy).toBeGreaterThanOrEqual(0)
      expect(sy).toBeLessThanOrEqual(600)
    }
    expect(k).toBeLessThan(0.3) // zoomed out below the old minimum, which could not show them all
  })

  it('does not blow a small graph up beyond twice its size, and centres it', () => {
    const { x, k } = fitTransform([at('a', 100, 100), at('b', 120, 110)], 900, 600)
    expect(k).toBe(2)
    expect(x + k * 110).toBeCloseTo(450, 0)
  })

  it('reads the kind of nodes without one from their type', () => {
    // (a server from before entity kinds sends nodes without `kind`)
    const old = (type: string) => ({ id: 'a', label: 'a', type, document_count: 1 }) as unknown as GraphNode
    expect(kindOf(old('technology'))).toBe('tool')
    expect(kindOf(old('concept'))).toBe('tag')
  })
})
