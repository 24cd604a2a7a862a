import { useMemo } from 'react'
import { Link } from 'wouter'
import { api, type Docset } from '../api'
import { ErrorBox, Loading } from '../components/feedback'
import { SaveMemoryForm } from '../components/SaveMemoryForm'
import { SearchBox } from '../components/SearchBox'
import { formatBytes, formatDate, timeAgo } from '../format'
import { useAsync, useTitle } from '../hooks'

const RECENT = 20

export function Dashboard() {
  useTitle('Dashboard')
  const stats = useAsync(() => api.stats(), [])
  const projects = useAsync(() => api.projects(), [])
  // Documentation sets keep their pages in projects of their own: those are not memories, so the
  // dashboard lists them apart and counts and shows only the other projects' memories.
  const docsets = useAsync(() => api.docsets().catch((): Docset[] => []), [])
  const docProjects = useMemo(() => new Set(docsets.data?.map((d) => d.projectId)), [docsets.data])
  const memoryProjects = useMemo(
    () => (projects.data && docsets.data ? projects.data.filter((p) => !docProjects.has(p.id)) : undefined),
    [projects.data, docsets.data, docProjects],
  )
  const memoryProjectIds = memoryProjects?.map((p) => p.id).join(',')
  const recent = useAsync(
    async () =>
      memoryProjectIds === undefined
        ? undefined
        : memoryProjectIds === ''
          ? { results: [], total: 0, query_time_ms: 0 }
          : api.recall({
              query: '',
              limit: RECENT,
              ...(docProjects.size ? { project_ids: memoryProjectIds.split(',') } : {}),
            }),
    [memoryProjectIds],
  )
  const memories = memoryProjects?.reduce((n, p) => n + p.memory_count, 0)
  const reload = () => {
    stats.reload()
    projects.reload()
    docsets.reload()
    recent.reload()
  }

  return (
    <main id="main" className="page dashboard">
      <h1>Dashboard</h1>
      <SearchBox />
      <section aria-labelledby="stats-heading">
        <h2 id="stats-heading" className="visually-hidden">
          Figures
        </h2>
        {stats.error && <ErrorBox error={stats.error} />}
        <dl className="stats">
          <div>
            <dt>Memories</dt>
            <dd data-testid="stat-total">{memories ?? '…'}</dd>
          </div>
          <div>
            <dt>This week</dt>
            <dd data-testid="stat-week">{stats.data?.memories_this_week ?? '…'}</dd>
          </div>
          <div>
            <dt>Storage used</dt>
            <dd data-testid="stat-storage">{stats.data ? formatBytes(stats.data.storage_bytes) : '…'}</dd>
          </div>
          <div>
            <dt>Projects</dt>
            <dd data-testid="stat-projects">{memoryProjects?.length ?? '…'}</dd>
          </div>
        </dl>
      </section>
      <div className="columns">
        <section aria-labelledby="recent-heading" className="recent">
          <h2 id="recent-heading">Recent memories</h2>
          {(recent.loading || memoryProjectIds === undefined) && !recent.data && <Loading what="recent memories" />}
          {recent.error && <ErrorBox error={recent.error} />}
          {recent.data && recent.data.results.length === 0 && <p className="muted">Nothing saved yet.</p>}
          <ol className="cards" data-testid="recent-list">
            {recent.data?.results.map((r) => (
              <li key={r.document_id} className="card">
                <h3 dir="auto">
                  <Link href={`/memories/${r.document_id}`}>{r.title}</Link>
                </h3>
                {r.summary && <p>{r.summary}</p>}
                <p className="muted small">
                  <time dateTime={r.created_at} title={formatDate(r.created_at)}>
                    {timeAgo(r.created_at)}
                  </time>{' '}
                  · {r.content_type}
                </p>
              </li>
            ))}
          </ol>
        </section>
        <aside className="side">
          <section aria-labelledby="projects-heading">
            <h2 id="projects-heading">Projects</h2>
            {projects.error && <ErrorBox error={projects.error} />}
            <ul className="plain">
              {memoryProjects?.map((p) => (
                <li key={p.id}>
                  <Link href={`/projects/${p.id}`}>{p.name}</Link>{' '}
                  <span className="muted">
                    {p.memory_count} {p.memory_count === 1 ? 'memory' : 'memories'}
                  </span>
                </li>
              ))}
            </ul>
          </section>
          {docsets.data && docsets.data.length > 0 && (
            <section aria-labelledby="docs-heading" data-testid="docsets">
              <h2 id="docs-heading">Documentation</h2>
              <ul className="plain">
                {docsets.data.map((d) => (
                  <li key={d.id}>
                    <Link href={`/projects/${d.projectId}`}>{d.name}</Link>{' '}
                    <span className="muted">
                      {d.indexStatus.indexedPages} {d.indexStatus.indexedPages === 1 ? 'page' : 'pages'}
                      {d.indexStatus.status !== 'ready' && ` · ${d.indexStatus.status}`}
                    </span>
                  </li>
                ))}
              </ul>
              <p className="muted small">
                Documentation sites are searched with your memories; <Link href="/settings">manage them in Settings</Link>.
              </p>
            </section>
          )}
          <SaveMemoryForm projects={memoryProjects ?? []} onSaved={reload} />
        </aside>
      </div>
    </main>
  )
}
