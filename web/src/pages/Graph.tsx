// The memory graph: tags and entities as nodes, co-occurrence as edges (GET /v3/memory-graph).
// d3-force lays it out, d3-zoom pans and zooms it; nodes are SVG elements you can click, tab to
// and activate with Enter, which searches for that topic.
import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, forceX, forceY, type SimulationNodeDatum } from 'd3-force'
import { select } from 'd3-selection'
import { zoom, zoomIdentity, type ZoomBehavior } from 'd3-zoom'
import { type RefObject, useEffect, useMemo, useRef, useState } from 'react'
import { useLocation } from 'wouter'
import { api, type GraphNode, type MemoryGraph } from '../api'
import { ErrorBox, Loading } from '../components/feedback'
import { useAsync, useTitle } from '../hooks'

const WIDTH = 900
const HEIGHT = 600
const TICKS = 300

interface Placed extends SimulationNodeDatum {
  node: GraphNode
  r: number
}
interface PlacedEdge {
  source: Placed
  target: Placed
  weight: number
}

/** Positions for every node, computed before drawing (a static layout: nothing moves under the pointer). */
export function layout(graph: MemoryGraph, aspect = HEIGHT / WIDTH): { nodes: Placed[]; edges: PlacedEdge[] } {
  const max = Math.max(1, ...graph.nodes.map((n) => n.document_count))
  const nodes: Placed[] = graph.nodes.map((node) => ({ node, r: 6 + 14 * Math.sqrt(node.document_count / max) }))
  const byId = new Map(nodes.map((p) => [p.node.id, p]))
  const links = graph.edges
    .filter((e) => byId.has(e.source) && byId.has(e.target))
    .map((e) => ({ source: byId.get(e.source)!, target: byId.get(e.target)!, weight: e.weight }))
  const simulation = forceSimulation(nodes)
    .force('link', forceLink(links).distance(70).strength((l) => Math.min(1, 0.2 + 0.1 * l.weight)))
    .force('charge', forceManyBody().strength(-160))
    .force('center', forceCenter(WIDTH / 2, HEIGHT / 2))
    // a gentle pull to the middle keeps small groups near the big one, so fitting the view to all of
    // them does not squeeze the big one into a knot
    // (on a tall drawing, a phone's, the pull is stronger sideways: the picture grows to its shape)
    .force('x', forceX(WIDTH / 2).strength(0.06 * Math.max(1, aspect * 1.5)))
    .force('y', forceY(HEIGHT / 2).strength(0.09 / Math.max(1, aspect * 1.5)))
    .force('collide', forceCollide<Placed>((p) => p.r + 10))
    .stop()
  simulation.tick(TICKS)
  return { nodes, edges: links }
}

/** The kinds the legend names, in its order; a node's colour is its kind's. */
export const KINDS = ['tag', 'person', 'place', 'organization', 'tool', 'other'] as const
export type Kind = (typeof KINDS)[number]
const KIND_LABEL: Record<Kind, string> = {
  tag: 'tag', person: 'person', place: 'place', organization: 'organization', tool: 'tool', other: 'other entity',
}
// Older servers send only `type` (concept = a tag, technology = a tool); entity nodes carry a `kind`.
const KIND_ALIASES: Record<string, Kind> = {
  tag: 'tag', concept: 'tag', topic: 'tag', keyphrase: 'tag',
  person: 'person', people: 'person',
  place: 'place', location: 'place', gpe: 'place', loc: 'place',
  organization: 'organization', organisation: 'organization', org: 'organization', company: 'organization',
  tool: 'tool', technology: 'tool', product: 'tool', software: 'tool',
}

export function kindOf(node: GraphNode): Kind {
  const { kind } = node as GraphNode & { kind?: string | null }
  return KIND_ALIASES[(kind ?? node.type ?? '').toLowerCase()] ?? 'other'
}

// Labels and circles are drawn at a fixed size on screen, whatever the zoom: the drawing is as wide as
// its box (one unit a pixel), the zoom moves where nodes are, not how big their words are.
export const LABEL_PX = 13
const LABEL_MAX_CHARS = 28
const LABEL_GAP = 3
const MIN_RADIUS = 4
const FIT_MARGIN_X = 48 // room for half a label beside the outermost nodes
const FIT_MARGIN_Y = 28

/** The zoom transform that shows every node (and room for its label) inside the width × height drawing. */
export function fitTransform(nodes: Placed[], width = WIDTH, height = HEIGHT): { x: number; y: number; k: number } {
  if (nodes.length === 0) return { x: 0, y: 0, k: 1 }
  let minX = Infinity
  let minY = Infinity
  let maxX = -Infinity
  let maxY = -Infinity
  for (const p of nodes) {
    const x = p.x ?? 0
    const y = p.y ?? 0
    minX = Math.min(minX, x - p.r)
    maxX = Math.max(maxX, x + p.r)
    minY = Math.min(minY, y - p.r)
    maxY = Math.max(maxY, y + p.r)
  }
  const boxW = Math.max(1, maxX - minX)
  const boxH = Math.max(1, maxY - minY)
  const k = Math.min(2, Math.max(0.01, (width - 2 * FIT_MARGIN_X) / boxW), Math.max(0.01, (height - 2 * FIT_MARGIN_Y) / boxH))
  return { x: width / 2 - k * ((minX + maxX) / 2), y: height / 2 - k * ((minY + maxY) / 2), k }
}

/** A node's radius on screen at zoom `k`: it shrinks as the view zooms out, never below MIN_RADIUS. */
export function screenRadius(r: number, k: number): number {
  return Math.max(MIN_RADIUS, r * Math.min(1, k))
}

/** A label within LABEL_MAX_CHARS, cut after a whole word (what is shown stays words of the node's name). */
export function shortLabel(label: string): string {
  if (label.length <= LABEL_MAX_CHARS) return label
  const cut = label.slice(0, LABEL_MAX_CHARS - 1)
  const space = cut.lastIndexOf(' ')
  return `${(space >= LABEL_MAX_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.–-]+$/u, '')}…`
}

interface Box {
  left: number
  top: number
  right: number
  bottom: number
}
export interface LabelSpot {
  dx: number
  dy: number
  anchor: 'start' | 'middle' | 'end'
  visible: boolean
}
export interface Spotted {
  x: number // on screen
  y: number
  r: number // on screen
  text: string
  priority: number // higher first
}

const overlaps = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom

/**
 * Where each label goes: the most important nodes first, each label below, above, right or left of its
 * circle, wherever it overlaps no label already placed, no circle and stays inside the drawing. A label
 * with no such place is hidden (shown while its node is hovered or focused): no two labels ever overlap.
 */
export function placeLabels(items: Spotted[], width: number, height: number, measure: (text: string) => number): LabelSpot[] {
  const circles: Box[] = items.map((p) => ({ left: p.x - p.r, right: p.x + p.r, top: p.y - p.r, bottom: p.y + p.r }))
  const placed: Box[] = []
  const spots: LabelSpot[] = items.map(() => ({ dx: 0, dy: 0, anchor: 'middle', visible: false }))
  const order = items.map((_, i) => i).sort((a, b) => items[b].priority - items[a].priority || a - b)
  // First clear of every circle; then, for the labels still unplaced, clear of other labels only (a
  // hub's name over a neighbour's dot beats no name).
  for (const avoidCircles of [true, false]) {
    for (const i of order) {
      if (!spots[i].visible) placeOne(i, avoidCircles)
    }
  }
  return spots

  function placeOne(i: number, avoidCircles: boolean) {
    const p = items[i]
    // a label's box as drawn (ascent above the baseline, descent below), with a pixel or two to spare
    const w = measure(p.text) + 4
    const h = LABEL_PX + 6
    const candidates: [LabelSpot, Box][] = [
      [{ dx: 0, dy: p.r + LABEL_GAP + LABEL_PX + 1, anchor: 'middle', visible: true }, { left: p.x - w / 2, right: p.x + w / 2, top: p.y + p.r + LABEL_GAP, bottom: p.y + p.r + LABEL_GAP + h }],
      [{ dx: 0, dy: -p.r - LABEL_GAP - 5, anchor: 'middle', visible: true }, { left: p.x - w / 2, right: p.x + w / 2, top: p.y - p.r - LABEL_GAP - h, bottom: p.y - p.r - LABEL_GAP }],
      [{ dx: p.r + LABEL_GAP + 2, dy: LABEL_PX * 0.35, anchor: 'start', visible: true }, { left: p.x + p.r + LABEL_GAP, right: p.x + p.r + LABEL_GAP + w, top: p.y - h / 2, bottom: p.y + h / 2 }],
      [{ dx: -p.r - LABEL_GAP - 2, dy: LABEL_PX * 0.35, anchor: 'end', visible: true }, { left: p.x - p.r - LABEL_GAP - w, right: p.x - p.r - LABEL_GAP, top: p.y - h / 2, bottom: p.y + h / 2 }],
    ]
    for (const [spot, box] of candidates) {
      const inside = box.left >= 0 && box.top >= 0 && box.right <= width && box.bottom <= height
      const blocked = placed.some((b) => overlaps(b, box)) || (avoidCircles && circles.some((c) => overlaps(c, box)))
      if (inside && !blocked) {
        spots[i] = spot
        placed.push(box)
        return
      }
    }
  }
}

let canvasContext: CanvasRenderingContext2D | null | undefined
/** The width of a label on screen: measured with the page's font where the browser can, else estimated. */
function measureLabel(text: string): number {
  if (canvasContext === undefined) {
    const jsdom = typeof navigator !== 'undefined' && /jsdom/i.test(navigator.userAgent)
    canvasContext = jsdom ? null : document.createElement('canvas').getContext('2d')
    if (canvasContext) canvasContext.font = `${LABEL_PX}px ${getComputedStyle(document.body).fontFamily || 'sans-serif'}`
  }
  return (canvasContext ? canvasContext.measureText(text).width : text.length * LABEL_PX * 0.62) + 2
}

/** The drawing's size: as wide as its box, a little less tall than wide (within bounds). */
function useCanvasSize(): [RefObject<HTMLDivElement | null>, { width: number; height: number }] {
  const ref = useRef<HTMLDivElement>(null)
  const [size, setSize] = useState({ width: WIDTH, height: HEIGHT })
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const update = () => {
      const width = Math.max(280, Math.round(el.clientWidth || WIDTH))
      setSize({ width, height: Math.round(Math.min(640, Math.max(width < 600 ? 420 : 380, width * 0.66))) })
    }
    update()
    if (typeof ResizeObserver === 'undefined') return
    const observer = new ResizeObserver(update)
    observer.observe(el)
    return () => observer.disconnect()
  }, [])
  return [ref, size]
}

export default function Graph() {
  useTitle('Memory graph')
  const [, navigate] = useLocation()
  const [projectId, setProjectId] = useState('')
  const projects = useAsync(() => api.projects(), [])
  const graph = useAsync(() => api.graph(projectId || undefined), [projectId])
  const [boxRef, size] = useCanvasSize()
  const tall = size.height > size.width * 0.9
  const placed = useMemo(() => (graph.data ? layout(graph.data, tall ? 1.1 : HEIGHT / WIDTH) : null), [graph.data, tall])
  const svgRef = useRef<SVGSVGElement>(null)
  const zoomRef = useRef<ZoomBehavior<SVGSVGElement, unknown> | null>(null)
  const [view, setView] = useState({ x: 0, y: 0, k: 1 })

  useEffect(() => {
    if (!svgRef.current) return
    const behavior = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.01, 8])
      .on('zoom', (event) => setView({ x: event.transform.x, y: event.transform.y, k: event.transform.k }))
    select(svgRef.current).call(behavior)
    zoomRef.current = behavior
    if (placed) {
      const fit = fitTransform(placed.nodes, size.width, size.height)
      behavior.scaleExtent([Math.min(0.3, fit.k / 2), 8])
      select(svgRef.current).call(behavior.transform, zoomIdentity.translate(fit.x, fit.y).scale(fit.k))
    }
    const svg = svgRef.current
    return () => {
      select(svg).on('.zoom', null)
    }
  }, [placed, size.width, size.height])

  // Where each node is on screen, and where its label goes (recomputed as the view moves).
  const onScreen = useMemo(() => {
    if (!placed) return []
    return placed.nodes.map((p) => ({
      x: view.x + view.k * (p.x ?? 0),
      y: view.y + view.k * (p.y ?? 0),
      r: screenRadius(p.r, view.k),
      text: shortLabel(p.node.label),
      priority: (p.node.kind === 'memory' ? 0 : 1_000_000) + p.node.document_count,
    }))
  }, [placed, view])
  const spots = useMemo(() => placeLabels(onScreen, size.width, size.height, measureLabel), [onScreen, size.width, size.height])

  const zoomBy = (factor: number) => {
    if (svgRef.current && zoomRef.current) select(svgRef.current).call(zoomRef.current.scaleBy, factor)
  }
  const reset = () => {
    if (!svgRef.current || !zoomRef.current || !placed) return
    const fit = fitTransform(placed.nodes, size.width, size.height)
    select(svgRef.current).call(zoomRef.current.transform, zoomIdentity.translate(fit.x, fit.y).scale(fit.k))
  }
  // A tag lists its memories (a filter: the word alone may not clear recall's relevance floor), a
  // memory opens, an entity is searched for by name (it is in the text).
  const open = (node: GraphNode) => {
    if (node.kind === 'memory' && node.document_id) navigate(`/memories/${encodeURIComponent(node.document_id)}`)
    else if (kindOf(node) === 'tag') navigate(`/search?tags=${encodeURIComponent(node.label)}`)
    else navigate(`/search?q=${encodeURIComponent(node.label)}`)
  }

  return (
    <main id="main" className="page graph">
      <h1>Memory graph</h1>
      <div className="row toolbar">
        <div className="stack">
          <label htmlFor="graph-project">Project</label>
          <select id="graph-project" value={projectId} onChange={(e) => setProjectId(e.target.value)}>
            <option value="">All projects</option>
            {projects.data?.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <div className="zoom-buttons" role="group" aria-label="Zoom">
          <button type="button" className="secondary" onClick={() => zoomBy(1.3)} aria-label="Zoom in">
            +
          </button>
          <button type="button" className="secondary" onClick={() => zoomBy(1 / 1.3)} aria-label="Zoom out">
            −
          </button>
          <button type="button" className="secondary" onClick={reset}>
            Reset view
          </button>
        </div>
      </div>
      <p className="muted small">
        Topics and entities of your memories; a line joins two that appear in the same memories. Drag to pan, scroll to
        zoom (zooming in shows more names), click a topic (or Tab to it and press Enter) to search for it.
      </p>
      {graph.loading && !graph.data && <Loading what="graph" />}
      {graph.error && <ErrorBox error={graph.error} />}
      {placed && placed.nodes.length === 0 && <p className="muted">No topics yet: save a few memories first.</p>}
      <div ref={boxRef} className="graph-box">
        {placed && placed.nodes.length > 0 && (
          <svg
            ref={svgRef}
            className="graph-canvas"
            width={size.width}
            height={size.height}
            viewBox={`0 0 ${size.width} ${size.height}`}
            role="group"
            aria-label={`Memory graph: ${placed.nodes.length} topics, ${placed.edges.length} connections`}
            data-testid="graph"
          >
            <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
              <g className="edges" aria-hidden="true">
                {placed.edges.map((e) => (
                  <line
                    key={`${e.source.node.id}|${e.target.node.id}`}
                    x1={e.source.x}
                    y1={e.source.y}
                    x2={e.target.x}
                    y2={e.target.y}
                    vectorEffect="non-scaling-stroke"
                    strokeWidth={Math.min(6, 0.8 + e.weight * 0.6)}
                  />
                ))}
              </g>
            </g>
            <g className="nodes">
              {placed.nodes.map((p, i) => (
                <g
                  key={p.node.id}
                  className={`node kind-${kindOf(p.node)}`}
                  transform={`translate(${onScreen[i].x},${onScreen[i].y})`}
                  role="button"
                  tabIndex={0}
                  aria-label={`${p.node.label} (${KIND_LABEL[kindOf(p.node)]}, ${p.node.document_count} ${p.node.document_count === 1 ? 'memory' : 'memories'}): search`}
                  data-testid="graph-node"
                  onClick={() => open(p.node)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' || e.key === ' ') {
                      e.preventDefault()
                      open(p.node)
                    }
                  }}
                >
                  <circle r={onScreen[i].r} />
                  <text
                    x={spots[i]?.dx ?? 0}
                    y={spots[i]?.dy ?? onScreen[i].r + 14}
                    textAnchor={spots[i]?.anchor ?? 'middle'}
                    className={spots[i]?.visible ? 'label' : 'label label-hidden'}
                  >
                    {onScreen[i].text.endsWith('…') ? (
                      <>
                        {onScreen[i].text.slice(0, -1)}
                        <tspan aria-hidden="true">…</tspan>
                      </>
                    ) : (
                      onScreen[i].text
                    )}
                  </text>
                </g>
              ))}
            </g>
          </svg>
        )}
      </div>
      <ul className="legend plain small" aria-label="Colours" data-testid="graph-legend">
        {KINDS.map((kind) => (
          <li key={kind}>
            <span className={`swatch kind-${kind}`} aria-hidden="true" /> {KIND_LABEL[kind]}
          </li>
        ))}
      </ul>
    </main>
  )
}
