// The memory graph: tags and entities as nodes, co-occurrence as edges (GET /v3/memory-graph).
// d3-force lays it out, d3-zoom pans and zooms it; nodes are SVG elements you can click, tab to
// and activate with Enter, which searches for that topic.
import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, type SimulationNodeDatum } from 'd3-force'
import { select } from 'd3-selection'
import { zoom, zoomIdentity, type ZoomBehavior } from 'd3-zoom'
import { useEffect, useMemo, useRef, useState } from 'react'
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
export function layout(graph: MemoryGraph): { nodes: Placed[]; edges: PlacedEdge[] } {
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
    .force('collide', forceCollide<Placed>((p) => p.r + 4))
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

const LABEL_PX_PER_CHAR = 6.2 // the labels' 11 px font, roughly, per character
const FIT_MARGIN = 16

/** The zoom transform that shows every node and its label inside the width × height drawing. */
export function fitTransform(nodes: Placed[], width = WIDTH, height = HEIGHT): { x: number; y: number; k: number } {
  if (nodes.length === 0) return { x: 0, y: 0, k: 1 }
  let minX = Infinity
  let minY = Infinity
  let maxX = -Infinity
  let maxY = -Infinity
  for (const p of nodes) {
    const x = p.x ?? 0
    const y = p.y ?? 0
    const half = Math.max(p.r, (p.node.label.length * LABEL_PX_PER_CHAR) / 2)
    minX = Math.min(minX, x - half)
    maxX = Math.max(maxX, x + half)
    minY = Math.min(minY, y - p.r)
    maxY = Math.max(maxY, y + p.r + 16) // the label under the circle
  }
  const boxW = Math.max(1, maxX - minX)
  const boxH = Math.max(1, maxY - minY)
  const k = Math.min(2, (width - 2 * FIT_MARGIN) / boxW, (height - 2 * FIT_MARGIN) / boxH)
  return { x: width / 2 - k * ((minX + maxX) / 2), y: height / 2 - k * ((minY + maxY) / 2), k }
}

export default function Graph() {
  useTitle('Memory graph')
  const [, navigate] = useLocation()
  const [projectId, setProjectId] = useState('')
  const projects = useAsync(() => api.projects(), [])
  const graph = useAsync(() => api.graph(projectId || undefined), [projectId])
  const placed = useMemo(() => (graph.data ? layout(graph.data) : null), [graph.data])
  const svgRef = useRef<SVGSVGElement>(null)
  const layerRef = useRef<SVGGElement>(null)
  const zoomRef = useRef<ZoomBehavior<SVGSVGElement, unknown> | null>(null)

  useEffect(() => {
    if (!svgRef.current || !layerRef.current) return
    const layer = select(layerRef.current)
    const behavior = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.3, 6])
      .on('zoom', (event) => layer.attr('transform', event.transform.toString()))
    select(svgRef.current).call(behavior)
    zoomRef.current = behavior
    if (placed) {
      const fit = fitTransform(placed.nodes)
      behavior.scaleExtent([Math.min(0.3, fit.k / 2), 6])
      select(svgRef.current).call(behavior.transform, zoomIdentity.translate(fit.x, fit.y).scale(fit.k))
    }
    return () => {
      select(svgRef.current).on('.zoom', null)
    }
  }, [placed])

  const zoomBy = (factor: number) => {
    if (svgRef.current && zoomRef.current) select(svgRef.current).call(zoomRef.current.scaleBy, factor)
  }
  const reset = () => {
    if (!svgRef.current || !zoomRef.current || !placed) return
    const fit = fitTransform(placed.nodes)
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
        zoom, click a topic (or Tab to it and press Enter) to search for it.
      </p>
      {graph.loading && !graph.data && <Loading what="graph" />}
      {graph.error && <ErrorBox error={graph.error} />}
      {placed && placed.nodes.length === 0 && <p className="muted">No topics yet: save a few memories first.</p>}
      {placed && placed.nodes.length > 0 && (
        <svg
          ref={svgRef}
          className="graph-canvas"
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          role="group"
          aria-label={`Memory graph: ${placed.nodes.length} topics, ${placed.edges.length} connections`}
          data-testid="graph"
        >
          <g ref={layerRef}>
            <g className="edges" aria-hidden="true">
              {placed.edges.map((e) => (
                <line
                  key={`${e.source.node.id}|${e.target.node.id}`}
                  x1={e.source.x}
                  y1={e.source.y}
                  x2={e.target.x}
                  y2={e.target.y}
                  strokeWidth={Math.min(6, 0.8 + e.weight * 0.6)}
                />
              ))}
            </g>
            <g className="nodes">
              {placed.nodes.map((p) => (
                <g
                  key={p.node.id}
                  className={`node kind-${kindOf(p.node)}`}
                  transform={`translate(${p.x ?? 0},${p.y ?? 0})`}
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
                  <circle r={p.r} />
                  <text y={p.r + 12} textAnchor="middle">
                    {p.node.label}
                  </text>
                </g>
              ))}
            </g>
          </g>
        </svg>
      )}
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
