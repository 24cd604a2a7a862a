// The API names the field each error is about, for programs: `title: must be at most 500
// characters`, `code: this sign-in link was already used…`, `messages.0.content: …`. A person reads
// words, not field names: the app shows `Title must be at most 500 characters` and `This sign-in
// link was already used…` instead. This is the one place that wording is changed.

// "<field>: <problem>", the field a dotted path of names and indexes (`metadata.tags`, `messages.0`).
const FIELD_PREFIX = /^([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*): (.+)$/s
// A problem that reads as a sentence about the field: "Title must…", "Name is…".
const ABOUT_THE_FIELD = /^(must|is|are|has|have|cannot|can't|should|exceeds|needs|was|were|does|do|matches) /
// Fields whose own name says nothing to a person.
const LABELS: Record<string, string> = {
  baseUrl: 'Site URL',
  seedSlug: 'Start page',
  q: 'Search',
  query: 'Search',
  project_id: 'Project',
  forget_after: 'Forget after',
  key_id: 'Key',
}

function label(field: string): string {
  const names = field.split('.').filter((part) => !/^\d+$/.test(part))
  const last = names[names.length - 1] ?? field
  if (LABELS[last]) return LABELS[last]
  const words = last.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase()
  return capitalize(words)
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

// Several problems come joined by "; ", each naming its own field.
const NEXT_FIELD = /; (?=[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*: )/

function one(part: string): string {
  const match = FIELD_PREFIX.exec(part.trim())
  if (!match) return capitalize(part.trim())
  const [, field, problem] = match
  return ABOUT_THE_FIELD.test(problem) ? `${label(field)} ${problem}` : capitalize(problem)
}

/** A server's message for a person: no field-name prefix, each problem starting with a capital. */
export function readable(message: string): string {
  return message.split(NEXT_FIELD).map(one).join('; ')
}
