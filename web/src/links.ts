// Which links from a memory may be followed. A memory is untrusted input: only web and mail links
// become links; `javascript:`, `data:`, `vbscript:`, `file:` and anything relative are shown as
// plain text, never as something to click.
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:', 'mailto:'])

export function safeHref(raw: string | null | undefined): string | null {
  if (!raw) return null
  const value = raw.trim()
  // Browsers strip tabs and newlines from URLs ("java\tscript:"); URL() does the same, so check
  // the parsed protocol rather than the text.
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return null
  }
  return ALLOWED_PROTOCOLS.has(url.protocol) ? url.href : null
}
