// A strict reader for the SBPL cordon writes, independent of the writer: s-expressions, `;`
// comments, "strings" whose only escapes are \\ and \", and #"regex" literals. Anything else
// (an unknown escape, an unterminated string, an unbalanced parenthesis) is an error, so a path
// that broke out of its string would show up as a parse failure or a changed tree.

/** One datum of a profile. */
export type Sexp =
  | { kind: 'list'; items: Sexp[] }
  | { kind: 'string'; value: string }
  | { kind: 'regex'; value: string }
  | { kind: 'atom'; value: string }

/** Every top-level form of `text`; throws on anything the writer never produces. */
export function readSbpl(text: string): Sexp[] {
  const top: Sexp[] = []
  const stack: Sexp[][] = [top]
  let i = 0
  const current = () => stack[stack.length - 1]!
  while (i < text.length) {
    const c = text[i]!
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r') {
      i++
    } else if (c === ';') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '(') {
      const list: Sexp = { kind: 'list', items: [] }
      current().push(list)
      stack.push(list.items)
      i++
    } else if (c === ')') {
      if (stack.length === 1) throw new Error(`unbalanced ")" at ${i}`)
      stack.pop()
      i++
    } else if (c === '"') {
      let value = ''
      i++
      for (;;) {
        if (i >= text.length) throw new Error('unterminated string')
        const d = text[i]!
        if (d === '"') break
        if (d === '\\') {
          const e = text[i + 1]
          if (e !== '\\' && e !== '"') throw new Error(`unknown escape \\${e ?? 'EOF'} at ${i}`)
          value += e
          i += 2
        } else {
          value += d
          i++
        }
      }
      i++
      current().push({ kind: 'string', value })
    } else if (c === '#' && text[i + 1] === '"') {
      const end = text.indexOf('"', i + 2)
      if (end < 0) throw new Error('unterminated regex')
      current().push({ kind: 'regex', value: text.slice(i + 2, end) })
      i = end + 1
    } else {
      let value = ''
      while (i < text.length && !' \n\t\r();"'.includes(text[i]!)) value += text[i++]
      current().push({ kind: 'atom', value })
    }
  }
  if (stack.length !== 1) throw new Error(`unbalanced: ${stack.length - 1} "(" left open`)
  return top
}

/** The operations cordon's profiles may name: anything else is a typo or a widening. */
export const KNOWN_OPERATIONS = new Set([
  'default',
  'file-read*',
  'file-read-metadata',
  'file-read-data',
  'file-test-existence',
  'file-map-executable',
  'file-write*',
  'file-write-data',
  'file-write-unlink',
  'file-ioctl',
  'process-exec',
  'process-fork',
  'process-info*',
  'signal',
  'pseudo-tty',
  'sysctl-read',
  'user-preference-read',
  'ipc-posix-sem',
  'mach-lookup',
  'network*',
  'system-socket',
])

/** Operations a cordon profile must never allow. */
export const NEVER_ALLOWED = ['file-link', 'file-clone', 'sysctl-write', 'mach-register', 'file-write-mount']

// Filters and what each holds: strings, a regex, a target atom, or nested filters.
const FILTERS: Record<string, 'string' | 'regex' | 'target' | 'filters'> = {
  literal: 'string',
  subpath: 'string',
  'global-name': 'string',
  extension: 'string',
  regex: 'regex',
  target: 'target',
  'require-all': 'filters',
  'require-any': 'filters',
  'require-not': 'filters',
}

/** Every structural problem of a parsed profile (empty when it is well-formed cordon SBPL). */
export function profileProblems(forms: readonly Sexp[]): string[] {
  const problems: string[] = []
  const [version, deny, ...rules] = forms
  if (!isForm(version, ['version', '1'])) problems.push('the first form must be (version 1)')
  if (!isForm(deny, ['deny', 'default'])) problems.push('the second form must be (deny default)')
  for (const [index, rule] of rules.entries()) {
    if (rule.kind !== 'list') {
      problems.push(`form ${index + 2}: not a list`)
      continue
    }
    const [head, ...rest] = rule.items
    if (head?.kind !== 'atom' || (head.value !== 'allow' && head.value !== 'deny')) {
      problems.push(`form ${index + 2}: must start with allow or deny`)
      continue
    }
    const ops = rest.filter((x) => x.kind === 'atom')
    const filters = rest.filter((x) => x.kind !== 'atom')
    if (ops.length === 0) problems.push(`form ${index + 2}: names no operation`)
    const firstFilter = rest.findIndex((x) => x.kind !== 'atom')
    if (firstFilter >= 0 && rest.slice(firstFilter).some((x) => x.kind === 'atom')) {
      problems.push(`form ${index + 2}: an operation after a filter`)
    }
    for (const op of ops) {
      const name = (op as { value: string }).value
      if (!KNOWN_OPERATIONS.has(name)) problems.push(`form ${index + 2}: unknown operation ${name}`)
      if (head.value === 'allow' && NEVER_ALLOWED.includes(name)) problems.push(`form ${index + 2}: allows ${name}`)
    }
    for (const f of filters) filterProblems(f, `form ${index + 2}`, problems)
  }
  return problems
}

function filterProblems(f: Sexp, where: string, problems: string[]): void {
  if (f.kind !== 'list' || f.items[0]?.kind !== 'atom') {
    problems.push(`${where}: a filter must be a list headed by a name`)
    return
  }
  const name = f.items[0].value
  const args = f.items.slice(1)
  const shape = FILTERS[name]
  if (shape === undefined) {
    problems.push(`${where}: unknown filter ${name}`)
  } else if (shape === 'filters') {
    if (args.length === 0 || (name === 'require-not' && args.length !== 1)) problems.push(`${where}: ${name} arity`)
    for (const a of args) filterProblems(a, where, problems)
  } else if (shape === 'target') {
    if (args.length !== 1 || args[0]?.kind !== 'atom' || args[0].value !== 'same-sandbox') {
      problems.push(`${where}: target must be same-sandbox`)
    }
  } else if (args.length !== 1 || args[0]?.kind !== shape) {
    problems.push(`${where}: ${name} takes one ${shape}`)
  }
}

function isForm(x: Sexp | undefined, atoms: readonly string[]): boolean {
  return (
    x?.kind === 'list' &&
    x.items.length === atoms.length &&
    x.items.every((item, i) => item.kind === 'atom' && item.value === atoms[i])
  )
}

/** Every string datum of the forms, in order. */
export function stringsOf(forms: readonly Sexp[]): string[] {
  return forms.flatMap((f) => (f.kind === 'string' ? [f.value] : f.kind === 'list' ? stringsOf(f.items) : []))
}

/** The forms with every string replaced by one marker: the profile's shape, whatever its paths. */
export function skeleton(forms: readonly Sexp[]): unknown[] {
  return forms.map((f) => (f.kind === 'string' ? '<string>' : f.kind === 'list' ? skeleton(f.items) : f.value))
}
