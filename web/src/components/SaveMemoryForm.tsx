import { useState } from 'react'
import { Link } from 'wouter'
import { api, type MemoryOut, type Project } from '../api'
import { localInputToIso, parseTags } from '../format'
import { ErrorBox, Notice } from './feedback'

/** Save a memory: content, and optionally a title, project, tags, source URL and expiry. */
export function SaveMemoryForm({ projects, onSaved }: { projects: Project[]; onSaved: (m: MemoryOut) => void }) {
  const [content, setContent] = useState('')
  const [title, setTitle] = useState('')
  const [projectId, setProjectId] = useState('')
  const [tags, setTags] = useState('')
  const [sourceUrl, setSourceUrl] = useState('')
  const [forgetAfter, setForgetAfter] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [saved, setSaved] = useState<MemoryOut | null>(null)

  const submit = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    setSaved(null)
    if (!content.trim()) {
      setError('Write something to remember.')
      return
    }
    setBusy(true)
    try {
      const tagList = parseTags(tags)
      const out = await api.save({
        content,
        ...(title.trim() ? { title: title.trim() } : {}),
        ...(projectId ? { project_id: projectId } : {}),
        ...(sourceUrl.trim() ? { source_url: sourceUrl.trim() } : {}),
        ...(tagList.length ? { metadata: { tags: tagList } } : {}),
        ...(forgetAfter ? { forget_after: localInputToIso(forgetAfter) } : {}),
      })
      setSaved(out)
      setContent('')
      setTitle('')
      setTags('')
      setSourceUrl('')
      setForgetAfter('')
      onSaved(out)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form onSubmit={submit} className="stack save-form" aria-labelledby="save-heading">
      <h2 id="save-heading">Save a memory</h2>
      <label htmlFor="save-content">Content</label>
      <textarea id="save-content" rows={5} value={content} onChange={(e) => setContent(e.target.value)} />
      <div className="row">
        <div className="stack">
          <label htmlFor="save-title">Title (optional)</label>
          <input id="save-title" value={title} onChange={(e) => setTitle(e.target.value)} />
        </div>
        <div className="stack">
          <label htmlFor="save-project">Project</label>
          <select id="save-project" value={projectId} onChange={(e) => setProjectId(e.target.value)}>
            <option value="">Default project</option>
            {projects
              .filter((p) => !p.is_default)
              .map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
          </select>
        </div>
      </div>
      <div className="row">
        <div className="stack">
          <label htmlFor="save-tags">Tags (comma-separated)</label>
          <input id="save-tags" value={tags} onChange={(e) => setTags(e.target.value)} />
        </div>
        <div className="stack">
          <label htmlFor="save-source">Source URL (optional)</label>
          <input id="save-source" type="url" value={sourceUrl} onChange={(e) => setSourceUrl(e.target.value)} />
        </div>
        <div className="stack">
          <label htmlFor="save-forget">Forget after (optional)</label>
          <input
            id="save-forget"
            type="datetime-local"
            value={forgetAfter}
            onChange={(e) => setForgetAfter(e.target.value)}
          />
        </div>
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : 'Save memory'}
      </button>
      {error && <ErrorBox error={error} />}
      {saved && (
        <Notice>
          {saved.duplicate ? 'Already saved: ' : saved.status === 'ready' ? 'Saved: ' : 'Saved, being processed: '}
          <Link href={`/memories/${saved.id}`}>{saved.title}</Link>
        </Notice>
      )}
    </form>
  )
}
