import { useCallback, useEffect, useRef, useState } from 'react'

export interface Async<T> {
  data?: T
  error?: Error
  loading: boolean
  reload: () => void
}

/** Runs `load` when `deps` change; a newer run's result replaces an older one, never the reverse. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true })
  const run = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load
  const reload = useCallback(() => {
    const mine = ++run.current
    setState((s) => ({ ...s, loading: true }))
    loadRef.current().then(
      (data) => mine === run.current && setState({ data, loading: false }),
      (error: Error) => mine === run.current && setState({ error, loading: false }),
    )
  }, [])
  useEffect(reload, deps) // eslint-disable-line react-hooks/exhaustive-deps
  return { ...state, reload }
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · memlane` : 'memlane'
  }, [title])
}
