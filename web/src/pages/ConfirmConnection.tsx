import { useState } from 'react'
import { Link } from 'wouter'
import { api, ApiError, type ConnectionOut } from '../api'
import { ErrorBox, Loading, Notice } from '../components/feedback'
import { useAsync, useTitle } from '../hooks'

/** The one-time token the OAuth callback put in this page's address (?flow=…). */
function flowFromAddress(): string | null {
  const flow = new URLSearchParams(window.location.search).get('flow')
  return flow && flow.length <= 200 ? flow : null
}

/**
 * /connections/confirm?flow=…: a provider sent a connection's authorization back. Nothing is linked
 * until a signed-in member of the organization that started it confirms here; a member of another
 * organization who confirms cancels it (they were probably lured into consenting to someone else's
 * link). See memlane.connections.flow_binding.
 */
export function ConfirmConnection() {
  useTitle('Confirm a connection')
  const [flow] = useState(flowFromAddress)
  const who = useAsync(() => api.whoami(), [])
  const [done, setDone] = useState<ConnectionOut | null>(null)
  const [error, setError] = useState<Error | string | null>(null)
  const [busy, setBusy] = useState(false)

  async function confirm() {
    if (!flow) return
    setBusy(true)
    setError(null)
    try {
      setDone(await api.confirmConnection(flow))
    } catch (e) {
      setError(
        e instanceof ApiError && e.status === 403
          ? `${e.message}. If you did not start this connection yourself, nothing was linked.`
          : (e as Error),
      )
    } finally {
      setBusy(false)
      window.history.replaceState(null, '', '/connections/confirm') // the token is used: drop it
    }
  }

  return (
    <main id="main" className="page">
      <h1>Confirm a connection</h1>
      {!flow && !done && <ErrorBox error="This page needs the link the provider sent you back with." />}
      {who.loading && !who.data && <Loading what="your organization" />}
      {flow && who.data && !done && (
        <>
          <p>
            A provider has sent back the authorization for a connection. Confirm only if you started it: its content
            will be synced into <strong>{who.data.organization_name}</strong>.
          </p>
          <button type="button" onClick={confirm} disabled={busy}>
            Link it to {who.data.organization_name}
          </button>{' '}
          <Link href="/">Cancel</Link>
        </>
      )}
      {error && <ErrorBox error={error} />}
      {done && (
        <Notice>
          Connected: {done.name}
          {done.account ? ` (as ${done.account})` : ''}. Its first sync runs in the background.
        </Notice>
      )}
    </main>
  )
}
