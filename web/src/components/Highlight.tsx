/** Marks the query's words in a text, as React text nodes (never HTML). */
export function Highlight({ text, query }: { text: string; query: string }) {
  const words = [...new Set(query.toLowerCase().split(/\W+/u).filter((w) => w.length > 2))]
  if (words.length === 0) return <>{text}</>
  const pattern = new RegExp(`(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu')
  const parts = text.split(pattern)
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}
    </>
  )
}
