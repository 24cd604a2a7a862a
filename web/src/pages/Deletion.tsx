import { Link } from 'wouter'
import { useHistoryState } from 'wouter/use-browser-location'
import { api, ApiError } from '../api'
import { ErrorBox, Loading, Notice } from '../components/feedback'
import { type DeletedState, ReceiptView } from '../components/Receipt'
import { useAsync, useTitle } from '../hooks'

function deletedState(state: unknown): DeletedState | null {
  if (!state || typeof state !== 'object') return null
  const { deleted, back } = state as Partial<DeletedState>
  if (typeof deleted !== 'string' || !back || typeof back.href !== 'string' || typeof back.label !== 'string') return null
  return { deleted, back: { href: /^\/(?!\/)/.test(back.href) ? back.href : '/', label: back.label } }
}

/** /deletions/<id>: a deletion receipt, as GET /v3/deletions/{id} reads it back. */
export function DeletionPage({ id }: { id: string }) {
  const receipt = useAsync(() => api.deletion(id), [id])
  const just = deletedState(useHistoryState())
  useTitle(receipt.data ? (receipt.data.verified ? 'Deletion verified' : 'Deletion NOT verified') : 'Deletion receipt')
  return (
    <main id="main" className="page">
      <h1>Deletion receipt</h1>
      {just && (
        <Notice>
          Deleted {just.deleted}. <Link href={just.back.href}>{just.back.label}</Link>
        </Notice>
      )}
      {receipt.loading && !receipt.data && <Loading what="deletion receipt" />}
      {receipt.error && (
        <ErrorBox
          error={
            receipt.error instanceof ApiError && receipt.error.status === 404
              ? 'There is no deletion receipt with this id in your organization.'
              : receipt.error
          }
        />
      )}
      {receipt.data && <ReceiptView receipt={receipt.data} />}
    </main>
  )
}
