import { useEffect, useState } from 'react'
import { Link } from 'wouter'
import { api, type DocumentListItem } from '../api'
import { DocumentList } from '../components/DocumentList'
import { ErrorBox, Loading } from '../components/feedback'
import { useAsync, useTitle } from '../hooks'

const PAGE = 25

export function ProjectPage({ id }: { id: string }) {
  const project = useAsync(() => api.project(id), [id])
  useTitle(project.data?.name ?? 'Project')
  const [documents, setDocuments] = useState<DocumentListItem[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [done, setDone] = useState(false)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<Error | null>(null)

  const load = async (from: string | null, replace: boolean) => {
    setLoading(true)
    try {
      const page = await api.projectDocuments(id, PAGE, from)
      setDocuments((prev) => (replace ? page.documents : [...prev, ...page.documents]))
      setCursor(page.next_cursor)
      setDone(page.next_cursor === null)
    } catch (e) {
      setError(e as Error)
    } finally {
      setLoading(false)
    }
  }
  useEffect(() => {
    void load(null, true)
  }, [id]) // eslint-disable-line react-hooks/exhaustive-deps

  if (project.error) {
    return (
      <main id="main" className="page">
        <h1>Project</h1>
        <ErrorBox error={project.error} />
      </main>
    )
  }
  const p = project.data
  return (
    <main id="main" className="page">
      <p className="crumbs">
        <Link href="/projects">Projects</Link> /
      </p>
      <h1 dir="auto">{p?.name ?? 'Project'}</h1>
      {p?.description && <p>{p.description}</p>}
      {p && (
        <p className="muted">
          <span data-testid="memory-count">
            {p.memory_count} {p.memory_count === 1 ? 'memory' : 'memories'}
          </span>
          {p.document_count > p.memory_count && (
            <> ({p.document_count} {p.document_count === 1 ? 'version' : 'versions'} kept in all)</>
          )}{' '}
          ·{' '}
          <Link href={`/projects/${id}/settings`}>Project settings</Link>
        </p>
      )}
      <h2>Memories</h2>
      {error && <ErrorBox error={error} />}
      {documents.length === 0 && !loading && <p className="muted">No memories in this project yet.</p>}
      <DocumentList documents={documents} />
      {loading && <Loading what="memories" />}
      {!done && !loading && (
        <button type="button" className="secondary" onClick={() => void load(cursor, false)}>
          Load more
        </button>
      )}
    </main>
  )
}
