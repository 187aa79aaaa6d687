/**
 * Where a configuration's JSON goes wrong, by line and column, and what was expected there:
 * JSON.parse names no position for many errors (and quotes the whole text in others). A small
 * recursive-descent scan of RFC 8259 that also refuses a field named twice in one object, which
 * JSON.parse would silently resolve to the last (a person reading the first would be misled).
 */

/** A syntax problem: 1-based line and column, and what the text should have held there. */
export interface JsonSyntaxProblem {
  line: number
  column: number
  message: string
}

const WS = new Set([' ', '\t', '\n', '\r'])
const MAX_DEPTH = 64

class Scan {
  i = 0
  constructor(readonly text: string) {}

  fail(message: string, at = this.i): never {
    throw Object.assign(new Error(message), { at })
  }

  ws(): void {
    while (this.i < this.text.length && WS.has(this.text[this.i] as string)) this.i++
  }

  found(): string {
    if (this.i >= this.text.length) return 'the end of the file'
    return JSON.stringify(this.text.slice(this.i, this.i + 12))
  }

  value(depth: number): void {
    this.ws()
    const c = this.text[this.i]
    if (depth >= MAX_DEPTH && (c === '{' || c === '[')) this.fail(`expected at most ${MAX_DEPTH} levels of nesting`)
    if (c === '{') this.object(depth)
    else if (c === '[') this.array(depth)
    else if (c === '"') this.string()
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) this.number()
    else if (!['true', 'false', 'null'].some((w) => this.word(w)))
      this.fail(`expected a value (an object, array, string, number, true, false or null), found ${this.found()}`)
  }

  word(w: string): boolean {
    if (!this.text.startsWith(w, this.i)) return false
    this.i += w.length
    return true
  }

  object(depth: number): void {
    this.i++
    const seen = new Set<string>()
    this.ws()
    if (this.text[this.i] === '}') {
      this.i++
      return
    }
    for (;;) {
      this.ws()
      if (this.text[this.i] !== '"') this.fail(`expected a field name in double quotes, found ${this.found()}`)
      const at = this.i
      const name = this.string()
      if (seen.has(name)) this.fail(`the field ${JSON.stringify(name)} is given twice in one object`, at)
      seen.add(name)
      this.ws()
      if (this.text[this.i] !== ':') this.fail(`expected ":" after a field name, found ${this.found()}`)
      this.i++
      this.value(depth + 1)
      this.ws()
      this.close('}', 'a field')
      if (this.text[this.i - 1] === '}') return
    }
  }

  array(depth: number): void {
    this.i++
    this.ws()
    if (this.text[this.i] === ']') {
      this.i++
      return
    }
    for (;;) {
      this.value(depth + 1)
      this.ws()
      this.close(']', 'an element')
      if (this.text[this.i - 1] === ']') return
    }
  }

  /** Steps past the `,` or `close` after `what`, or fails naming what it found. */
  close(close: string, what: string): void {
    const c = this.text[this.i]
    if (c !== ',' && c !== close) this.fail(`expected "," or "${close}" after ${what}, found ${this.found()}`)
    this.i++
  }

  /** A string literal at `i`; returns its value (only names are used, so escapes decode via JSON.parse). */
  string(): string {
    const start = this.i++
    while (this.i < this.text.length) {
      const c = this.text[this.i] as string
      if (c === '"') {
        this.i++
        return JSON.parse(this.text.slice(start, this.i)) as string
      }
      if (c < ' ') this.fail('expected no raw control character inside a string (write it as an escape)')
      if (c === '\\') {
        const e = this.text[this.i + 1]
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6)))
            this.fail('expected four hex digits after \\u')
          this.i += 6
          continue
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e))
          this.fail('expected a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)')
        this.i += 2
        continue
      }
      this.i++
    }
    return this.fail('expected the string to end with "', start)
  }

  number(): void {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.i))
    if (m === null) this.fail(`expected a number, found ${this.found()}`)
    this.i += m[0].length
  }
}

/** The 1-based line and column of offset `at` in `text`. */
function position(text: string, at: number): { line: number; column: number } {
  const before = text.slice(0, at)
  const line = before.split('\n').length
  return { line, column: at - before.lastIndexOf('\n') }
}

/** The first syntax problem of `text` as JSON (a duplicate field counts), or undefined when it is well-formed. */
export function jsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  const scan = new Scan(text)
  try {
    scan.value(0)
    scan.ws()
    if (scan.i < text.length) scan.fail(`expected the end of the file after the value, found ${scan.found()}`)
    return undefined
  } catch (error) {
    const at = (error as { at?: number }).at
    if (at === undefined) throw error
    return { ...position(text, at), message: (error as Error).message }
  }
}
