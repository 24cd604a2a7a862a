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

const TYPE_CLASS: Record<string, string> = { concept: 'concept', technology: 'technology', person: 'person' }

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
    return () => {
      select(svgRef.current).on('.zoom', null)
    }
  }, [placed])

  const zoomBy = (factor: number) => {
    if (svgRef.current && zoomRef.current) select(svgRef.current).call(zoomRef.current.scaleBy, factor)
  }
  const reset = () => {
    if (svgRef.current && zoomRef.current) select(svgRef.current).call(zoomRef.current.transform, zoomIdentity)
  }
  const open = (node: GraphNode) => navigate(`/search?q=${encodeURIComponent(node.label)}`)

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
                  className={`node ${TYPE_CLASS[p.node.type] ?? 'other'}`}
                  transform={`translate(${p.x ?? 0},${p.y ?? 0})`}
                  role="button"
                  tabIndex={0}
                  aria-label={`${p.node.label} (${p.node.type}, ${p.node.document_count} memories): search`}
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
      <ul className="legend plain small">
        <li>
          <span className="swatch concept" aria-hidden="true" /> tag
        </li>
        <li>
          <span className="swatch technology" aria-hidden="true" /> technology
        </li>
        <li>
          <span className="swatch person" aria-hidden="true" /> person
        </li>
        <li>
          <span className="swatch other" aria-hidden="true" /> other entity
        </li>
      </ul>
    </main>
  )
}
