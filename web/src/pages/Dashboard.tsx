import { Link } from 'wouter'
import { api } from '../api'
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
  const recent = useAsync(() => api.recall({ query: '', limit: RECENT }), [])
  const reload = () => {
    stats.reload()
    projects.reload()
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
            <dt>Total memories</dt>
            <dd data-testid="stat-total">{stats.data?.total_memories ?? '…'}</dd>
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
            <dd>{stats.data?.project_count ?? '…'}</dd>
          </div>
        </dl>
      </section>
      <div className="columns">
        <section aria-labelledby="recent-heading" className="recent">
          <h2 id="recent-heading">Recent memories</h2>
          {recent.loading && !recent.data && <Loading what="recent memories" />}
          {recent.error && <ErrorBox error={recent.error} />}
          {recent.data && recent.data.results.length === 0 && <p className="muted">Nothing saved yet.</p>}
          <ol className="cards" data-testid="recent-list">
            {recent.data?.results.map((r) => (
              <li key={r.document_id} className="card">
                <h3>
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
              {projects.data?.map((p) => (
                <li key={p.id}>
                  <Link href={`/projects/${p.id}`}>{p.name}</Link>{' '}
                  <span className="muted">
                    {p.document_count} {p.document_count === 1 ? 'document' : 'documents'}
                  </span>
                </li>
              ))}
            </ul>
          </section>
          <SaveMemoryForm projects={projects.data ?? []} onSaved={reload} />
        </aside>
      </div>
    </main>
  )
}
