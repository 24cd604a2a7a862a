import { useEffect, useRef, useState } from 'react'
import { useLocation, useSearch } from 'wouter'
import { api } from '../api'
import {
  clearKey,
  forgetSignOutReason,
  redeemSignInCode,
  SIGN_OUT_REASONS,
  safeNext,
  setKey,
  signOutReason,
  takeSignInCode,
} from '../auth'
import { ErrorBox, Notice } from '../components/feedback'
import { useTitle } from '../hooks'

export function Login({ onSignedIn }: { onSignedIn: () => void }) {
  useTitle('Sign in')
  const [, navigate] = useLocation()
  const search = useSearch()
  const next = safeNext(new URLSearchParams(search).get('next'))
  const [key, setKeyText] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [signedOut] = useState(signOutReason) // why this tab came here signed out
  const started = useRef(false)
  useEffect(forgetSignOutReason, []) // said once

  const finish = async (secret: string) => {
    setKey(secret)
    try {
      await api.whoami() // proves the key before the app relies on it
    } catch (e) {
      clearKey()
      forgetSignOutReason() // the refusal is said here, by the error below the form
      throw e
    }
    forgetSignOutReason()
    onSignedIn()
    navigate(next, { replace: true })
  }

  useEffect(() => {
    if (started.current) return // StrictMode runs effects twice; a code works only once
    started.current = true
    const code = takeSignInCode()
    if (!code) return
    setBusy(true)
    redeemSignInCode(code)
      .then(finish)
      .catch((e: Error) => setError(e.message))
      .finally(() => setBusy(false))
  }, []) // eslint-disable-line react-hooks/exhaustive-deps

  const submit = async (event: React.FormEvent) => {
    event.preventDefault()
    setError(null)
    const secret = key.trim()
    if (!secret) {
      setError('Paste the API key `make run` printed, or one created in Settings.')
      return
    }
    setBusy(true)
    try {
      await finish(secret)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <main id="main" className="login">
      <h1>Sign in to memlane</h1>
      {signedOut && !error && <Notice>{SIGN_OUT_REASONS[signedOut]}</Notice>}
      <p>
        Open the sign-in link <code>make run</code> prints, or paste an API key. The key stays in this browser only
        until you sign out.
      </p>
      <form onSubmit={submit} className="stack">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder="mlk_…"
          value={key}
          onChange={(e) => setKeyText(e.target.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error && <ErrorBox error={error} />}
    </main>
  )
}
