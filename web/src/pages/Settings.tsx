import { useEffect, useState } from 'react'
import { api, type ApiKeyInfo, type DeletionReceipt, type Docset } from '../api'
import { ErrorBox, Loading, Notice } from '../components/feedback'
import { ReceiptView } from '../components/Receipt'
import { formatDate } from '../format'
import { useAsync, useTitle } from '../hooks'
import { safeHref } from '../links'

export function Settings() {
  useTitle('Settings')
  const who = useAsync(() => api.whoami(), [])
  return (
    <main id="main" className="page settings">
      <h1>Settings</h1>
      {who.data && (
        <p className="muted">
          Organization <strong>{who.data.organization_name}</strong> · signed in with key <code>{who.data.key_id}</code>
        </p>
      )}
      {who.data?.can_manage_keys ? (
        <Keys currentKeyId={who.data.key_id} />
      ) : (
        who.data && (
          <section aria-labelledby="keys-heading">
            <h2 id="keys-heading">API keys</h2>
            <p>This key may not manage keys. Sign in with one that may (the key `make run` prints does).</p>
          </section>
        )
      )}
      <Docsets />
      <ForgottenLog />
    </main>
  )
}

function Keys({ currentKeyId }: { currentKeyId: string }) {
  const keys = useAsync(() => api.keys(), [])
  const [name, setName] = useState('')
  const [canManage, setCanManage] = useState(false)
  const [created, setCreated] = useState<{ key: ApiKeyInfo; secret: string } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [confirmRevoke, setConfirmRevoke] = useState<string | null>(null)

  const create = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    setCreated(null)
    try {
      setCreated(await api.createKey(name.trim(), canManage))
      setName('')
      setCanManage(false)
      keys.reload()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const revoke = async (keyId: string) => {
    setError(null)
    try {
      await api.revokeKey(keyId)
      setConfirmRevoke(null)
      keys.reload()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <form onSubmit={create} className="row align-end">
        <div className="stack">
          <label htmlFor="key-name">New key name</label>
          <input id="key-name" value={name} onChange={(e) => setName(e.target.value)} required />
        </div>
        <label className="check">
          <input type="checkbox" checked={canManage} onChange={(e) => setCanManage(e.target.checked)} />
          may manage keys
        </label>
        <button type="submit">Create key</button>
      </form>
      {created && (
        <div className="secret" role="status">
          <p>
            Key <strong>{created.key.name}</strong> created. Copy it now: it is shown only once.
          </p>
          <label htmlFor="new-secret">New API key</label>
          <input id="new-secret" readOnly value={created.secret} onFocus={(e) => e.currentTarget.select()} data-testid="new-secret" />
          <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(created.secret)}>
            Copy
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      {error && <ErrorBox error={error} />}
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.error && <ErrorBox error={keys.error} />}
      {keys.data && (
        <table data-testid="keys-table">
          <caption className="visually-hidden">API keys of the organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr key={k.id} data-key-id={k.id}>
                <td>
                  {k.name}
                  {k.can_manage_keys && <span className="badge">manages keys</span>}
                  {k.id === currentKeyId && <span className="badge">this browser</span>}
                </td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{formatDate(k.created_at)}</td>
                <td>{k.active ? 'active' : `revoked ${formatDate(k.revoked_at)}`}</td>
                <td>
                  {k.active && k.id !== currentKeyId && confirmRevoke !== k.id && (
                    <button type="button" className="danger" onClick={() => setConfirmRevoke(k.id)} aria-label={`Revoke ${k.name}`}>
                      Revoke…
                    </button>
                  )}
                  {confirmRevoke === k.id && (
                    <span role="alertdialog" aria-label={`Confirm revoking ${k.name}`}>
                      Revoke <strong>{k.name}</strong>? Requests with it fail at once.{' '}
                      <button type="button" className="danger" onClick={() => void revoke(k.id)}>
                        Revoke {k.name}
                      </button>{' '}
                      <button type="button" className="secondary" onClick={() => setConfirmRevoke(null)}>
                        Cancel
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/** How often the list is read again while a set is still indexing. */
export const DOCSET_POLL_MS = 2000

function Docsets() {
  const docsets = useAsync(() => api.docsets(), [])
  // While any set is indexing, read the list again until every one is ready (or failed).
  const indexing = docsets.data?.some((d) => d.indexStatus.status === 'indexing') ?? false
  const { reload, loading } = docsets
  useEffect(() => {
    if (!indexing || loading) return
    const timer = window.setTimeout(reload, DOCSET_POLL_MS)
    return () => window.clearTimeout(timer)
  }, [indexing, loading, docsets.data, reload])
  const [message, setMessage] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [baseUrl, setBaseUrl] = useState('')
  const [seedSlug, setSeedSlug] = useState('/')
  const [name, setName] = useState('')
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null)
  const [openPages, setOpenPages] = useState<string | null>(null)
  const [receipt, setReceipt] = useState<DeletionReceipt | null>(null)

  const act = async (work: () => Promise<string>) => {
    setError(null)
    setMessage(null)
    setReceipt(null)
    try {
      setMessage(await work())
      docsets.reload()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  return (
    <section aria-labelledby="docsets-heading">
      <h2 id="docsets-heading">Documentation sets</h2>
      <form
        className="row align-end"
        onSubmit={(e) => {
          e.preventDefault()
          void act(async () => {
            const out = await api.indexDocset(baseUrl.trim(), seedSlug.trim() || '/', name.trim() || undefined)
            setBaseUrl('')
            setName('')
            return `Indexing started (${out.status}): the progress below updates by itself`
          })
        }}
      >
        <div className="stack">
          <label htmlFor="docset-base">Documentation site URL</label>
          <input id="docset-base" type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} required />
        </div>
        <div className="stack">
          <label htmlFor="docset-name">Name (optional: the site's host otherwise)</label>
          <input id="docset-name" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="stack">
          <label htmlFor="docset-seed">Start path</label>
          <input id="docset-seed" value={seedSlug} onChange={(e) => setSeedSlug(e.target.value)} />
        </div>
        <button type="submit">Index site</button>
      </form>
      {message && <Notice>{message}</Notice>}
      {error && <ErrorBox error={error} />}
      {receipt && <ReceiptView receipt={receipt} inline />}
      {docsets.loading && !docsets.data && <Loading what="documentation sets" />}
      {docsets.error && <ErrorBox error={docsets.error} />}
      {docsets.data?.length === 0 && <p className="muted">No documentation sets.</p>}
      {docsets.data && docsets.data.length > 0 && (
        <table data-testid="docsets-table">
          <caption className="visually-hidden">Documentation sets</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Pages</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {docsets.data.map((d: Docset) => (
              <tr key={d.id}>
                <td>
                  {d.name}
                  <div className="muted small break">{d.baseUrl}</div>
                  {openPages === d.id && <DocsetPages docsetId={d.id} />}
                </td>
                <td data-testid="docset-status">
                  {d.indexStatus.status}
                  {d.indexStatus.status === 'indexing' && <span className="visually-hidden"> (updating)</span>}
                </td>
                <td>
                  {d.indexStatus.indexedPages}/{d.indexStatus.totalPages} indexed
                  {d.indexStatus.errorPages > 0 && <>, {d.indexStatus.errorPages} failed</>}
                </td>
                <td>{formatDate(new Date(d.updatedAt).toISOString())}</td>
                <td className="actions">
                  <button type="button" className="secondary" onClick={() => setOpenPages(openPages === d.id ? null : d.id)}>
                    {openPages === d.id ? 'Hide pages' : 'Pages'}
                  </button>{' '}
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => void act(async () => (await api.refreshDocset(d.id)).message)}
                  >
                    Refresh
                  </button>{' '}
                  {confirmDelete !== d.id ? (
                    <button type="button" className="danger" onClick={() => setConfirmDelete(d.id)}>
                      Delete…
                    </button>
                  ) : (
                    <span role="alertdialog" aria-label={`Confirm deleting ${d.name}`}>
                      Delete <strong>{d.name}</strong> and its {d.indexStatus.totalPages} pages?{' '}
                      <button
                        type="button"
                        className="danger"
                        onClick={() =>
                          void act(async () => {
                            const out = await api.deleteDocset(d.id)
                            setConfirmDelete(null)
                            // the receipt of its pages, read back as recorded (every store it checked)
                            if (out.receiptId) setReceipt(await api.deletion(out.receiptId))
                            return `Deleted ${d.name}`
                          })
                        }
                      >
                        Delete {d.name}
                      </button>{' '}
                      <button type="button" className="secondary" onClick={() => setConfirmDelete(null)}>
                        Cancel
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

function DocsetPages({ docsetId }: { docsetId: string }) {
  const pages = useAsync(() => api.docsetPages(docsetId, 50), [docsetId])
  if (pages.error) return <ErrorBox error={pages.error} />
  if (!pages.data) return <Loading what="pages" />
  return (
    <ul className="plain small pages">
      {pages.data.pages.map((p) => {
        const href = safeHref(p.url)
        return (
          <li key={p.id}>
            {href ? (
              <a href={href} rel="noopener noreferrer nofollow" target="_blank">
                {p.title || p.url}
              </a>
            ) : (
              p.url
            )}{' '}
            <span className="muted">{p.status}</span>
          </li>
        )
      })}
      {pages.data.total > pages.data.pages.length && (
        <li className="muted">…and {pages.data.total - pages.data.pages.length} more</li>
      )}
    </ul>
  )
}

function ForgottenLog() {
  const log = useAsync(() => api.forgotten(100), [])
  return (
    <section aria-labelledby="forgotten-heading">
      <h2 id="forgotten-heading">Forgotten documents</h2>
      <p className="muted small">What auto-forget removed when its forget-after time passed. The content is never kept.</p>
      {log.error && <ErrorBox error={log.error} />}
      {log.data?.length === 0 && <p className="muted">Nothing forgotten yet.</p>}
      {log.data && log.data.length > 0 && (
        <table>
          <caption className="visually-hidden">Forgotten documents</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Document</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {log.data.map((r) => (
              <tr key={`${r.document_id}-${r.forgotten_at}`}>
                <td>{formatDate(r.forgotten_at)}</td>
                <td>
                  <code>{r.document_id}</code>
                </td>
                <td>{r.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
