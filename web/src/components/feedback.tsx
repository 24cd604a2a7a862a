export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  )
}

export function ErrorBox({ error }: { error: Error | string }) {
  return (
    <p className="error" role="alert">
      {typeof error === 'string' ? error : error.message}
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
