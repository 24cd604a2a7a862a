import { useEffect, useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api } from '../api'
import { ErrorBox, Notice } from '../components/feedback'
import { type DeletedState, receiptPath } from '../components/Receipt'
import { useAsync, useTitle } from '../hooks'

export function ProjectSettings({ id }: { id: string }) {
  const [, navigate] = useLocation()
  const project = useAsync(() => api.project(id), [id])
  useTitle(project.data ? `${project.data.name}: settings` : 'Project settings')
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [message, setMessage] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [confirming, setConfirming] = useState(false)

  useEffect(() => {
    if (project.data) {
      setName(project.data.name)
      setDescription(project.data.description ?? '')
    }
  }, [project.data])

  const save = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    setMessage(null)
    try {
      const updated = await api.updateProject(id, { name: name.trim(), description: description.trim() || null })
      setMessage(`Saved: ${updated.name}`)
      project.reload()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  const remove = async () => {
    setError(null)
    try {
      const out = await api.deleteProject(id)
      const state: DeletedState = {
        deleted: `the project “${project.data?.name ?? id}” and ${out.documents_deleted} ${out.documents_deleted === 1 ? 'document' : 'documents'}`,
        back: { href: '/projects', label: 'Back to your projects' },
      }
      navigate(receiptPath(out.receipt.id), { state })
    } catch (e) {
      setConfirming(false)
      setError((e as Error).message)
    }
  }

  const p = project.data
  return (
    <main id="main" className="page">
      <p className="crumbs">
        <Link href="/projects">Projects</Link> / {p && <Link href={`/projects/${id}`}>{p.name}</Link>}
      </p>
      <h1>Project settings</h1>
      {project.error && <ErrorBox error={project.error} />}
      <form onSubmit={save} className="stack narrow" aria-labelledby="rename-heading">
        <h2 id="rename-heading">Name and description</h2>
        <label htmlFor="project-rename">Name</label>
        <input id="project-rename" value={name} onChange={(e) => setName(e.target.value)} required />
        <label htmlFor="project-describe">Description</label>
        <textarea id="project-describe" rows={3} value={description} onChange={(e) => setDescription(e.target.value)} />
        <button type="submit">Save</button>
        {message && <Notice>{message}</Notice>}
      </form>
      {error && <ErrorBox error={error} />}
      <section aria-labelledby="danger-heading" className="danger">
        <h2 id="danger-heading">Delete this project</h2>
        {p?.is_default ? (
          <p>The default project cannot be deleted: saves without a project go there.</p>
        ) : !confirming ? (
          <button type="button" className="danger" onClick={() => setConfirming(true)} disabled={!p}>
            Delete project…
          </button>
        ) : (
          <div role="alertdialog" aria-labelledby="confirm-delete" className="confirm">
            <p id="confirm-delete">
              Delete the project <strong>{p?.name}</strong> and its{' '}
              <strong>
                {p?.document_count} {p?.document_count === 1 ? 'document' : 'documents'}
              </strong>{' '}
              (every version, with their chunks and search entries)? This cannot be undone.
            </p>
            <button type="button" className="danger" onClick={() => void remove()}>
              Delete {p?.name} and {p?.document_count} documents
            </button>{' '}
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        )}
      </section>
    </main>
  )
}
