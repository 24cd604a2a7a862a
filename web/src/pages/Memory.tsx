import { lazy, Suspense, useEffect, useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api, type Decision, type DocumentOut } from '../api'
import { ContentBoundary } from '../components/ContentBoundary'
import { ErrorBox, Loading, Notice } from '../components/feedback'
import { type DeletedState, receiptPath } from '../components/Receipt'
import { formatDate, formatScore, isoToLocalInput, localInputToIso, parseTags } from '../format'
import { useAsync, useTitle } from '../hooks'
import { safeHref } from '../links'

// The renderer (markdown, highlighting) is loaded with the first memory opened.
const Markdown = lazy(() => import('../components/Markdown'))
const CodeView = lazy(() => import('../components/Markdown').then((m) => ({ default: m.CodeView })))

const POLL_MS = 1000

export function MemoryPage({ id }: { id: string }) {
  const doc = useAsync(() => api.document(id), [id])
  useTitle(doc.data?.title ?? 'Memory')
  const related = useAsync(() => api.related(id, 5), [id])
  const projects = useAsync(() => api.projects(), [])

  // A document being (re)processed is polled until it is ready or failed.
  const status = doc.data?.status
  useEffect(() => {
    if (status !== 'queued' && status !== 'processing') return
    const timer = window.setTimeout(doc.reload, POLL_MS)
    return () => window.clearTimeout(timer)
  }, [status, doc.data]) // eslint-disable-line react-hooks/exhaustive-deps

  if (doc.error) {
    return (
      <main id="main" className="page">
        <h1>Memory</h1>
        <ErrorBox error={doc.error.message.includes('not found') ? 'This memory does not exist (or was deleted).' : doc.error} />
        <p>
          <Link href="/search">Search your memories</Link>
        </p>
      </main>
    )
  }
  if (!doc.data) {
    return (
      <main id="main" className="page">
        <Loading what="memory" />
      </main>
    )
  }
  const d = doc.data
  const project = projects.data?.find((p) => p.id === d.project_id)
  return (
    <main id="main" className="page memory">
      <p className="crumbs">
        {project ? <Link href={`/projects/${project.id}`}>{project.name}</Link> : 'Project'} /
      </p>
      <h1 dir="auto">{d.title}</h1>
      {d.superseded_by && (
        <Notice>
          A newer version exists: <Link href={`/memories/${d.superseded_by}`}>open the latest version</Link>.
        </Notice>
      )}
      <div className="columns">
        <article className="content" aria-label="Content">
          {d.summary && !d.content.startsWith(d.summary.replace(/…$/, '')) && <p className="summary">{d.summary}</p>}
          {/* whatever the content does (or the renderer's code failing to load), the page stays usable */}
          <ContentBoundary text={d.content}>
            <Suspense fallback={<Loading what="content" />}>
              {d.content_type === 'code' || d.content_type === 'json' ? (
                <CodeView code={d.content} language={d.content_type === 'json' ? 'json' : languageOf(d)} />
              ) : (
                <Markdown text={d.content} />
              )}
            </Suspense>
          </ContentBoundary>
        </article>
        <aside className="side">
          <MetadataPanel doc={d} projectName={project?.name} />
          {d.fact && <FactPanel doc={d} />}
          {d.derived_facts.length > 0 && <DerivedFacts ids={d.derived_facts} />}
          <Versions doc={d} />
          <section aria-labelledby="related-heading">
            <h2 id="related-heading">Related memories</h2>
            {related.loading && !related.data && <Loading what="related memories" />}
            {related.error && <ErrorBox error={related.error} />}
            {related.data?.length === 0 && <p className="muted">None found.</p>}
            <ul className="plain" data-testid="related-list">
              {related.data?.map((r) => (
                <li key={r.document_id}>
                  <Link href={`/memories/${r.document_id}`}>{r.title}</Link>{' '}
                  <span className="muted small">score {formatScore(r.score)}</span>
                </li>
              ))}
            </ul>
          </section>
        </aside>
      </div>
      <EditForm doc={d} onSaved={doc.reload} />
      <NewVersionForm doc={d} />
      <DeleteControl doc={d} />
    </main>
  )
}

function languageOf(d: DocumentOut): string | null {
  const language = d.metadata.language
  return typeof language === 'string' && /^[a-z0-9+#-]{1,30}$/i.test(language) ? language.toLowerCase() : null
}

function tagsOf(d: DocumentOut): string[] {
  const tags = d.metadata.tags
  return Array.isArray(tags) ? tags.map(String) : []
}

function MetadataPanel({ doc, projectName }: { doc: DocumentOut; projectName?: string }) {
  const source = safeHref(doc.source_url)
  const tags = tagsOf(doc)
  return (
    <section aria-labelledby="meta-heading" className="metadata">
      <h2 id="meta-heading">Details</h2>
      <dl>
        <dt>Status</dt>
        <dd data-testid="doc-status">
          {doc.status}
          {doc.status_reason && <span className="muted small"> ({doc.status_reason})</span>}
        </dd>
        <dt>Tags</dt>
        <dd data-testid="doc-tags">
          {tags.length ? (
            <ul className="tags">
              {tags.map((t) => (
                <li key={t}>
                  <Link href={`/search?tags=${encodeURIComponent(t)}`}>{t}</Link>
                </li>
              ))}
            </ul>
          ) : (
            '—'
          )}
        </dd>
        <dt>Content type</dt>
        <dd>{doc.content_type}</dd>
        <dt>Source</dt>
        <dd className="break">
          {source ? (
            <a href={source} rel="noopener noreferrer nofollow" target="_blank">
              {doc.source_url}
            </a>
          ) : (
            doc.source_url ?? '—'
          )}
        </dd>
        <dt>Project</dt>
        <dd>{projectName ?? doc.project_id}</dd>
        <dt>Saved</dt>
        <dd>{formatDate(doc.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{formatDate(doc.updated_at)}</dd>
        <dt>Last recalled</dt>
        <dd>{formatDate(doc.last_accessed_at)}</dd>
        <dt>Forget after</dt>
        <dd data-testid="doc-forget-after">{doc.forget_after ? formatDate(doc.forget_after) : 'never'}</dd>
        <dt>Chunks</dt>
        <dd>{doc.chunk_count}</dd>
      </dl>
    </section>
  )
}

const OUTCOME_LABEL: Record<Decision['outcome'], string> = {
  new: 'New fact',
  update: 'Updated an earlier fact',
  duplicate: 'Confirmed again',
  contradiction: 'Contradicted an earlier fact',
}

// A fact drawn from conversations by an LLM: who it is about, the messages it came from and every
// reconciliation decision with the model's reason. Everything here is stored data, shown as text.
function FactPanel({ doc }: { doc: DocumentOut }) {
  const fact = doc.fact!
  return (
    <section aria-labelledby="fact-heading" className="fact">
      <h2 id="fact-heading">Fact</h2>
      <dl>
        <dt>About</dt>
        <dd data-testid="fact-subject">{fact.subject ?? '—'}</dd>
        <dt>Drawn from</dt>
        <dd>
          {fact.sources.length ? (
            <ul className="plain">
              {fact.sources.map((s, i) => (
                <li key={s}>
                  <Link href={`/memories/${s}`}>message {i + 1}</Link>
                </li>
              ))}
            </ul>
          ) : (
            'no message left (its messages were deleted)'
          )}
        </dd>
      </dl>
      <h3>Decisions</h3>
      <ol className="decisions" data-testid="decision-history">
        {fact.decisions.map((x) => (
          <li key={`${x.decided_at}-${x.outcome}-${x.sources.join(',')}`}>
            <strong>{OUTCOME_LABEL[x.outcome]}</strong> <span className="muted small">{formatDate(x.decided_at)}</span>
            <p className="reason">{x.reason}</p>
            {x.supersedes && (
              <p className="small">
                Replaced <Link href={`/memories/${x.supersedes}`}>the earlier fact</Link>
              </p>
            )}
            {x.model && <p className="muted small">decided by {x.model}</p>}
          </li>
        ))}
      </ol>
    </section>
  )
}

function DerivedFacts({ ids }: { ids: string[] }) {
  return (
    <section aria-labelledby="derived-heading">
      <h2 id="derived-heading">Facts drawn from this message</h2>
      <ul className="plain" data-testid="derived-facts">
        {ids.map((f, i) => (
          <li key={f}>
            <Link href={`/memories/${f}`}>fact {i + 1}</Link>
          </li>
        ))}
      </ul>
    </section>
  )
}

function Versions({ doc }: { doc: DocumentOut }) {
  const versions = doc.versions ?? []
  return (
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      {versions.length <= 1 ? (
        <p className="muted">Only this version.</p>
      ) : (
        <ol className="versions" data-testid="versions-list">
          {versions.map((v, i) => (
            <li key={v.id}>
              {v.id === doc.id ? (
                <strong aria-current="page">
                  Version {i + 1}: {v.title}
                </strong>
              ) : (
                <Link href={`/memories/${v.id}`}>
                  Version {i + 1}: {v.title}
                </Link>
              )}{' '}
              <span className="muted small">{formatDate(v.created_at)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}

function EditForm({ doc, onSaved }: { doc: DocumentOut; onSaved: () => void }) {
  const [title, setTitle] = useState(doc.title)
  const [tags, setTags] = useState(tagsOf(doc).join(', '))
  const [forgetAfter, setForgetAfter] = useState(isoToLocalInput(doc.forget_after))
  const [error, setError] = useState<string | null>(null)
  const [message, setMessage] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    setMessage(null)
    setBusy(true)
    try {
      const out = await api.updateDocument(doc.id, {
        title: title.trim(),
        tags: parseTags(tags),
        forget_after: forgetAfter ? localInputToIso(forgetAfter) ?? null : null,
      })
      setMessage(out.status === 'ready' ? 'Saved.' : 'Saved; being reprocessed.')
      onSaved()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <details className="panel">
      <summary>Edit title, tags and expiry</summary>
      <form onSubmit={submit} className="stack narrow">
        <label htmlFor="edit-title">Title</label>
        <input id="edit-title" value={title} onChange={(e) => setTitle(e.target.value)} required />
        <label htmlFor="edit-tags">Tags (comma-separated)</label>
        <input id="edit-tags" value={tags} onChange={(e) => setTags(e.target.value)} />
        <label htmlFor="edit-forget">Forget after (empty: never)</label>
        <input id="edit-forget" type="datetime-local" value={forgetAfter} onChange={(e) => setForgetAfter(e.target.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
        {message && <Notice>{message}</Notice>}
        {error && <ErrorBox error={error} />}
      </form>
    </details>
  )
}

function NewVersionForm({ doc }: { doc: DocumentOut }) {
  const [, navigate] = useLocation()
  const [content, setContent] = useState(doc.content)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    setBusy(true)
    try {
      const out = await api.save({
        content,
        title: doc.title,
        project_id: doc.project_id,
        updates_memory_id: doc.id,
        ...(doc.source_url ? { source_url: doc.source_url } : {}),
        ...(tagsOf(doc).length ? { metadata: { tags: tagsOf(doc) } } : {}),
      })
      if (out.duplicate) {
        setError('content: identical to a saved version; change something first')
      } else {
        navigate(`/memories/${out.id}`)
      }
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <details className="panel">
      <summary>Save a new version</summary>
      <form onSubmit={submit} className="stack">
        <label htmlFor="version-content">Content of the new version</label>
        <textarea id="version-content" rows={8} value={content} onChange={(e) => setContent(e.target.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save new version'}
        </button>
        {error && <ErrorBox error={error} />}
      </form>
    </details>
  )
}

function DeleteControl({ doc }: { doc: DocumentOut }) {
  const [, navigate] = useLocation()
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const remove = async () => {
    try {
      const out = await api.deleteDocument(doc.id)
      // the receipt's page: what the server read back after the delete (its URL shows it again)
      const state: DeletedState = {
        deleted: `“${doc.title}”`,
        back: { href: `/projects/${doc.project_id}`, label: 'Back to its project' },
      }
      navigate(receiptPath(out.receipt.id), { state })
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <section aria-labelledby="delete-heading" className="danger">
      <h2 id="delete-heading">Delete</h2>
      {!confirming ? (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Delete this memory…
        </button>
      ) : (
        <div role="alertdialog" aria-labelledby="confirm-doc-delete" className="confirm">
          <p id="confirm-doc-delete">
            Delete <strong>{doc.title}</strong> with its chunks and search entries? Other versions are kept. This cannot
            be undone. A receipt then lists every store read back and what, if anything, it still holds.
          </p>
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete memory
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      {error && <ErrorBox error={error} />}
    </section>
  )
}
