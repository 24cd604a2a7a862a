import { queryWords } from '../snippet'

/** Marks the query's words in a text (not its stop words), as React text nodes (never HTML). */
export function Highlight({ text, query }: { text: string; query: string }) {
  const words = queryWords(query)
  if (words.length === 0) return <>{text}</>
  const pattern = new RegExp(`(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu')
  const parts = text.split(pattern)
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}
    </>
  )
}
