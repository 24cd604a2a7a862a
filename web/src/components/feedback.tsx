import { OfflineError } from '../api'
import { readable } from '../messages'

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  )
}

export function ErrorBox({ error }: { error: Error | string }) {
  // The server not answering is said once, by the app's offline banner (OfflineBanner), not per request.
  // Every error the app shows is shown here, in words (no field-name prefix: messages.ts).
  if (error instanceof OfflineError) return null
  return (
    <p className="error" role="alert">
      {readable(typeof error === 'string' ? error : error.message)}
    </p>
  )
}

export function Notice({ children }: { children: React.ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  )
}

/** "Cannot reach memlane", once for the whole app, with a Retry that reloads what the page shows. */
export function OfflineBanner({ onRetry, checking }: { onRetry: () => void; checking: boolean }) {
  return (
    <div className="offline" role="alert" data-testid="offline">
      <p>
        <strong>Cannot reach memlane</strong> at {window.location.host}. Is the server running (
        <code>memlane serve</code>)?
      </p>
      <button type="button" onClick={onRetry} disabled={checking}>
        {checking ? 'Retrying…' : 'Retry'}
      </button>
    </div>
  )
}
