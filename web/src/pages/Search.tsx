import { useEffect, useMemo, useRef, useState } from 'react'
import { Link, useLocation, useSearch } from 'wouter'
import { api, CONTENT_TYPES, type ContentType, type RecallIn, type RecallOut } from '../api'
import { ErrorBox } from '../components/feedback'
import { Highlight } from '../components/Highlight'
import { formatDate, formatScore, parseTags } from '../format'
import { useAsync, useTitle } from '../hooks'
import { snippet } from '../snippet'

// Typing searches by itself after this pause; each new keystroke cancels the request before it.
export const TYPING_PAUSE_MS = 100
const LIMIT = 20

interface Criteria {
  query: string
  projectIds: string[]
  types: ContentType[]
  tags: string
  after: string
}

export function criteriaFromSearch(search: string): Criteria {
  const params = new URLSearchParams(search)
  const list = (name: string) => (params.get(name) ?? '').split(',').filter(Boolean)
  return {
    query: params.get('q') ?? '',
    projectIds: list('projects'),
    types: list('types').filter((t): t is ContentType => (CONTENT_TYPES as string[]).includes(t)),
    tags: params.get('tags') ?? '',
    after: params.get('after') ?? '',
  }
}

export function searchFromCriteria(c: Criteria): string {
  const params = new URLSearchParams()
  if (c.query) params.set('q', c.query)
  if (c.projectIds.length) params.set('projects', c.projectIds.join(','))
  if (c.types.length) params.set('types', c.types.join(','))
  if (c.tags) params.set('tags', c.tags)
  if (c.after) params.set('after', c.after)
  return params.toString()
}

/** The /v3/recall body for what the form says. */
export function recallBody(c: Criteria): RecallIn {
  const tags = parseTags(c.tags)
  const filters = {
    ...(c.types.length ? { content_type: c.types } : {}),
    ...(tags.length ? { tags } : {}),
    ...(c.after ? { created_after: c.after } : {}),
  }
  return {
    query: c.query.trim(),
    limit: LIMIT,
    ...(c.projectIds.length ? { project_ids: c.projectIds } : {}),
    ...(Object.keys(filters).length ? { filters } : {}),
  }
}

const EXAMPLES = ['when does my passport expire', 'notes about vector databases', 'what did we decide on Thursday']

function isSearching(c: Criteria): boolean {
  return Boolean(c.query.trim() || c.tags || c.types.length || c.after)
}

export function Search() {
  useTitle('Search')
  const search = useSearch()
  const [, navigate] = useLocation()
  const [criteria, setCriteria] = useState<Criteria>(() => criteriaFromSearch(search))
  const [result, setResult] = useState<RecallOut | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const [busy, setBusy] = useState(false)
  const projects = useAsync(() => api.projects(), [])
  const projectNames = useMemo(() => new Map(projects.data?.map((p) => [p.id, p.name]) ?? []), [projects.data])
  const inFlight = useRef<AbortController | null>(null)

  // A link to /search?q=… (the graph, the dashboard's box) replaces what the form says.
  useEffect(() => {
    setCriteria((c) => (searchFromCriteria(c) === search ? c : criteriaFromSearch(search)))
  }, [search])

  useEffect(() => {
    const timer = window.setTimeout(() => {
      const next = searchFromCriteria(criteria)
      if (next !== search) navigate(`/search${next ? `?${next}` : ''}`, { replace: true })
      if (!isSearching(criteria)) {
        inFlight.current?.abort()
        setResult(null)
        return
      }
      inFlight.current?.abort()
      const controller = new AbortController()
      inFlight.current = controller
      setBusy(true)
      api.recall(recallBody(criteria), controller.signal).then(
        (out) => {
          if (controller.signal.aborted) return
          setResult(out)
          setError(null)
          setBusy(false)
        },
        (e: Error) => {
          if (controller.signal.aborted) return
          setError(e)
          setBusy(false)
        },
      )
    }, TYPING_PAUSE_MS)
    return () => window.clearTimeout(timer)
  }, [criteria]) // eslint-disable-line react-hooks/exhaustive-deps

  const toggle = <T,>(list: T[], value: T): T[] => (list.includes(value) ? list.filter((v) => v !== value) : [...list, value])

  return (
    <main id="main" className="page search">
      <h1>Search</h1>
      <form role="search" className="stack" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="search-query">Search across your memories</label>
        <input
          id="search-query"
          type="search"
          autoFocus
          value={criteria.query}
          onChange={(e) => setCriteria({ ...criteria, query: e.target.value })}
          placeholder="What are you looking for?"
        />
        <details className="filters" open={Boolean(criteria.projectIds.length || criteria.types.length || criteria.tags || criteria.after)}>
          <summary>Filters</summary>
          <div className="row">
            <fieldset>
              <legend>Projects</legend>
              {projects.data?.map((p) => (
                <label key={p.id} className="check">
                  <input
                    type="checkbox"
                    checked={criteria.projectIds.includes(p.id)}
                    onChange={() => setCriteria({ ...criteria, projectIds: toggle(criteria.projectIds, p.id) })}
                  />
                  {p.name}
                </label>
              ))}
              <p className="muted small">None chosen: all projects.</p>
            </fieldset>
            <fieldset>
              <legend>Content type</legend>
              {CONTENT_TYPES.map((t) => (
                <label key={t} className="check">
                  <input
                    type="checkbox"
                    checked={criteria.types.includes(t)}
                    onChange={() => setCriteria({ ...criteria, types: toggle(criteria.types, t) })}
                  />
                  {t}
                </label>
              ))}
            </fieldset>
            <div className="stack">
              <label htmlFor="search-tags">Tags (any of, comma-separated)</label>
              <input id="search-tags" value={criteria.tags} onChange={(e) => setCriteria({ ...criteria, tags: e.target.value })} />
              <label htmlFor="search-after">Saved on or after</label>
              <input
                id="search-after"
                type="date"
                value={criteria.after}
                onChange={(e) => setCriteria({ ...criteria, after: e.target.value })}
              />
            </div>
          </div>
        </details>
      </form>
      <div aria-live="polite" className="muted small" data-testid="search-status">
        {busy
          ? 'Searching…'
          : result
            ? `${result.results.length} ${result.results.length === 1 ? 'result' : 'results'} in ${Math.round(result.query_time_ms)} ms`
            : ''}
      </div>
      {error && <ErrorBox error={error} />}
      {!result && !busy && !error && !isSearching(criteria) && (
        <section className="guidance" data-testid="search-guidance" aria-labelledby="guidance-heading">
          <h2 id="guidance-heading">What to type</h2>
          <p>
            Ask in your own words: search finds memories by meaning, not only by exact words. Narrow it with the
            filters (projects, content type, tags, a date).
          </p>
          <ul className="plain">
            {EXAMPLES.map((example) => (
              <li key={example}>
                <Link href={`/search?q=${encodeURIComponent(example)}`}>{example}</Link>
              </li>
            ))}
          </ul>
        </section>
      )}
      {result && !busy && result.results.length === 0 && (
        <section className="empty-result" data-testid="no-matches" role="status">
          <h2>No memory matches</h2>
          <p className="muted">
            Nothing you saved is close enough to “{criteria.query.trim() || 'these filters'}”. Try other words, a
            shorter question, or fewer filters.
          </p>
        </section>
      )}
      <ol className="results" data-testid="search-results">
        {strongResults(result).map((r) => (
          <ResultCard key={r.document_id} r={r} query={criteria.query} project={projectNames.get(r.project_id)} />
        ))}
      </ol>
      {weakResults(result).length > 0 && !busy && (
        <section className="weaker" data-testid="weaker-matches" aria-labelledby="weaker-heading">
          <h2 id="weaker-heading">Weaker matches</h2>
          <p className="muted small">
            {strongResults(result).length
              ? 'These may be related, but memlane is less sure of them.'
              : `Nothing you saved is a close match for “${criteria.query.trim()}”; these may be related, but memlane is not sure of them.`}
          </p>
          <ol className="results weak">
            {weakResults(result).map((r) => (
              <ResultCard key={r.document_id} r={r} query={criteria.query} project={projectNames.get(r.project_id)} />
            ))}
          </ol>
        </section>
      )}
    </main>
  )
}

type Result = RecallOut['results'][number]

/** Results the server marks strong (or does not mark: an empty query), in its order. */
export function strongResults(out: RecallOut | null): Result[] {
  return out?.results.filter((r) => r.match !== 'weak') ?? []
}

/** Results the server marks weak: possibly related, low confidence. */
export function weakResults(out: RecallOut | null): Result[] {
  return out?.results.filter((r) => r.match === 'weak') ?? []
}

function ResultCard({ r, query, project }: { r: Result; query: string; project: string | undefined }) {
  const best = [...r.chunks].sort((a, b) => b.score - a.score)
  const path = best[0]?.heading_path ?? []
  return (
    <li className={r.match === 'weak' ? 'card weak' : 'card'}>
      <h2>
        <Link href={`/memories/${r.document_id}`}>{r.title}</Link>
      </h2>
      <p className="muted small">
        score <span className="score">{formatScore(r.score)}</span> · {r.content_type} · {project ?? 'project'} ·{' '}
        <time dateTime={r.created_at}>{formatDate(r.created_at)}</time>
      </p>
      {path.length > 0 && <p className="muted small crumbs">{path.join(' › ')}</p>}
      <p className="snippet" data-testid="snippet">
        <Highlight text={snippet(best.map((c) => c.content), query)} query={query} />
      </p>
    </li>
  )
}
