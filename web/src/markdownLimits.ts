// What a memory may be before it is too costly to format as markdown. Memories are untrusted, and
// the markdown parser (micromark, inside react-markdown) recurses once per level of nesting and
// does quadratic work on unmatched inline delimiters within a paragraph: a 3 KB memory of
// `>`×3000 overflowed the stack and blanked the whole app ("Maximum call stack size exceeded"),
// 20,000 `*` either side of a word took minutes, `a]`×20,000 most of one. Such a memory is shown
// as plain text instead (still readable, still deletable), decided here before it is parsed.
//
// The limits, generous for anything written by a person (measured in jsdom, where parsing is
// slower than in a browser):
// - nesting: at most MAX_NESTING block quotes and list items open on one line (`> > - >` is 4),
//   and list items indented at most MAX_INDENT columns;
// - a run of one delimiter (`*`, `_`, `~`, `[`, `]`) at most MAX_RUN long (an 80-star separator
//   line is fine; 2,000 stars around a word took 1.5 s, 20,000 overflowed after three minutes);
// - outside fenced code, per paragraph, since the parser's work is quadratic there: the sum over
//   paragraphs of (brackets)² at most MAX_BRACKET_WORK (2,000 `]` in one paragraph: 0.3 s;
//   20,000: 55 s) and of (emphasis marks)² at most MAX_EMPHASIS_WORK (10,000 marks: about 1 s).

export const MAX_NESTING = 32
export const MAX_INDENT = 64
export const MAX_RUN = 256
export const MAX_BRACKET_WORK = 2_000 ** 2
export const MAX_EMPHASIS_WORK = 10_000 ** 2

const FENCE = /^ {0,3}(`{3,}|~{3,})/
const LIST_MARKER = /^(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/
const BRACKETS = /[[\]]/g
const EMPHASIS = /[*_~]/g
const LONG_RUN = new RegExp(`([*_~[\\]])\\1{${MAX_RUN},}`)

/** Nesting of one line: block quotes and list markers at its start, and the columns before them. */
function lineNesting(line: string): { depth: number; indent: number } {
  let depth = 0
  let indent = 0
  let i = 0
  while (i < line.length) {
    const ch = line[i]
    if (ch === ' ' || ch === '\t') {
      indent += ch === '\t' ? 4 : 1
      i += 1
    } else if (ch === '>') {
      depth += 1
      i += 1
    } else {
      const marker = LIST_MARKER.exec(line.slice(i, i + 12))
      if (!marker) break
      depth += 1
      i += marker[0].length
    }
  }
  return { depth, indent: depth > 0 ? indent : 0 }
}

class ParagraphWork {
  brackets = 0
  emphasis = 0
  bracketWork = 0
  emphasisWork = 0

  add(line: string) {
    this.brackets += line.match(BRACKETS)?.length ?? 0
    this.emphasis += line.match(EMPHASIS)?.length ?? 0
  }

  end() {
    this.bracketWork += this.brackets ** 2
    this.emphasisWork += this.emphasis ** 2
    this.brackets = this.emphasis = 0
  }

  get tooMuch(): boolean {
    return this.bracketWork + this.brackets ** 2 > MAX_BRACKET_WORK ||
      this.emphasisWork + this.emphasis ** 2 > MAX_EMPHASIS_WORK
  }
}

/** Why a line (outside fenced code) is too complex to format, or null. */
function lineProblem(line: string): string | null {
  const { depth, indent } = lineNesting(line)
  if (depth > MAX_NESTING) return `it nests ${depth} quotes or lists deep (at most ${MAX_NESTING} are formatted)`
  if (indent > MAX_INDENT) return `it indents a list ${indent} columns (at most ${MAX_INDENT} are formatted)`
  if (LONG_RUN.test(line)) return `it repeats a mark more than ${MAX_RUN} times in a row`
  return null
}

/** Why `text` is shown as plain text, or null when it may be formatted. */
export function tooComplexToFormat(text: string): string | null {
  let fence: string | null = null
  const work = new ParagraphWork()
  for (const line of text.split('\n')) {
    const opening = FENCE.exec(line)
    if (fence !== null) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = null
      continue
    }
    if (opening) {
      fence = opening[1]
      work.end()
      continue
    }
    const problem = lineProblem(line)
    if (problem) return problem
    if (line.trim() === '') {
      work.end()
      continue
    }
    work.add(line)
    if (work.tooMuch) return 'it holds more emphasis and link marks in one place than are formatted'
  }
  return null
}
