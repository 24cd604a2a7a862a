// A search result's snippet: the best-matching part of a result's text, as plain text, bounded.
// Markdown is stripped (a result list shows what a memory says, not its syntax); the window of at
// most `max` characters holding the most query words is kept, cut at word boundaries.

export const SNIPPET_MAX = 300

/** Markdown (and stray HTML tags) to the plain text a reader sees. */
export function stripMarkdown(text: string): string {
  return text
    .replace(/```[^\n]*\n([\s\S]*?)```/g, '$1') // fences: keep the code
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images: their alt text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ') // tags
    .replace(/^\s{0,3}#{1,6}\s+/gm, '') // headings
    .replace(/^\s{0,3}>\s?/gm, '') // quotes
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/gm, '') // list markers, task boxes
    .replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$/gm, '') // table rules
    .replace(/\|/g, ' ')
    .replace(/^\s*(?:[-*_]\s*){3,}$/gm, '') // thematic breaks
    .replace(/(\*\*|__|~~)(.+?)\1/g, '$2')
    .replace(/(^|\W)[*_](\S(?:.*?\S)?)[*_](?=\W|$)/g, '$1$2')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

// Words every sentence has: marking them in a result says nothing about why it matched ("the" four
// times for "digits to open the bicycle padlock"). English, the language memlane's users write in.
export const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between
  both but by can could did do does doing done down during each few for from further had has have having he her here
  hers him his how into is it its itself just me more most my myself nor not now of off on once only or other our ours
  out over own same she should so some such than that the their theirs them then there these they this those through
  to too under until up very was we were what when where which while who whom why will with would you your yours
  yourself get got how's i'm it's let's that's what's where's who's don't can't won't isn't`.split(/\s+/),
)

/** The words of a query worth marking in a result: three letters or more, no stop words, each once. */
export function queryWords(query: string): string[] {
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}'’]+/u)
    .map((w) => w.replace(/^['’]+|['’]+$/gu, ''))
    .filter((w) => !STOP_WORDS.has(w.replace(/’/gu, "'")))
    .map((w) => w.replace(/['’]s$/u, '')) // "Aylin's" marks Aylin
  return [...new Set(words)].filter((w) => w.length > 2)
}

/** The part of `texts` (a result's chunks, best first) that best matches `query`, at most `max` chars. */
export function snippet(texts: string[], query: string, max = SNIPPET_MAX): string {
  const words = queryWords(query)
  let best = { text: '', start: 0, hits: -1 }
  for (const raw of texts) {
    const text = stripMarkdown(raw)
    const lower = text.toLowerCase()
    const positions: number[] = []
    for (const w of words) {
      for (let i = lower.indexOf(w); i >= 0; i = lower.indexOf(w, i + w.length)) positions.push(i)
    }
    positions.sort((a, b) => a - b)
    // the window of `max` characters starting a little before a hit that covers the most hits
    let start = 0
    let hits = 0
    for (let i = 0; i < positions.length; i++) {
      let j = i
      while (j < positions.length && positions[j] - positions[i] < max - 40) j++
      if (j - i > hits) {
        hits = j - i
        start = Math.max(0, positions[i] - 40)
      }
    }
    if (hits > best.hits) best = { text, start, hits }
  }
  const { text } = best
  let { start } = best
  if (text.length <= max) return text
  if (start + max > text.length) start = Math.max(0, text.length - max)
  if (start > 0) {
    const space = text.indexOf(' ', start)
    start = space >= 0 && space - start < 30 ? space + 1 : start
  }
  let end = Math.min(text.length, start + max - (start > 0 ? 1 : 0) - 1)
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end)
    end = space > start + max / 2 ? space : end
  }
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`
}
