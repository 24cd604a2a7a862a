// Where the API key lives in the browser, and the one-time sign-in code exchange.
//
// The key is kept in this origin's localStorage. Another site can neither read it (storage is
// per origin) nor act with it: the browser never attaches it on its own, as it would a cookie, so
// a page elsewhere cannot make a request that carries it (no CSRF). What could read it is script
// running in this origin, which the Content-Security-Policy (scripts from the app's own files only,
// Trusted Types) and the rendering (no raw HTML, ever) rule out. localStorage rather than
// sessionStorage so that a memory opened from the browser extension, in a new tab, is signed in.
const KEY_STORAGE = 'memlane.apiKey'

export function getKey(): string | null {
  try {
    return window.localStorage.getItem(KEY_STORAGE)
  } catch {
    return null
  }
}

export function setKey(key: string): void {
  window.localStorage.setItem(KEY_STORAGE, key)
}

export function clearKey(): void {
  try {
    window.localStorage.removeItem(KEY_STORAGE)
  } catch {
    // storage unavailable: nothing was kept
  }
}

// Why this tab was signed out, for the sign-in page to say (per tab: sessionStorage).
const SIGNED_OUT_STORAGE = 'memlane.signedOut'

/** revoked: the server refused the key (revoked, or unknown to it); expired: a session that ended;
 * elsewhere: signed out in another tab; you: the Sign out button. */
export type SignOutReason = 'revoked' | 'expired' | 'elsewhere' | 'you'

export const SIGN_OUT_REASONS: Record<SignOutReason, string> = {
  revoked:
    'You were signed out: the server no longer accepts the API key this browser used (it was revoked, or ' +
    'the server has a new data directory). Sign in with the link `make run` prints, or paste an active key.',
  expired: 'Your session expired, so you were signed out. Sign in again to continue.',
  elsewhere: 'You were signed out in another tab.',
  you: 'You signed out. The API key is no longer kept in this browser.',
}

/** Forgets the key and remembers why, for the sign-in page. */
export function signOut(reason: SignOutReason): void {
  clearKey()
  try {
    window.sessionStorage.setItem(SIGNED_OUT_STORAGE, reason)
  } catch {
    // storage unavailable: the sign-in page says nothing about why
  }
}

/** Why this tab was signed out, or null. */
export function signOutReason(): SignOutReason | null {
  try {
    const reason = window.sessionStorage.getItem(SIGNED_OUT_STORAGE)
    return reason !== null && reason in SIGN_OUT_REASONS ? (reason as SignOutReason) : null
  } catch {
    return null
  }
}

/** Said once: the sign-in page forgets the reason after showing it, and on signing in. */
export function forgetSignOutReason(): void {
  try {
    window.sessionStorage.removeItem(SIGNED_OUT_STORAGE)
  } catch {
    // storage unavailable: nothing was kept
  }
}

/** Why a request's 401 signed the app out: a session that expired says so; any other refusal of the
 * key (revoked, unknown) is the key's. */
export function reasonOfRefusal(error: string): SignOutReason {
  return /\bexpired\b/i.test(error) ? 'expired' : 'revoked'
}

/** The code of a sign-in link (`/login#code=…`), removed from the address bar and history at once. */
export function takeSignInCode(): string | null {
  const hash = window.location.hash.replace(/^#/, '')
  if (!hash) return null
  const code = new URLSearchParams(hash).get('code')
  window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search)
  return code
}

/** Exchanges a one-time code (local server only) for the key; the code is in the body, never a URL. */
export async function redeemSignInCode(code: string): Promise<string> {
  const response = await fetch('/webapp/sign-in', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code }),
    credentials: 'omit',
    cache: 'no-store',
  })
  const payload = (await response.json().catch(() => ({}))) as { key?: string; error?: string }
  if (!response.ok || !payload.key) {
    throw new Error(payload.error ?? `sign-in link refused (HTTP ${response.status})`)
  }
  return payload.key
}

/** Where to go after signing in: only a path of this app, never another site (no open redirect). */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/'
  return next
}
