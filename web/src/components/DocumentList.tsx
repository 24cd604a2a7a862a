import { Link } from 'wouter'
import type { DocumentListItem } from '../api'
import { formatDate } from '../format'

export function DocumentList({ documents }: { documents: DocumentListItem[] }) {
  return (
    <ol className="cards" data-testid="document-list">
      {documents.map((d) => (
        <li key={d.id} className="card">
          <h3 dir="auto">
            <Link href={`/memories/${d.id}`}>{d.title}</Link>
            {d.status !== 'ready' && <span className={`badge status-${d.status}`}>{d.status}</span>}
          </h3>
          {d.summary && <p className="summary">{d.summary}</p>}
          <p className="muted small">
            <time dateTime={d.created_at}>{formatDate(d.created_at)}</time> · {d.content_type}
            {d.tags.length > 0 && <> · {d.tags.join(', ')}</>}
          </p>
        </li>
      ))}
    </ol>
  )
}
