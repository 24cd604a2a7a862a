import { fireEvent, render, screen, waitFor } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import type { GraphNode } from '../api'
import Graph, { fitTransform, kindOf, layout, placeLabels, screenRadius, shortLabel } from './Graph'

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

describe('placing labels', () => {
  const measure = (text: string) => text.length * 8
  const boxOf = (p: { x: number; y: number }, spot: { dx: number; dy: number; anchor: string }, w: number) => {
    const left = spot.anchor === 'middle' ? p.x + spot.dx - w / 2 : spot.anchor === 'start' ? p.x + spot.dx : p.x + spot.dx - w
    return { left, right: left + w, top: p.y + spot.dy - 12, bottom: p.y + spot.dy + 2 }
  }

  it('never lets two shown labels overlap, and hides the ones with no free place', () => {
    // twenty nodes crowded on a 300 × 200 drawing: not every label fits
    const items = Array.from({ length: 20 }, (_, i) => ({
      x: 40 + (i % 5) * 55, y: 30 + Math.floor(i / 5) * 45, r: 5, text: `topic number ${i}`, priority: i === 7 ? 100 : 20 - i,
    }))
    const spots = placeLabels(items, 300, 200, measure)
    const shown = spots.map((s, i) => ({ s, p: items[i] })).filter(({ s }) => s.visible)
    expect(shown.length).toBeGreaterThan(3)
    expect(shown.length).toBeLessThan(20)
    const boxes = shown.map(({ s, p }) => boxOf(p, s, measure(p.text)))
    for (let a = 0; a < boxes.length; a++) {
      for (let b = a + 1; b < boxes.length; b++) {
        const x = boxes[a]
        const y = boxes[b]
        expect(x.left < y.right && y.left < x.right && x.top < y.bottom && y.top < x.bottom).toBe(false)
      }
      expect(boxes[a].left).toBeGreaterThanOrEqual(0)
      expect(boxes[a].right).toBeLessThanOrEqual(300)
    }
    // the most important node, placed first, keeps its label
    expect(spots[7].visible).toBe(true)
  })

  it('keeps circles a readable size on screen and shortens long labels', () => {
    expect(screenRadius(20, 0.05)).toBe(4)
    expect(screenRadius(20, 0.5)).toBe(10)
    expect(screenRadius(20, 3)).toBe(20)
    expect(shortLabel('A very long memory title that goes on and on')).toBe('A very long memory title…')
    expect(shortLabel('Python typing: Protocols and generics.')).toBe('Python typing: Protocols…')
    expect(shortLabel('Lisbon')).toBe('Lisbon')
  })
})
