import { useState } from 'react'
import { Link } from 'wouter'
import { api } from '../api'
import { ErrorBox, Loading } from '../components/feedback'
import { formatDate } from '../format'
import { useAsync, useTitle } from '../hooks'

export function Projects() {
  useTitle('Projects')
  const projects = useAsync(() => api.projects(), [])
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<string | null>(null)

  const create = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    try {
      await api.createProject(name.trim(), description.trim() || undefined)
      setName('')
      setDescription('')
      projects.reload()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  return (
    <main id="main" className="page">
      <h1>Projects</h1>
      {projects.loading && !projects.data && <Loading what="projects" />}
      {projects.error && <ErrorBox error={projects.error} />}
      {projects.data && (
        <table>
          <caption className="visually-hidden">Your projects</caption>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Documents</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {projects.data.map((p) => (
              <tr key={p.id}>
                <td>
                  <Link href={`/projects/${p.id}`}>{p.name}</Link>
                  {p.is_default && <span className="badge">default</span>}
                  {p.description && <div className="muted small">{p.description}</div>}
                </td>
                <td>{p.document_count}</td>
                <td>{formatDate(p.created_at)}</td>
                <td>
                  <Link href={`/projects/${p.id}/settings`} aria-label={`Settings of ${p.name}`}>
                    Settings
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={create} className="stack narrow" aria-labelledby="new-project">
        <h2 id="new-project">New project</h2>
        <label htmlFor="project-name">Name</label>
        <input id="project-name" value={name} onChange={(e) => setName(e.target.value)} required />
        <label htmlFor="project-description">Description (optional)</label>
        <input id="project-description" value={description} onChange={(e) => setDescription(e.target.value)} />
        <button type="submit">Create project</button>
        {error && <ErrorBox error={error} />}
      </form>
    </main>
  )
}
