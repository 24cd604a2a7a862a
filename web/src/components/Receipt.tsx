// A deletion receipt (GET /v3/deletions/{id}): the stores the server read back after a delete and
// what each still holds. Everything in it came from the server and is shown as text only (ids,
// store names, counts); a receipt that is not verified says so first, naming the stores.
import { Link } from 'wouter'
import type { DeletionReceipt, StoreCheck } from '../api'
import { formatDate } from '../format'

const WHAT: Record<string, string> = {
  api: 'a memory (one version)',
  project: 'a project and its documents',
  docset: "a documentation set's pages",
  'auto-forget': 'a memory past its forget-after date',
  connection: "a connection's documents",
}

/** What the page that deleted something passes to the receipt's page (history state), shown above it. */
export interface DeletedState {
  deleted: string
  back: { href: string; label: string }
}

export const receiptPath = (receiptId: string): string => `/deletions/${encodeURIComponent(receiptId)}`

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** "content (2 items), text index (1 item)": the stores that still hold something. */
export function heldSummary(checks: StoreCheck[]): string {
  return checks
    .filter((c) => !c.clean)
    .map((c) => `${c.store} (${plural(c.remaining, 'item')})`)
    .join(', ')
}

export function Verdict({ receipt }: { receipt: DeletionReceipt }) {
  const docs = plural(receipt.documents.length, 'deleted document')
  if (receipt.verified) {
    return (
      <p className="notice" role="status" data-testid="receipt-verdict">
        Verified: all {receipt.checks.length} stores, read back after the delete, hold nothing of the {docs}.
      </p>
    )
  }
  return (
    <p className="warning" role="alert" data-testid="receipt-verdict">
      <strong>Not verified.</strong> Read back after the delete, these stores still hold something of the {docs}:{' '}
      {heldSummary(receipt.checks) || 'none named (the receipt lists no failing store)'}. What they hold may
      still be found there; the server logged this receipt as an error for its operator.
    </p>
  )
}

/** The whole receipt. Shown inline (`inline`: under its own heading, with a link to its page) or
 * as the receipt page's content (the page's heading names it). */
export function ReceiptView({ receipt, inline = false }: { receipt: DeletionReceipt; inline?: boolean }) {
  const headingId = `receipt-${receipt.id}`
  return (
    <section
      aria-labelledby={inline ? headingId : undefined}
      aria-label={inline ? undefined : 'Deletion receipt'}
      className="receipt"
      data-testid="receipt"
    >
      {inline && <h3 id={headingId}>Deletion receipt</h3>}
      <Verdict receipt={receipt} />
      <dl>
        <dt>Receipt</dt>
        <dd>
          <code data-testid="receipt-id">{receipt.id}</code>
          {inline && (
            <>
              {' '}
              <Link href={receiptPath(receipt.id)}>View this receipt on its own page</Link>
            </>
          )}
        </dd>
        <dt>What was deleted</dt>
        <dd>
          {WHAT[receipt.reason] ?? receipt.reason}
          {receipt.subject && (
            <>
              {' '}
              <span className="muted small">
                (id <code>{receipt.subject}</code>)
              </span>
            </>
          )}
        </dd>
        <dt>Documents</dt>
        <dd data-testid="receipt-documents">{receipt.documents.length}</dd>
        {/* a receipt from a server older than facts (issue 24) has no `facts` */}
        {(receipt.facts ?? []).length > 0 && (
          <>
            <dt>Facts removed with it</dt>
            <dd data-testid="receipt-facts">
              {plural((receipt.facts ?? []).length, 'fact')} drawn only from the deleted messages (counted above)
            </dd>
          </>
        )}
        <dt>Requested</dt>
        <dd>{formatDate(receipt.requested_at)}</dd>
        <dt>Verified</dt>
        <dd>{formatDate(receipt.verified_at)}</dd>
      </dl>
      <table data-testid="receipt-checks">
        <caption>Stores read back after the delete</caption>
        <thead>
          <tr>
            <th scope="col">Store</th>
            <th scope="col">What was read</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {receipt.checks.map((c) => (
            <tr key={c.store} className={c.clean ? undefined : 'held'}>
              <th scope="row">{c.store}</th>
              <td>{c.read}</td>
              <td>
                {c.clean ? (
                  'nothing left'
                ) : (
                  <>
                    <strong>still holds {plural(c.remaining, 'item')}</strong>
                    {c.holding.length > 0 && (
                      <span className="break">
                        {' '}
                        of {c.holding.length === 1 ? 'document' : 'documents'} <code>{c.holding.join(', ')}</code>
                      </span>
                    )}
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {receipt.documents.length > 0 && (
        <details>
          <summary>Ids of the {plural(receipt.documents.length, 'deleted document')}</summary>
          <ul className="plain small ids">
            {receipt.documents.map((d) => (
              <li key={d}>
                <code>{d}</code>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  )
}
