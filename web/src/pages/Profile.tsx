import { useState } from 'react'
import { Link } from 'wouter'
import { api } from '../api'
import { ErrorBox, Loading, Notice } from '../components/feedback'
import { formatDate } from '../format'
import { useAsync, useTitle } from '../hooks'

// GET /v3/profile: the facts memlane drew from conversations (the current version of each) and the
// recent context, for a project and optionally one person. Every value is stored data, shown as text.
export function ProfilePage() {
  useTitle('Profile')
  const projects = useAsync(() => api.projects(), [])
  const [projectId, setProjectId] = useState('')
  const [subjectInput, setSubjectInput] = useState('')
  const [subject, setSubject] = useState('')
  const profile = useAsync(() => api.profile(projectId || undefined, subject || undefined), [projectId, subject])
  const p = profile.data
  return (
    <main id="main" className="page profile">
      <h1>Profile</h1>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault()
          setSubject(subjectInput.trim())
        }}
      >
        <label>
          Project{' '}
          <select value={projectId} onChange={(e) => setProjectId(e.target.value)} data-testid="profile-project">
            <option value="">Default project</option>
            {projects.data?.map((pr) => (
              <option key={pr.id} value={pr.id}>
                {pr.name}
              </option>
            ))}
          </select>
        </label>{' '}
        <label>
          About{' '}
          <input value={subjectInput} onChange={(e) => setSubjectInput(e.target.value)} placeholder="everyone" maxLength={200} />
        </label>{' '}
        <button type="submit">Show</button>
      </form>
      {profile.error && <ErrorBox error={profile.error} />}
      {!p && !profile.error && <Loading what="profile" />}
      {p && (
        <>
          {p.extraction !== 'on' && <Notice>Fact extraction is {p.extraction}</Notice>}
          <section aria-labelledby="facts-heading">
            <h2 id="facts-heading">Facts{p.subject ? ` about ${p.subject}` : ''}</h2>
            {p.facts.length === 0 && <p className="muted">No facts yet.</p>}
            <ul className="plain" data-testid="profile-facts">
              {p.facts.map((f) => (
                <li key={f.id}>
                  <Link href={`/memories/${f.id}`}>{f.text}</Link>{' '}
                  <span className="muted small">
                    since {formatDate(f.since)} · {f.sources} {f.sources === 1 ? 'message' : 'messages'}
                    {f.replaces ? ` · was: ${f.replaces}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          </section>
          <section aria-labelledby="recent-heading">
            <h2 id="recent-heading">Recent</h2>
            {p.recent.length === 0 && <p className="muted">Nothing recent.</p>}
            <ul className="plain" data-testid="profile-recent">
              {p.recent.map((r) => (
                <li key={r.id}>
                  <span className="muted small">{formatDate(r.at)}</span>{' '}
                  {r.kind === 'fact' ? (
                    <>
                      <strong>{r.change === 'contradiction' ? 'Contradicted' : 'Updated'}:</strong>{' '}
                      <Link href={`/memories/${r.id}`}>{r.text}</Link>
                      {r.replaces && <span className="muted small"> (was: {r.replaces})</span>}
                    </>
                  ) : (
                    <>
                      <strong>{r.speaker ?? 'message'}:</strong> <Link href={`/memories/${r.id}`}>{r.text}</Link>
                    </>
                  )}
                </li>
              ))}
            </ul>
          </section>
        </>
      )}
    </main>
  )
}
